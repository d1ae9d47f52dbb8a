import { rmSync } from 'node:fs'
import { afterAll } from 'bun:test'

// The suite runs Elysia in production mode, as the shipped binary does (src/boot.ts): Elysia
// reads NODE_ENV once, when it loads, and its development mode builds validation messages that
// the binary never builds.
process.env.NODE_ENV = 'production'

// Folders the whole run shares (the compiled binary's copy, 118 MB: tests/e2e/server.ts), removed
// when the last test file has run; an afterAll in a preloaded file runs once, after every file.
const shared: string[] = ((globalThis as { latchkeyRunFolders?: string[] }).latchkeyRunFolders ??= [])
afterAll(() => {
  for (const dir of shared.splice(0)) rmSync(dir, { recursive: true, force: true })
})
