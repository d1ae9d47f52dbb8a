import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { SseReader } from '../settings/sse'
import { testEngine } from '../store'
import { until } from '../wait'
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
    // Killed in the middle of the load: once it has acknowledged writes and deletes, while it takes more.
    await until(() => acknowledged.size > 100 && deleted.size > 0, 'acknowledged writes and deletes')
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

  test('SIGTERM drains a request in flight: it ends with its real answer, then the server exits 0 and closes the database (SQLite: the WAL checkpointed)', async () => {
    // A settings stream: its `event: end` ("shutdown") is the first thing the server does on SIGTERM.
    const stream = new SseReader(await fetch(`${server.url}/api/settings-events`, { headers: { authorization: `Bearer ${token}` } }))
    // A write whose body comes slowly: the server has begun it (it answered 100 Continue) and
    // cannot finish it before SIGTERM, since the body's rest is sent only after the stream ended.
    const body = JSON.stringify({ client_id: clientId, key: 'drained', value: { in: 'flight' } })
    const upload = await rawRequest(
      server.direct,
      `POST /api/settings HTTP/1.1\r\nhost: ${new URL(server.url).host}\r\nauthorization: Bearer ${token}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nexpect: 100-continue\r\nconnection: close\r\n\r\n`,
    )
    expect(await upload.received((text) => text.includes('\r\n\r\n'))).toStartWith('HTTP/1.1 100 Continue\r\n')
    upload.write(body.slice(0, 20))

    const exit = server.stop('SIGTERM')
    expect(await stream.collect((e) => e.event === 'end', 10_000)).toEqual([{ event: 'end', data: '{"reason":"shutdown"}' }])
    expect(server.proc.exitCode).toBeNull()
    upload.write(body.slice(20))
    const answer = await upload.closed
    const [head, json] = answer.slice(answer.indexOf('\r\n\r\n') + 4).split('\r\n\r\n') as [string, string]
    expect(head).toStartWith('HTTP/1.1 200 OK\r\n')
    expect(JSON.parse(json)).toEqual({ success: true, setting: { key: 'drained', value: { in: 'flight' }, client_id: clientId, updated_at: expect.any(String) } })
    expect(await exit).toBe(0)
    expect(server.output()).toContain('"msg":"stopped"')
    if (testEngine === 'sqlite') {
      expect(await Bun.file(server.dbPath).exists()).toBe(true)
      const wal = Bun.file(`${server.dbPath}-wal`)
      expect((await wal.exists()) ? wal.size : 0).toBe(0)
    }
    // The answer was the write's: it is in the database the server closed.
    expect(await server.query("SELECT value FROM settings WHERE key = 'drained'")).toEqual([{ value: '{"in":"flight"}' }])
  })
})

/** An HTTP/1.1 request written by hand on a socket, so its body can be sent in parts, when the test says. */
async function rawRequest(origin: string, head: string) {
  const { hostname, port } = new URL(origin)
  let text = ''
  let wake = () => {}
  let closed!: (text: string) => void
  const whenClosed = new Promise<string>((resolve) => (closed = resolve))
  const socket = await Bun.connect({
    hostname,
    port: Number(port),
    socket: {
      data(_, chunk) {
        text += chunk.toString()
        wake()
      },
      close() {
        closed(text)
        wake()
      },
    },
  })
  socket.write(head)
  return {
    write: (part: string) => socket.write(part),
    /** What the server has sent once `enough` says so (within 10 s). */
    async received(enough: (text: string) => boolean): Promise<string> {
      const deadline = Date.now() + 10_000
      while (!enough(text)) {
        if (Date.now() > deadline) throw new Error(`not received within 10 s: ${JSON.stringify(text)}`)
        await new Promise<void>((resolve) => {
          wake = resolve
          setTimeout(resolve, 100)
        })
      }
      return text
    },
    /** All the server sent, once it closed the connection. */
    closed: whenClosed,
  }
}

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
      await until(() => written >= 20, 'writes before the backup')
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
