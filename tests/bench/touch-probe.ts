/**
 * How long "last active" writes hold the event loop on SQLite (issue 35: the forward-auth cliff at
 * 100,000 site sessions): `bun tests/bench/touch-probe.ts [N] [K]` makes N sessions in a database
 * file, then writes K touches of random ones through the store, CHUNK at a time (default: all in
 * one write, as before TOUCHES_PER_WRITE), and prints the whole time, the longest the event loop
 * was held and the CPU per touch. SYNC=NORMAL|FULL and CACHE=<cache_size> try PRAGMAs; ROUNDS
 * repeats without emptying the WAL.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SqliteStore } from '../../src/db/sqlite/store'
import { randomToken, sha256 } from '../../src/lib/crypto'

const N = Number(process.argv[2] ?? 100_000)
const K = Number(process.argv[3] ?? 10_000)
const CHUNK = Number(process.env.CHUNK ?? 1e9)
const dir = mkdtempSync(join(tmpdir(), 'touch-probe-'))
const { store } = await SqliteStore.open(join(dir, 'db.sqlite'))
const db = store.db.sqlite
const now = Date.now()
db.run(`INSERT INTO users (id, email, full_name, avatar_url, password_hash, created_at) VALUES ('u1', 'bench@example.com', 'Bench User', NULL, 'x', ${now})`)
const hashes: string[] = []
const insert = db.prepare(`INSERT INTO sessions (id_hash, user_id, expires_at, auth_time, amr, pending, sid, created_at, last_active_at) VALUES (?, 'u1', ?, ?, 'pwd', 0, ?, ?, ?)`)
db.transaction(() => {
  for (let i = 0; i < N; i++) {
    const hash = sha256(randomToken())
    hashes.push(hash)
    insert.run(hash, now + 86_400_000, now, randomToken(), now, now)
  }
})()
db.run('PRAGMA wal_checkpoint(TRUNCATE)')
if (process.env.SYNC) db.run(`PRAGMA synchronous = ${process.env.SYNC}`)
if (process.env.CACHE) db.run(`PRAGMA cache_size = ${Number(process.env.CACHE)}`)
const rounds = Number(process.env.ROUNDS ?? 4)
for (let round = 0; round < rounds; round++) {
  const batch = new Map<string, number>()
  for (let i = 0; i < K; i++) batch.set(hashes[Math.floor(Math.random() * N)]!, Date.now() + round)
  const entries = [...batch]
  // The longest gap between timer ticks while the writes run: how long the event loop was held.
  let last = performance.now()
  let worst = 0
  const tick = setInterval(() => {
    const t = performance.now()
    worst = Math.max(worst, t - last)
    last = t
  }, 0)
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  for (let i = 0; i < entries.length; i += CHUNK) await store.sessions.touchSessions(new Map(entries.slice(i, i + CHUNK)))
  const total = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  await Bun.sleep(5)
  clearInterval(tick)
  const walFrames = Math.floor((await Bun.file(join(dir, 'db.sqlite-wal')).size) / 4120)
  console.log(`touch ${batch.size} of ${N} (${Math.min(CHUNK, batch.size)} a write; WAL ${walFrames} frames): ${total.toFixed(1)} ms, event loop held ${worst.toFixed(1)} ms, CPU ${((cpu.user + cpu.system) / batch.size).toFixed(1)} µs a touch`)
}
await store.close()
