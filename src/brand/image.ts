/**
 * An image's type from its bytes, never from a file name or a declared Content-Type (SPEC "Brand
 * and language"): PNG, WebP and ICO by their magic numbers, SVG by a sniff of its text.
 */
export type ImageType = 'image/png' | 'image/webp' | 'image/svg+xml' | 'image/x-icon'

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
const startsWith = (bytes: Uint8Array, magic: readonly number[], at = 0) => magic.every((b, i) => bytes[at + i] === b)
const ascii = (s: string) => [...s].map((c) => c.charCodeAt(0))

/**
 * SVG: UTF-8 text whose first element is `<svg` — after an optional BOM, XML declaration,
 * comments, processing instructions and a DOCTYPE (without an internal subset: entities are how
 * XML bombs are built, so such a file is not taken).
 */
function isSvg(bytes: Uint8Array): boolean {
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    return false
  }
  const prolog = /^\uFEFF?(?:\s+|<\?[^]*?\?>|<!--[^]*?-->|<!DOCTYPE\s+svg[^<>\[]*>)*/i.exec(text)![0]
  return /^<svg[\s>]/.test(text.slice(prolog.length))
}

/** The type of `bytes` if it is one of `allowed`, else null. */
export function imageTypeOf(bytes: Uint8Array, allowed: readonly ImageType[]): ImageType | null {
  const found: ImageType | null = startsWith(bytes, PNG)
    ? 'image/png'
    : startsWith(bytes, ascii('RIFF')) && startsWith(bytes, ascii('WEBP'), 8)
      ? 'image/webp'
      : startsWith(bytes, [0, 0, 1, 0]) && bytes.length >= 6
        ? 'image/x-icon'
        : isSvg(bytes)
          ? 'image/svg+xml'
          : null
  return found && allowed.includes(found) ? found : null
}

/** The names people know the types by, for messages: "PNG, WebP or SVG". */
export function typeNames(allowed: readonly ImageType[]): string {
  const names = allowed.map((t) => ({ 'image/png': 'PNG', 'image/webp': 'WebP', 'image/svg+xml': 'SVG', 'image/x-icon': 'ICO' })[t])
  return names.length > 1 ? `${names.slice(0, -1).join(', ')} or ${names.at(-1)}` : names[0]!
}

/**
 * The headers an uploaded image is served with: its own type, never sniffed; an SVG is a document
 * that could carry script, so its own CSP lets nothing run (only inline style, which SVGs use).
 */
export function imageHeaders(type: ImageType, etag: string, cacheControl: string): Record<string, string> {
  return {
    'content-type': type,
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
    'x-content-type-options': 'nosniff',
    'cache-control': cacheControl,
    etag: `"${etag}"`,
  }
}
