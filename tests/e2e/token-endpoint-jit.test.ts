/**
 * A server crash any anonymous client could cause (found by `bun run bench`): the token
 * endpoint's check of a grant's required parameters, once JavaScriptCore's FTL tier had optimized
 * it on thousands of requests of known grants, segfaulted the process (Bun 1.4.5, "Segmentation
 * fault at address 0x5") at the first thousands of requests naming a grant it does not know.
 * src/oauth/token/index.ts checkParameters is written so that it does not; this drives the
 * compiled binary the way that crashed it (25,000 then 10,000 requests, no client needed) and
 * asks every answer and the server's health after.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { join } from 'node:path'
import { startBinary, type RunningBinary } from './server'

setDefaultTimeout(120_000)

let server: RunningBinary

beforeAll(async () => {
  // About the process, not the database: SQLite in its folder on either pass (no PostgreSQL round trip per request).
  const dir = (await import('node:fs')).mkdtempSync(join((await import('node:os')).tmpdir(), 'latchkey-jit-'))
  server = await startBinary({ LOG_LEVEL: 'warn', DATABASE_URL: join(dir, 'latchkey.sqlite') }, dir)
})
afterAll(() => server?.cleanup())

/** POSTs `body` `count` times, 16 at a time; how many answers were each "status error". */
async function post(body: string, count: number): Promise<Map<string, number>> {
  const answers = new Map<string, number>()
  let sent = 0
  const worker = async () => {
    while (sent < count) {
      sent++
      const res = await fetch(`${server.direct}/api/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body })
      const { error } = (await res.json()) as { error: string }
      const key = `${res.status} ${error}`
      answers.set(key, (answers.get(key) ?? 0) + 1)
    }
  }
  await Promise.all(Array.from({ length: 16 }, worker))
  return answers
}

test('25,000 token requests of a known grant, then 10,000 of an unknown one: each answered as the RFC says, and the server still up', async () => {
  expect(await post('grant_type=refresh_token&refresh_token=x&client_id=nope', 25_000)).toEqual(new Map([['401 invalid_client', 25_000]]))
  expect(await post('grant_type=nope', 10_000)).toEqual(new Map([['401 invalid_client', 10_000]]))
  expect((await fetch(`${server.direct}/healthz`)).status).toBe(200)
  expect(server.proc.exitCode).toBeNull()
})
