import { createClient, DEVICE_CODE } from '../src/oauth/clients'
import { randomToken, sha256 } from '../src/lib/crypto'
import { createTestApp } from '../tests/helpers'
import { verifyClientSecret, findClient } from '../src/oauth/clients'
const t = await createTestApp()
const tv = (await createClient(t.store, { name: 'TV', redirectUris: [], public: true, skipConsent: false, grantTypes: [DEVICE_CODE] }, t.clock.now())).client.id
const job = await createClient(t.store, { name: 'Job', redirectUris: [], public: false, skipConsent: false, grantTypes: ['client_credentials'], allowedScopes: [] }, t.clock.now())
const N = 50000
const hashes: string[] = []
for (let i = 0; i < N; i++) {
  const code = randomToken('lk_dc_'); hashes.push(sha256(code))
  ;(t.store as any).db.sqlite.prepare(`INSERT INTO device_codes (device_code_hash, user_code_hash, client_id, scope, resource, created_at, expires_at, interval, status, address) VALUES (?, ?, ?, 'openid', NULL, ?, ?, 5, 'pending', '127.0.0.1')`).run(hashes[i], sha256('u' + code), tv, t.clock.now(), t.clock.now() + 600_000)
}
async function time(name: string, f: (i: number) => Promise<unknown>, n = N) {
  let next = 0
  const s = performance.now()
  await Promise.all(Array.from({ length: 64 }, async () => { while (next < n) await f(next++) }))
  console.log(name, ((performance.now() - s) * 1000 / n).toFixed(2), 'us')
}
for (let round = 0; round < 2; round++) {
await time('findClient', () => findClient(t.store, tv))
await time('verifySecret', () => verifyClientSecret(t.store, job.client.id, job.secret!))
await time('poll', (i) => t.store.devices.pollDeviceCode(hashes[i]!, tv, t.clock.now()))
t.clock.advance(6000)
}
