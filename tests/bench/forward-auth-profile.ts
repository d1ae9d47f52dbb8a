/**
 * Where a forward-auth check's time goes (issue 35 "Speed"), on a SQLite file with N site sessions
 * of one user: `bun tests/bench/forward-auth-profile.ts [N]` times checks through a local socket —
 * one cookie (hits), N fresh cookies (misses: one indexed read each), the N again — and the read
 * alone. With SERVE_ONLY=1 it serves through the real server (access log included) until SIGINT,
 * for `bun --cpu-prof-md` and wrk (tests/bench/lua/cookies.lua, the printed COOKIES file);
 * LOG_LEVEL=warn there leaves the access log out, METRICS_ADDRESS=host:port counts requests as the bench's server does.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp } from '../../src/app'
import { siteSessionHash } from '../../src/authz/site-sessions'
import { createSite } from '../../src/authz/sites'
import { loadConfig } from '../../src/config'
import { createContext } from '../../src/context'
import { SqliteStore } from '../../src/db/sqlite/store'
import { randomToken, sha256 } from '../../src/lib/crypto'
import { setPeerResolver } from '../../src/web/client-address'
import { startServer } from '../../src/server'

const N = Number(process.argv[2] ?? 20_000)
const dir = mkdtempSync(join(tmpdir(), 'fa-profile-'))
const { store } = await SqliteStore.open(join(dir, 'db.sqlite'))
const ctx = await createContext({ store, config: loadConfig({ DATABASE_URL: join(dir, 'db.sqlite'), ISSUER: 'http://127.0.0.1:3000', TRUSTED_PROXIES: '127.0.0.1', LOG_LEVEL: 'warn' }) })
const app = createApp(ctx)
await createSite(store, { host: 'app.bench.example', name: 'Bench' }, Date.now())
const now = Date.now()
const db = store.db.sqlite
db.run(`INSERT INTO users (id, email, full_name, avatar_url, password_hash, created_at) VALUES ('u1', 'bench@example.com', 'Bench User', NULL, 'x', ${now})`)
const tokens = Array.from({ length: N + 1 }, () => randomToken())
db.transaction(() => {
  for (const token of tokens) {
    const sessionHash = sha256(randomToken())
    // Last noted active within the last minute, spread evenly (as sessions in use are: SessionActivity writes each at most once a minute).
    db.query(`INSERT INTO sessions (id_hash, user_id, expires_at, auth_time, amr, pending, sid, created_at, last_active_at) VALUES (?, 'u1', ?, ?, 'pwd', 0, ?, ?, ?)`).run(sessionHash, now + 86_400_000, now, randomToken(), now, now - Math.floor(Math.random() * 60_000))
    db.query('INSERT INTO site_sessions (id_hash, session_hash, host, expires_at) VALUES (?, ?, ?, ?)').run(siteSessionHash('http', token), sessionHash, 'app.bench.example', now + 86_400_000)
  }
})()
const headers = { 'X-Forwarded-Method': 'GET', 'X-Forwarded-Proto': 'http', 'X-Forwarded-Host': 'app.bench.example', 'X-Forwarded-Uri': '/photos/1?size=2', 'X-Forwarded-For': '203.0.113.7' }
// The peer is the trusted proxy (the bench's wrk stands in for it).
const server = Bun.serve({ port: 0, fetch: (r) => app.handle(r) })
setPeerResolver((r) => server.requestIP(r)?.address)
const peered = (token: string) => fetch(`http://127.0.0.1:${server.port}/api/authz/forward-auth`, { headers: { ...headers, cookie: `lk_site=${token}` } })
if (process.env.SERVE_ONLY) {
  // For a profiler: the real server (access log, metrics) on this database until SIGINT; wrk asks
  // (tests/bench/lua/cookies.lua with COOKIES=<dir>/cookies.txt).
  server.stop(true)
  await Bun.write(join(dir, 'cookies.txt'), tokens.join('\n') + '\n')
  const env = { DATABASE_URL: join(dir, 'db.sqlite'), ISSUER: 'http://127.0.0.1:3000', TRUSTED_PROXIES: '127.0.0.1', LOG_LEVEL: process.env.LOG_LEVEL ?? 'info', HOST: '127.0.0.1', PORT: '0', ...(process.env.METRICS_ADDRESS ? { METRICS_ADDRESS: process.env.METRICS_ADDRESS } : {}) }
  const running = await startServer(loadConfig(env))
  console.error(`serving http://127.0.0.1:${running.server.port} cookies ${join(dir, 'cookies.txt')}`)
  process.on('SIGINT', () => process.exit(0))
  await new Promise(() => {})
}

async function time(label: string, count: number, make: (i: number) => string) {
  const started = performance.now()
  const batch = 64
  for (let i = 0; i < count; i += batch) {
    const answers = await Promise.all(Array.from({ length: Math.min(batch, count - i) }, (_, j) => peered(make(i + j))))
    for (const a of answers) if (a.status !== 200) throw new Error(`${label}: ${a.status}`)
  }
  const us = ((performance.now() - started) * 1000) / count
  console.log(`${label}: ${us.toFixed(1)} µs per check (client included)`)
}
await time('warm-up', 5000, () => tokens[0]!)
await time('hit (one cookie)', 50_000, () => tokens[0]!)
await time(`miss (${N} fresh sessions)`, N, (i) => tokens[i + 1]!)
await time(`hit (the ${N} again)`, N, (i) => tokens[i + 1]!)
server.stop(true)
await store.close()
{
  const { store: s2 } = await SqliteStore.open(join(dir, 'db.sqlite'))
  for (const pass of ['first', 'second']) {
    const t0 = performance.now()
    for (let i = 0; i < N; i++) await s2.sites.findSiteSession(siteSessionHash('http', tokens[i + 1]!), 'app.bench.example', Date.now(), 0)
    console.log(`findSiteSession alone (${pass} pass, a connection of its own): ${(((performance.now() - t0) * 1000) / N).toFixed(1)} µs`)
  }
  console.log('cache_size', s2.db.sqlite.query('PRAGMA cache_size').get(), 'mmap', s2.db.sqlite.query('PRAGMA mmap_size').get())
  const t1 = performance.now()
  for (let i = 0; i < N; i++) siteSessionHash('http', tokens[i + 1]!)
  console.log(`siteSessionHash alone: ${(((performance.now() - t1) * 1000) / N).toFixed(2)} µs`)
  await s2.close()
}
