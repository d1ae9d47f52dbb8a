/**
 * Where a device poll that finds nothing goes (issue 38 "Speed"): the real server (access log
 * included) on a SQLite file with N pending device codes of one public client, until SIGINT, for
 * `bun --cpu-prof-md` and wrk: `bun tests/bench/poll-profile.ts [N]` prints the URL and the BODIES
 * file (one poll per line, each code polled once: authorization_pending) for
 * tests/bench/lua/polls.lua, as `bun run bench` drives it. PREPARE_ONLY=1 makes the database and
 * stops; PREPARED=<dir> serves it.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../src/config'
import { SqliteStore } from '../../src/db/sqlite/store'
import { randomToken, sha256 } from '../../src/lib/crypto'
import { createClient, DEVICE_CODE } from '../../src/oauth/clients'
import { startServer } from '../../src/server'

const N = Number(process.argv[2] ?? 200_000)
// PREPARED=<dir>: serve a database an earlier run prepared (a profile then holds the serving only).
const dir = process.env.PREPARED ?? mkdtempSync(join(tmpdir(), 'poll-profile-'))
const file = join(dir, 'db.sqlite')
const bodies = join(dir, 'polls.txt')
if (!process.env.PREPARED) {
  const { store } = await SqliteStore.open(file)
  const now = Date.now()
  const tv = (await createClient(store, { name: 'Bench TV', redirectUris: [], public: true, skipConsent: false, grantTypes: [DEVICE_CODE] }, now)).client.id
  const codes = Array.from({ length: N }, () => randomToken('lk_dc_'))
  const db = store.db.sqlite
  const insert = db.prepare(
    `INSERT INTO device_codes (device_code_hash, user_code_hash, client_id, scope, resource, created_at, expires_at, interval, status, address) VALUES (?, ?, ?, 'openid', NULL, ?, ?, 5, 'pending', '127.0.0.1')`,
  )
  db.transaction(() => {
    for (const code of codes) insert.run(sha256(code), sha256(`bench:${code}`), tv, now, now + 3_600_000)
  })()
  await store.close()
  await Bun.write(bodies, codes.map((c) => `grant_type=${encodeURIComponent(DEVICE_CODE)}&device_code=${c}&client_id=${tv}`).join('\n') + '\n')
  console.error(`prepared ${dir}`)
  if (process.env.PREPARE_ONLY) process.exit(0)
}
const env = { DATABASE_URL: file, ISSUER: 'http://127.0.0.1:3000', LOG_LEVEL: process.env.LOG_LEVEL ?? 'info', HOST: '127.0.0.1', PORT: '0' }
const running = await startServer(loadConfig(env))
console.error(`serving http://127.0.0.1:${running.server.port} BODIES=${bodies}`)
process.on('SIGINT', () => process.exit(0))
await new Promise(() => {})
