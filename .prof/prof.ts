import { createClient, DEVICE_CODE } from '../src/oauth/clients'
import { createResource } from '../src/oauth/resources'
import { randomToken } from '../src/lib/crypto'
import { createTestApp } from '../tests/helpers'

const t = await createTestApp()
await createResource(t.store, { uri: 'https://mcp.bench.example', name: 'MCP', scopes: ['tools:read=Read'] }, t.clock.now())
const job = await createClient(t.store, { name: 'Job', redirectUris: [], public: false, skipConsent: false, grantTypes: ['client_credentials'], allowedScopes: ['tools:read'] }, t.clock.now())
const tv = (await createClient(t.store, { name: 'TV', redirectUris: [], public: true, skipConsent: false, grantTypes: [DEVICE_CODE] }, t.clock.now())).client.id
const auth = `Basic ${btoa(`${job.client.id}:${job.secret}`)}`
const N = Number(process.env.N ?? 20000)
const which = process.env.WHICH ?? 'cc'
const codes: string[] = []
if (which === 'poll') {
  const { sha256 } = await import('../src/lib/crypto')
  for (let i = 0; i < N; i++) {
    const code = randomToken('lk_dc_')
    ;(t.store as any).db.sqlite.prepare(`INSERT INTO device_codes (device_code_hash, user_code_hash, client_id, scope, resource, created_at, expires_at, interval, status, address) VALUES (?, ?, ?, 'openid', NULL, ?, ?, 5, 'pending', '127.0.0.1')`).run(sha256(code), sha256('u' + code), tv, t.clock.now(), t.clock.now() + 600_000)
    codes.push(code)
  }
}
let bearer = ''
if (which === 'userinfo') {
  const { addUser, mintTokenPair } = await import('../tests/helpers')
  const u = await addUser(t)
  const pair = await mintTokenPair(t, job.client.id, u.id, 'openid email')
  bearer = pair.access_token
}
const one = (i: number) =>
  which === 'userinfo' ? t.handle('/api/oauth/userinfo', { headers: { authorization: `Bearer ${bearer}` } }) :
  which === 'cc'
    ? t.handle('/api/oauth/token', { method: 'POST', headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials&scope=tools%3Aread&resource=https%3A%2F%2Fmcp.bench.example' })
    : t.handle('/api/oauth/token', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code&device_code=${codes[i]}&client_id=${tv}` })
const started = performance.now()
let next = 0
const statuses = new Map<number, number>()
await Promise.all(Array.from({ length: 64 }, async () => {
  while (next < N) {
    const i = next++
    const r = await one(i)
    statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1)
    await r.arrayBuffer()
  }
}))
const ms = performance.now() - started
console.log(which, N, 'requests', (ms * 1000 / N).toFixed(1), 'us/req', [...statuses])
