/** Small real image files for the brand and app-logo tests, written to a temporary folder. */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

// A 1×1 PNG and a 1×1 WebP (lossy), real files any browser draws.
export const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64')
export const WEBP = Buffer.from('UklGRiQAAABXRUJQVlA4IBgAAAAwAQCdASoBAAEAAwA0JaQAA3AA/vuUAAA=', 'base64')
// An ICO header (one 1×1 entry) is enough for the sniff.
export const ICO = Buffer.from([0, 0, 1, 0, 1, 0, 1, 1, 0, 0, 1, 0, 32, 0, 0, 0, 0, 0, 22, 0, 0, 0])
export const GIF = Buffer.from('R0lGODlhAQABAAAAACw=', 'base64')
/** A logo an operator might draw: a wordmark, with a script that must never run. */
export const svg = (label: string, fill = '#1f4fc2') =>
  Buffer.from(
    `<?xml version="1.0" encoding="UTF-8"?>\n<!-- logo -->\n<svg xmlns="http://www.w3.org/2000/svg" width="200" height="48" viewBox="0 0 200 48"><script>parent.hacked = 1</script><rect width="48" height="48" rx="10" fill="${fill}"/><text x="60" y="32" font-family="sans-serif" font-size="24" fill="${fill}">${label}</text></svg>`,
  )

/** `files` written to a fresh folder; their paths by name. */
export function writeFiles(files: Record<string, Uint8Array | string>): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-brand-'))
  return Object.fromEntries(
    Object.entries(files).map(([name, bytes]) => {
      const path = join(dir, name)
      writeFileSync(path, bytes)
      return [name, path]
    }),
  )
}
