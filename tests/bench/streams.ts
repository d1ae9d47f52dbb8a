/**
 * The settings-stream part of `bun run bench` (issue 22), on the SQLite server:
 *
 * - fan-out: 1,000 streams open on one instance (50 users of one app × 20 streams each — SPEC
 *   allows 20 per user), one write per user at the same moment, every stream's receipt timed
 *   from the moment its write was sent (p50/p99 over all deliveries);
 * - 10,000 idle streams (500 users × 20): the server's RSS per stream, and /healthz latency
 *   (the event loop's lag) with and without them;
 * - the POST rate (one key, wrk) with 1,000 streams open — the writer's own 20 among them,
 *   each write fanned out to them — against the same case with none.
 *
 * Streams are raw HTTP/1.1 sockets: fetch keeps at most a few hundred connections per host.
 * Users and tokens are made through the store's own code, as the scale bench makes them.
 */
import type { Socket } from 'bun'
import { join } from 'node:path'
import { insertUser } from '../../src/accounts/users'
import { openStore } from '../../src/db/open'
import { issueToken } from './scale'
import type { Case, Row, Server, WrkResult } from './harness'

const PER_USER = 20

export interface StreamResults {
  fanOut: { streams: number; deliveries: number; p50ms: number; p99ms: number }
  idle: { streams: number; rssBeforeMb: number; rssWithMb: number; kbPerStream: number; healthz: { withoutP50: number; withoutP99: number; withP50: number; withP99: number } }
  post: { without: Row; with: Row }
}

interface Held {
  socket: Socket<undefined>
  /** Receipt times by revision. */
  received: Map<number, number>
  ready: Promise<void>
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!

/** Users of the app with a settings token each, made in the server's own database file. */
async function users(server: Server, clientId: string, count: number, offset: number): Promise<Array<{ id: string; token: string }>> {
  const { store } = await openStore({ databaseUrl: join(server.dir, 'data/latchkey.sqlite'), databasePoolSize: 1 })
  const now = Date.now()
  const out: Array<{ id: string; token: string }> = []
  for (let i = 0; i < count; i++) {
    const user = await insertUser(store, { email: `stream${offset + i}@bench.example`, fullName: `Stream ${offset + i}`, avatarUrl: null, passwordHash: 'x' }, now)
    out.push({ id: user.id, token: await issueToken(store, clientId, user.id, 'settings:read settings:write', now) })
  }
  await store.close()
  return out
}

/** One stream on a raw socket: the request, then every `id:` line timed as it arrives. */
function hold(url: string, token: string): Held {
  const { hostname, port } = new URL(url)
  const received = new Map<number, number>()
  let ok!: () => void
  let failed!: (e: Error) => void
  const ready = new Promise<void>((resolve, reject) => ((ok = resolve), (failed = reject)))
  let head = ''
  let started = false
  const socket = Bun.connect({
    hostname,
    port: Number(port),
    socket: {
      open(s) {
        s.write(`GET /api/settings-events HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n`)
      },
      data(_s, chunk) {
        const now = performance.now()
        const text = chunk.toString()
        if (!started) {
          head += text
          if (!head.includes('\r\n\r\n')) return
          if (!head.startsWith('HTTP/1.1 200')) return failed(new Error(`stream refused: ${head.split('\r\n')[0]}`))
          started = true
          ok()
        }
        for (const m of text.matchAll(/^id: (\d+)$/gm)) received.set(Number(m[1]), now)
      },
      error(_s, e) {
        failed(e)
      },
    },
  }) as unknown as Promise<Socket<undefined>>
  const held = { socket: undefined as unknown as Socket<undefined>, received, ready }
  held.ready = Promise.all([socket.then((s) => (held.socket = s)), ready]).then(() => {})
  return held
}

async function openMany(url: string, tokens: string[], perToken: number): Promise<Held[][]> {
  const all: Held[][] = []
  for (const token of tokens) {
    const mine = Array.from({ length: perToken }, () => hold(url, token))
    await Promise.all(mine.map((h) => h.ready))
    all.push(mine)
  }
  return all
}

const closeAll = (groups: Held[][]) => groups.flat().forEach((h) => h.socket?.end())

async function healthz(url: string, n = 2000): Promise<{ p50: number; p99: number }> {
  const times: number[] = []
  for (let i = 0; i < n; i++) {
    const t0 = performance.now()
    await (await fetch(`${url}/healthz`)).arrayBuffer()
    times.push(performance.now() - t0)
  }
  times.sort((a, b) => a - b)
  return { p50: quantile(times, 0.5), p99: quantile(times, 0.99) }
}

export async function measureStreams(
  server: Server,
  clientId: string,
  rssMb: (pid: number) => number,
  measure: (c: Case) => Promise<Row>,
): Promise<StreamResults> {
  const url = server.url
  const write = (token: string, key: string) =>
    fetch(`${url}/api/settings`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ client_id: clientId, key, value: { at: Date.now() } }) })

  // Fan-out: 50 users × 20 streams, 20 rounds of one write per user at once.
  const fanUsers = await users(server, clientId, 50, 0)
  const fan = await openMany(url, fanUsers.map((u) => u.token), PER_USER)
  const latencies: number[] = []
  for (let round = 1; round <= 20; round++) {
    const sent: number[] = []
    await Promise.all(
      fanUsers.map(async (u, i) => {
        sent[i] = performance.now()
        await (await write(u.token, 'k')).arrayBuffer()
      }),
    )
    const deadline = Date.now() + 5000
    while (fan.some((group) => group.some((h) => !h.received.has(round))) && Date.now() < deadline) await Bun.sleep(1)
    fan.forEach((group, i) => group.forEach((h) => latencies.push((h.received.get(round) ?? Infinity) - sent[i]!)))
  }
  latencies.sort((a, b) => a - b)
  const fanOut = { streams: 1000, deliveries: latencies.length, p50ms: quantile(latencies, 0.5), p99ms: quantile(latencies, 0.99) }

  // The POST rate, without streams and then with the 1,000 open (the writer's own 20 among them).
  closeAll(fan)
  await Bun.sleep(500)
  const writer = fanUsers[0]!
  const postCase: Case = {
    name: 'POST /api/settings (same key), no streams',
    server: () => server,
    path: '/api/settings',
    headers: { Authorization: `Bearer ${writer.token}`, 'Content-Type': 'application/json' },
    script: 'post.lua',
    env: { BODY: JSON.stringify({ client_id: clientId, key: 'same.key', value: { theme: 'dark', size: 14 } }) },
  }
  const without = await measure(postCase)
  const reopened = await openMany(url, fanUsers.map((u) => u.token), PER_USER)
  const withStreams = await measure({ ...postCase, name: 'POST /api/settings (same key), 1,000 streams open' })
  closeAll(reopened)
  await Bun.sleep(500)

  // 10,000 idle streams.
  const idleUsers = [...fanUsers, ...(await users(server, clientId, 450, 50))]
  const before = await healthz(url)
  Bun.gc(true)
  const rssBeforeMb = rssMb(server.proc.pid)
  const idle = await openMany(url, idleUsers.map((u) => u.token), PER_USER)
  await Bun.sleep(2000)
  const rssWithMb = rssMb(server.proc.pid)
  const withIdle = await healthz(url)
  closeAll(idle)
  return {
    fanOut,
    idle: {
      streams: 10_000,
      rssBeforeMb,
      rssWithMb,
      kbPerStream: ((rssWithMb - rssBeforeMb) * 1024) / 10_000,
      healthz: { withoutP50: before.p50, withoutP99: before.p99, withP50: withIdle.p50, withP99: withIdle.p99 },
    },
    post: { without, with: withStreams },
  }
}

export type { WrkResult }
