import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { testEngine } from '../store'
import { type RunningBinary, startBinary } from './server'

// Spawns the binary twice and drives a write load: slower than in-process tests.
setDefaultTimeout(60_000)

/**
 * An acknowledged write is on disk: kill -9 the server in the middle of a write load, start it
 * again on the same file, and every key acknowledged with 200 reads back with its value, and
 * every acknowledged delete stays deleted.
 */
// Many sign-ins from one address are part of the drain test, not an attack.
const ENV = { SETTINGS_MAX_KEYS: '1000000', LOGIN_ATTEMPTS_PER_MINUTE: '1000' }
let server: RunningBinary
let token: string
let clientId: string

beforeAll(async () => {
  server = await startBinary(ENV)
  clientId = JSON.parse(server.cli(['client', 'create', '--name', 'Load', '--redirect-uri', 'http://127.0.0.1:9/cb', '--skip-consent']).out).client_id
  const secret = JSON.parse(server.cli(['client', 'rotate-secret', clientId]).out).client_secret
  server.cli(['user', 'create', '--email', 'load@example.com', '--name', 'Load', '--password-stdin'], 'load password\n')
  token = await tokenFor(server, clientId, secret)
})
afterAll(() => server.cleanup())

async function tokenFor(s: RunningBinary, id: string, secret: string): Promise<string> {
  const jar: string[] = []
  const login = await fetch(`${s.url}/login`)
  jar.push(...login.headers.getSetCookie().map((c) => c.split(';')[0]!))
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(await login.text())![1]!
  const signed = await fetch(`${s.url}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: jar.join('; '), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email: 'load@example.com', password: 'load password', csrf_token: csrf }),
  })
  jar.push(...signed.headers.getSetCookie().map((c) => c.split(';')[0]!))
  const auth = await fetch(
    `${s.url}/oauth/authorize?client_id=${id}&redirect_uri=${encodeURIComponent('http://127.0.0.1:9/cb')}&scope=settings:read%20settings:write`,
    { redirect: 'manual', headers: { cookie: jar.join('; ') } },
  )
  const code = new URL(auth.headers.get('location')!).searchParams.get('code')!
  const res = await fetch(`${s.url}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'authorization_code', code, client_id: id, client_secret: secret, redirect_uri: 'http://127.0.0.1:9/cb' }),
  })
  return ((await res.json()) as { access_token: string }).access_token
}

describe('durability (synchronous=FULL, group commit)', () => {
  test('kill -9 during a write load loses no acknowledged write or delete', async () => {
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
    const post = (key: string, value: unknown) =>
      fetch(`${server.url}/api/settings`, { method: 'POST', headers, body: JSON.stringify({ client_id: clientId, key, value }) })
    // Keys that deletes can remove during the load.
    for (let i = 0; i < 40; i++) expect((await post(`old${i}`, i)).status).toBe(200)

    const acknowledged = new Map<string, unknown>()
    const deleted = new Set<string>()
    let stop = false
    const worker = async (w: number) => {
      for (let i = 0; !stop; i++) {
        try {
          if (i % 5 === 4 && i / 5 < 8) {
            const key = `old${w * 8 + Math.floor(i / 5)}`
            const res = await fetch(`${server.url}/api/settings/${key}?client_id=${clientId}`, { method: 'DELETE', headers })
            if (res.status === 200) deleted.add(key)
          } else {
            const key = `w${w}-${i}`
            const value = { w, i, tags: ['x', i % 7] }
            const res = await post(key, value)
            if (res.status === 200) acknowledged.set(key, value)
          }
        } catch {
          return // the server was killed mid-request: not acknowledged
        }
      }
    }
    const load = Promise.all(Array.from({ length: 5 }, (_, w) => worker(w)))
    await Bun.sleep(700)
    expect(await server.stop('SIGKILL')).not.toBe(0)
    stop = true
    await load
    expect(acknowledged.size).toBeGreaterThan(50)
    expect(deleted.size).toBeGreaterThan(0)

    server = await startBinary({ ...ENV, DATABASE_URL: server.databaseUrl }, server.dir)
    const res = await fetch(`${server.url}/api/settings?client_id=${clientId}`, { headers })
    expect(res.status).toBe(200)
    const stored = new Map(((await res.json()) as { settings: Array<{ key: string; value: unknown }> }).settings.map((s) => [s.key, s.value]))
    for (const [key, value] of acknowledged) expect(stored.get(key)).toEqual(value)
    for (const key of deleted) expect(stored.has(key)).toBe(false)
  })

  test('SIGTERM drains in-flight requests, exits 0 and closes the database (SQLite: the WAL checkpointed)', async () => {
    // Sign-ins spend ~25 ms each in argon2, so several are surely in flight when the signal lands.
    const page = await fetch(`${server.url}/login`)
    const cookie = page.headers.getSetCookie()[0]!.split(';')[0]!
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(await page.text())![1]!
    // Eight accounts: parallel guesses at one account are throttled after five (item 4).
    const body = (i: number) => new URLSearchParams({ email: `load${i}@example.com`, password: 'wrong password', csrf_token: csrf })
    const inflight = Array.from({ length: 8 }, (_, i) =>
      fetch(`${server.url}/login`, { method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: body(i) }).then(
        (r) => r.status,
        (e: Error) => e.name,
      ),
    )
    await Bun.sleep(15)
    const exit = server.stop('SIGTERM')
    expect(await Promise.all(inflight)).toEqual(Array(8).fill(401))
    expect(await exit).toBe(0)
    if (testEngine === 'sqlite') {
      const wal = Bun.file(`${server.dbPath}-wal`)
      expect((await wal.exists()) ? wal.size : 0).toBe(0)
    }
    expect(server.output()).toContain('"msg":"stopped"')
  })
})

// SQLite's online copy; on PostgreSQL the command points to pg_dump (tests/e2e/cli-binary.test.ts).
describe.skipIf(testEngine === 'postgres')('latchkey backup', () => {
  test('copies a consistent database while the server takes writes', async () => {
    const server2 = await startBinary(ENV)
    try {
      const id = JSON.parse(server2.cli(['client', 'create', '--name', 'B', '--redirect-uri', 'http://127.0.0.1:9/cb', '--skip-consent']).out).client_id
      const secret = JSON.parse(server2.cli(['client', 'rotate-secret', id]).out).client_secret
      server2.cli(['user', 'create', '--email', 'load@example.com', '--name', 'Load', '--password-stdin'], 'load password\n')
      const tok = await tokenFor(server2, id, secret)
      let stop = false
      let written = 0
      const load = (async () => {
        for (let i = 0; !stop; i++) {
          const res = await fetch(`${server2.url}/api/settings`, {
            method: 'POST',
            headers: { authorization: `Bearer ${tok}`, 'content-type': 'application/json' },
            body: JSON.stringify({ client_id: id, key: `b${i}`, value: i }),
          })
          if (res.status === 200) written++
        }
      })()
      await Bun.sleep(150)
      const backup = server2.cli(['backup', 'copy.sqlite'])
      stop = true
      await load
      expect(backup.code).toBe(0)
      const { Database } = await import('bun:sqlite')
      const copy = new Database(`${server2.dir}/copy.sqlite`, { readonly: true })
      expect(copy.query('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' })
      const rows = (copy.query('SELECT CAST(count(*) AS INTEGER) AS n FROM settings').get() as { n: number }).n
      const counted = (copy.query('SELECT n FROM setting_counts').get() as { n: number }).n
      copy.close()
      expect(rows).toBeGreaterThan(0)
      expect(rows).toBeLessThanOrEqual(written)
      expect(counted).toBe(rows) // one consistent snapshot: the trigger-kept count matches the rows
    } finally {
      server2.cleanup()
    }
  })
})
