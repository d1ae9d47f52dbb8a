/**
 * In-process CPU A/B of the PostgreSQL client cache (issue 38, src/db/pg/client-cache.ts): the
 * CPU (process.cpuUsage: this process, not PostgreSQL's) and wall time per client_credentials
 * token (client_secret_basic) through app.handle, sequential requests, rounds alternating the
 * cache off (every findClient reads the row, as before it) and on; medians of the rounds.
 *   LATCHKEY_TEST_DATABASE_URL=postgres://… bun tests/bench/pg-client-cache-ab.ts [requests per round] [rounds]
 */
import { createApp } from '../../src/app'
import { loadConfig } from '../../src/config'
import { createContext } from '../../src/context'
import type { PgClientCache } from '../../src/db/pg/client-cache'
import { PgStore } from '../../src/db/pg/store'
import { createClient } from '../../src/oauth/clients'
import { createResource } from '../../src/oauth/resources'

const url = process.env.LATCHKEY_TEST_DATABASE_URL
if (!url) throw new Error('set LATCHKEY_TEST_DATABASE_URL')
const N = Number(process.argv[2] ?? 2000)
const ROUNDS = Number(process.argv[3] ?? 7)
const ISSUER = 'http://127.0.0.1:3000'

const { store } = await PgStore.open(url, 8)
const app = createApp(await createContext({ store, config: loadConfig({ DATABASE_URL: url, ISSUER, LOG_LEVEL: 'warn' }) }))
const suffix = crypto.randomUUID().slice(0, 8)
const resource = `https://reports-${suffix}.example`
await createResource(store, { uri: resource, name: 'Reports', scopes: ['reports:read=Read reports'] }, Date.now())
const { client, secret } = await createClient(store, { name: 'Job', redirectUris: [], public: false, skipConsent: false, grantTypes: ['client_credentials'], allowedScopes: ['reports:read'] }, Date.now())
const auth = `Basic ${btoa(`${client.id}:${secret}`)}`
const body = `grant_type=client_credentials&resource=${encodeURIComponent(resource)}`
const request = () => app.handle(new Request(`${ISSUER}/api/oauth/token`, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' }, body }))

const cache = (store.clients as unknown as { cache: PgClientCache }).cache
const get = cache.get.bind(cache)
const read = cache.read.bind(cache)
function useCache(on: boolean): void {
  cache.get = on ? get : () => undefined
  cache.read = on ? read : () => undefined
}

async function round(): Promise<{ cpu: number; wall: number; ops: number }> {
  const ops = store.stats.operations
  const cpu = process.cpuUsage()
  const started = performance.now()
  for (let i = 0; i < N; i++) {
    const res = await request()
    if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`)
  }
  const used = process.cpuUsage(cpu)
  return { cpu: (used.user + used.system) / N, wall: ((performance.now() - started) * 1000) / N, ops: (store.stats.operations - ops) / N }
}

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!
const results: Record<'off' | 'on', Array<{ cpu: number; wall: number; ops: number }>> = { off: [], on: [] }
for (const on of [false, true]) (useCache(on), await round()) // warm-up
for (let r = 0; r < ROUNDS; r++)
  for (const on of r % 2 ? [true, false] : [false, true]) {
    useCache(on)
    results[on ? 'on' : 'off'].push(await round())
  }
for (const key of ['off', 'on'] as const) {
  const rs = results[key]
  console.log(`cache ${key}: CPU ${median(rs.map((r) => r.cpu)).toFixed(1)} µs/token, wall ${median(rs.map((r) => r.wall)).toFixed(1)} µs/token, ${median(rs.map((r) => r.ops)).toFixed(2)} store operations/token (median of ${ROUNDS} rounds of ${N})`)
}
console.log(`CPU on/off: ${(median(results.on.map((r) => r.cpu)) / median(results.off.map((r) => r.cpu))).toFixed(3)}; wall on/off: ${(median(results.on.map((r) => r.wall)) / median(results.off.map((r) => r.wall))).toFixed(3)}`)
await store.close()
process.exit(0)
