/**
 * Settings sync across two instances on one PostgreSQL database behind Debian's haproxy (issue
 * 22): streams held on one instance hear the other's writes, revisions stay gap-free under racing
 * writes, a killed instance's readers resume through the balancer, revocations reach every
 * instance, streams opened all at once keep each instance's limit exactly (issue 33). PostgreSQL pass only — SQLite is one process's database by design (its twins are in
 * tests/e2e/settings-sync.test.ts and tests/settings/sync.test.ts).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { startHaproxy, type Balancer } from '../haproxy'
import { freshPgDatabase } from '../pg-store'
import { SseReader, type SseEvent } from '../settings/sse'
import { testEngine } from '../store'
import { until } from '../wait'
import { discover, obtainToken, registerClient, registerUser } from './flow'
import { freePort, startBinary, type RunningBinary } from './server'

setDefaultTimeout(120_000)

const onPostgres = testEngine === 'postgres'
let a: RunningBinary
let b: RunningBinary
let lb: Balancer
let through: RunningBinary
let client: { client_id: string; client_secret: string | null }
let user = 0
/** Each instance's /metrics (its open streams: latchkey_settings_streams_open). */
let metrics: string[] = []

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

beforeAll(async () => {
  if (!onPostgres) return
  const databaseUrl = await freshPgDatabase()
  const lbPort = await freePort()
  const env = { DATABASE_URL: databaseUrl, ISSUER: `http://127.0.0.1:${lbPort}`, LOGIN_ATTEMPTS_PER_MINUTE: '1000' }
  ;[a, b] = await Promise.all([startBinary(env, undefined, { metrics: true }), startBinary(env, undefined, { metrics: true })])
  metrics = [a.metricsUrl!, b.metricsUrl!]
  lb = await startHaproxy(lbPort, [a, b].map((s) => new URL(s.url).host))
  through = { ...a, url: lb.url }
  client = registerClient(through, ['--skip-consent'])
})

afterAll(() => {
  if (!onPostgres) return
  lb?.stop()
  a?.cleanup()
  b?.cleanup()
})

/** A new user's token for the app (each test its own user: their revisions start at 1). */
async function newToken(): Promise<string> {
  const email = `sync${++user}@example.com`
  registerUser(through, email)
  return (await obtainToken(through, await discover(through), client, email, 'settings:read settings:write')).access_token
}

const write = (server: { url: string }, token: string, key: string, value: unknown) =>
  fetch(`${server.url}/api/settings`, { method: 'POST', headers: { ...bearer(token), 'content-type': 'application/json' }, body: JSON.stringify({ client_id: client.client_id, key, value }) })

const revoke = (token: string) =>
  fetch(`${a.url}/api/oauth/revoke`, {
    method: 'POST',
    headers: { authorization: `Basic ${btoa(`${client.client_id}:${client.client_secret}`)}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token }),
  })

const openStream = async (server: { url: string }, token: string, lastEventId?: string) =>
  new SseReader(await fetch(`${server.url}/api/settings-events`, { headers: { ...bearer(token), ...(lastEventId ? { 'last-event-id': lastEventId } : {}) } }))

describe.skipIf(!onPostgres)('settings sync on two instances behind haproxy', () => {
  test('a write through A arrives on a stream held on B, within milliseconds', async () => {
    const token = await newToken()
    const held = await openStream(b, token)
    const started = performance.now()
    expect((await write(a, token, 'theme', 'dark')).status).toBe(200)
    const event = await held.next(3000)
    const ms = performance.now() - started
    expect(event).toMatchObject({ id: '1', event: 'set' })
    expect(JSON.parse(event!.data!)).toMatchObject({ key: 'theme', value: 'dark' })
    expect(ms).toBeLessThan(1000)
    await held.cancel()
  })

  test('1,000 racing writes over both instances get revisions 1..1000, no gap, no repeat; a stream on B hears each in order', async () => {
    const token = await newToken()
    const held = await openStream(b, token)
    let next = 0
    const worker = async () => {
      while (next < 1000) {
        const i = next++
        const res = await write(i % 2 ? a : b, token, `k${i}`, i)
        if (res.status !== 200) throw new Error(`write ${i}: ${res.status}`)
      }
    }
    await Promise.all(Array.from({ length: 32 }, worker))
    // Each key was written once: the revisions its rows carry are every number from 1 to 1000.
    const mine = (await a.query('SELECT s.revision FROM settings s JOIN users u ON u.id = s.user_id WHERE u.email = ? ORDER BY s.revision', `sync${user}@example.com`)).map((r) => Number(r.revision))
    expect(mine).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1))
    const ids = (await held.collect((e) => e.id === '1000', 15_000)).map((e) => Number(e.id))
    expect(ids).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1))
    await held.cancel()
  })

  test('revoking the token on A ends its stream on B within a second', async () => {
    const token = await newToken()
    const held = await openStream(b, token)
    const started = performance.now()
    const revoked = await revoke(token)
    expect(revoked.status).toBe(200)
    expect(await held.collect((e) => e.event === 'end', 3000)).toEqual([{ event: 'end', data: '{"reason":"revoked"}' }])
    expect(performance.now() - started).toBeLessThan(1000)
  })

  test('100 streams of one user opened at once through haproxy: exactly 20 per instance, the rest 429 with Retry-After', async () => {
    const token = await newToken()
    const answers = await Promise.all(Array.from({ length: 100 }, () => fetch(`${lb.url}/api/settings-events`, { headers: bearer(token) })))
    const opened = answers.filter((r) => r.status === 200)
    const refused = answers.filter((r) => r.status !== 200)
    const open = async () =>
      Promise.all(metrics.map(async (url) => Number(/^latchkey_settings_streams_open (\d+)$/m.exec(await (await fetch(url)).text())![1])))
    const perInstance = await open()
    try {
      // Round-robin sends each instance about 50: each lets exactly its 20 through.
      expect(perInstance).toEqual([20, 20])
      expect(opened.length).toBe(40)
      expect(opened.every((r) => r.headers.get('content-type') === 'text/event-stream')).toBe(true)
      expect(refused.map((r) => r.status)).toEqual(Array(60).fill(429))
      for (const r of refused) {
        expect(r.headers.get('retry-after')).toBe('10')
        expect(((await r.json()) as { error: string }).error).toBe('too_many_requests')
      }
    } finally {
      await Promise.all(opened.map((r) => r.body!.cancel()))
      // A reader gone behind haproxy is noticed at the next write; revoking the token ends every stream at once.
      await revoke(token)
    }
    // Ended streams give their slots back on both instances.
    for (const deadline = Date.now() + 5000; (await open()).some((n) => n !== 0) && Date.now() < deadline; ) await Bun.sleep(50)
    expect(await open()).toEqual([0, 0])
  })

  test('kill -9 of an instance holding streams: readers reconnect through the balancer with Last-Event-ID and lose nothing', async () => {
    const token = await newToken()
    /** A reader as EventSource is: on an end or a broken connection, it reconnects with the last id it saw. */
    const reader = () => {
      const seen: string[] = []
      let stop = false
      let opened = 0
      const run = (async () => {
        while (!stop) {
          try {
            // From revision 0 the first time (a client that kept its revision), then from the last id seen.
            const stream = await openStream(lb, token, seen.at(-1) ?? '0')
            opened++
            for (;;) {
              const e: SseEvent | undefined = await stream.next(30_000)
              if (!e || e.event === 'end') break
              if (e.id) seen.push(e.id)
              if (seen.length === 200) return
            }
          } catch {}
          await Bun.sleep(100) // the pause before reconnecting, as EventSource's `retry` (not a wait for an event)
        }
      })()
      return { seen, done: run, stop: () => (stop = true), opened: () => opened }
    }
    // Two readers through round-robin: one lands on each instance.
    const readers = [reader(), reader()]
    await until(() => readers.every((r) => r.opened() > 0), 'both readers streaming')
    for (let i = 0; i < 100; i++) expect((await write(b, token, `k${i}`, i)).status).toBe(200)
    expect(await a.stop('SIGKILL')).not.toBe(0)
    for (let i = 100; i < 200; i++) expect((await write(b, token, `k${i}`, i)).status).toBe(200)
    const deadline = setTimeout(() => readers.forEach((r) => r.stop()), 20_000)
    await Promise.all(readers.map((r) => r.done))
    clearTimeout(deadline)
    for (const r of readers) expect(r.seen.map(Number)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1))
  })
})
