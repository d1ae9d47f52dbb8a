import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose'
import { checkKeys, createClient } from '../../src/oauth/clients'
import { createResource } from '../../src/oauth/resources'
import { ClientKeys } from '../../src/oauth/token/client-keys'
import { DocumentServer } from '../agents/document-server'
import { createTestApp, ORIGIN, type TestApp } from '../helpers'

/** Issue 38, private_key_jwt (RFC 7523; OpenID Connect Core §9; SPEC "Machines and devices"). */
const TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'
const TOKEN = `${ORIGIN}/api/oauth/token`
type Key = { alg: string; kid: string; privateKey: CryptoKey; jwk: Record<string, unknown> }

async function key(alg: string, kid: string): Promise<Key> {
  const pair = await generateKeyPair(alg, { extractable: true })
  return { alg, kid, privateKey: pair.privateKey, jwk: { ...(await exportJWK(pair.publicKey)), kid, alg } }
}

let keys: Record<string, Key>
let served: { jwks: unknown; fetches: number }
let server: ReturnType<typeof Bun.serve>

beforeAll(async () => {
  keys = { es: await key('ES256', 'es'), rs: await key('RS256', 'rs'), ps: await key('PS256', 'ps'), ed: await key('EdDSA', 'ed'), later: await key('ES256', 'later') }
  served = { jwks: { keys: [keys.es!.jwk] }, fetches: 0 }
  server = Bun.serve({
    port: 0,
    fetch() {
      served.fetches++
      return Response.json(served.jwks, { headers: { 'cache-control': 'max-age=3600' } })
    },
  })
})
afterAll(() => server.stop(true))

async function setup() {
  const t = await createTestApp({ CLIENT_ID_METADATA_ALLOW_HOSTS: `localhost:${server.port}` })
  await createResource(t.store, { uri: 'https://reports.example', name: 'Reports', scopes: ['reports:read=Read reports'] }, t.clock.now())
  const base = { redirectUris: [], public: false, skipConsent: false, grantTypes: ['client_credentials'], allowedScopes: ['reports:read'], authMethod: 'private_key_jwt' }
  const jwks = JSON.stringify({ keys: [keys.es, keys.rs, keys.ps, keys.ed].map((k) => k!.jwk) })
  const file = (await createClient(t.store, { ...base, name: 'Job', jwks }, t.clock.now())).client
  const uri = (await createClient(t.store, { ...base, name: 'Remote job', jwksUri: `http://localhost:${server.port}/jwks` }, t.clock.now())).client
  return { t, file, uri }
}

function assertion(t: TestApp, clientId: string, k: Key, claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}) {
  const now = Math.floor(t.clock.now() / 1000)
  return new SignJWT({ jti: crypto.randomUUID(), ...claims })
    .setProtectedHeader({ alg: k.alg, kid: k.kid, ...header })
    .setIssuer((claims.iss as string) ?? clientId)
    .setSubject((claims.sub as string) ?? clientId)
    .setAudience((claims.aud as string) ?? TOKEN)
    .setIssuedAt(now)
    .setExpirationTime((claims.exp as number) ?? now + 60)
    .sign(k.privateKey)
}
function call(t: TestApp, path: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return t.handle(path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(fields) })
}
const token = (t: TestApp, jwt: string, extra: Record<string, string> = {}) => call(t, '/api/oauth/token', { grant_type: 'client_credentials', scope: 'reports:read', client_assertion_type: TYPE, client_assertion: jwt, ...extra })
async function status(res: Response): Promise<[number, string | undefined]> {
  const body = (await res.json()) as { error?: string }
  return [res.status, body.error]
}

describe('private_key_jwt at the token endpoint', () => {
  test('client_credentials uses the jti in its token’s own transaction (one commit, issue 38 "Speed"); a refused request uses it on its own; either way it is used once', async () => {
    const { t, file } = await setup()
    const own = t.store.clients.useAssertionJti.bind(t.store.clients)
    let alone = 0
    t.store.clients.useAssertionJti = (...args) => (alone++, own(...args))
    const tokens = async () => Number((await t.row('SELECT count(*) AS n FROM access_tokens'))!.n)
    const jtis = async () => Number((await t.row('SELECT count(*) AS n FROM used_assertions'))!.n)
    const once = await assertion(t, file.id, keys.es!)
    expect(await status(await token(t, once))).toEqual([200, undefined])
    expect([alone, await jtis(), await tokens()]).toEqual([0, 1, 1])
    // Replayed: invalid_client, nothing issued.
    expect(await status(await token(t, once))).toEqual([401, 'invalid_client'])
    expect([await jtis(), await tokens()]).toEqual([1, 1])
    // A request refused for its scope used its assertion all the same; replayed, even with a right scope, it is invalid_client.
    const refused = await assertion(t, file.id, keys.es!)
    expect(await status(await token(t, refused, { scope: 'reports:write' }))).toEqual([400, 'invalid_scope'])
    expect([alone, await jtis()]).toEqual([1, 2])
    expect(await status(await token(t, refused))).toEqual([401, 'invalid_client'])
    expect(await status(await token(t, refused, { scope: 'reports:write' }))).toEqual([401, 'invalid_client'])
    expect(await tokens()).toBe(1)
    // A token that cannot be stored stores no jti either (one transaction); the assertion is then still good.
    const insert = t.store.tokens.insertClientToken.bind(t.store.tokens)
    const failing = await assertion(t, file.id, keys.es!)
    t.store.tokens.insertClientToken = () => Promise.reject(new Error('disk full'))
    expect((await token(t, failing)).status).toBe(500)
    t.store.tokens.insertClientToken = insert
    expect(await jtis()).toBe(2)
    expect(await status(await token(t, failing))).toEqual([200, undefined])
    expect([await jtis(), await tokens()]).toEqual([3, 2])
  })

  test('RS256, PS256, ES256 and EdDSA keys, chosen by kid; aud the endpoint URL or the issuer', async () => {
    const { t, file } = await setup()
    expect(file.public).toBe(false)
    for (const k of ['es', 'rs', 'ps', 'ed']) expect(await status(await token(t, await assertion(t, file.id, keys[k]!)))).toEqual([200, undefined])
    expect(await status(await token(t, await assertion(t, file.id, keys.es!, { aud: ORIGIN })))).toEqual([200, undefined])
  })

  test('refused (401 invalid_client): a replayed jti, another aud, exp over 5 minutes ahead, an expired one, iss ≠ sub, an unknown kid, alg none or HS256', async () => {
    const { t, file } = await setup()
    const once = await assertion(t, file.id, keys.es!)
    expect((await token(t, once)).status).toBe(200)
    expect(await status(await token(t, once))).toEqual([401, 'invalid_client'])
    const now = Math.floor(t.clock.now() / 1000)
    expect(await status(await token(t, await assertion(t, file.id, keys.es!, { aud: `${ORIGIN}/api/oauth/revoke` })))).toEqual([401, 'invalid_client'])
    expect(await status(await token(t, await assertion(t, file.id, keys.es!, { exp: now + 301 })))).toEqual([401, 'invalid_client'])
    expect(await status(await token(t, await assertion(t, file.id, keys.es!, { exp: now - 1 })))).toEqual([401, 'invalid_client'])
    expect(await status(await token(t, await assertion(t, file.id, keys.es!, { sub: 'someone-else' })))).toEqual([401, 'invalid_client'])
    expect(await status(await token(t, await assertion(t, file.id, keys.later!)))).toEqual([401, 'invalid_client'])
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', kid: 'es' })).toString('base64url')}.${Buffer.from(JSON.stringify({ iss: file.id, sub: file.id, aud: TOKEN, exp: now + 60, jti: 'x' })).toString('base64url')}.`
    expect(await status(await token(t, unsigned))).toEqual([401, 'invalid_client'])
    const hs = await new SignJWT({ jti: 'h' }).setProtectedHeader({ alg: 'HS256', kid: 'es' }).setIssuer(file.id).setSubject(file.id).setAudience(TOKEN).setExpirationTime(now + 60).sign(new TextEncoder().encode('a secret of thirty-two bytes or more!'))
    expect(await status(await token(t, hs))).toEqual([401, 'invalid_client'])
  })

  test('aud names this server only: the endpoint URL or ISSUER, alone (a list of one is that value); a list with another audience, another endpoint or a near spelling are refused', async () => {
    const { t, file } = await setup()
    const as = async (aud: unknown) => status(await token(t, await assertion(t, file.id, keys.es!, { aud })))
    expect(await as([ORIGIN])).toEqual([200, undefined])
    expect(await as([TOKEN])).toEqual([200, undefined])
    // SPEC's rule (the endpoint or ISSUER) is kept; draft-ietf-oauth-rfc7523bis asks for ISSUER alone: no other audience may ride along.
    expect(await as([TOKEN, 'https://other-as.example'])).toEqual([401, 'invalid_client'])
    expect(await as([ORIGIN, TOKEN])).toEqual([401, 'invalid_client'])
    expect(await as(`${ORIGIN}/`)).toEqual([401, 'invalid_client'])
    expect(await as(`${ORIGIN}/api/oauth/par`)).toEqual([401, 'invalid_client'])
    expect(await as([])).toEqual([401, 'invalid_client'])
  })

  test('one method only: a secret, Basic beside an assertion, or nothing are refused for a private_key_jwt client', async () => {
    const { t, file } = await setup()
    expect(await status(await call(t, '/api/oauth/token', { grant_type: 'client_credentials', scope: 'reports:read', client_id: file.id }))).toEqual([401, 'invalid_client'])
    expect(await status(await call(t, '/api/oauth/token', { grant_type: 'client_credentials', scope: 'reports:read', client_id: file.id, client_secret: 'x' }))).toEqual([401, 'invalid_client'])
    expect(await status(await token(t, await assertion(t, file.id, keys.es!), {}).then((r) => r))).toEqual([200, undefined])
    const both = await call(t, '/api/oauth/token', { grant_type: 'client_credentials', client_assertion_type: TYPE, client_assertion: await assertion(t, file.id, keys.es!) }, { authorization: `Basic ${btoa(`${file.id}:x`)}` })
    expect(await status(both)).toEqual([400, 'invalid_request'])
    expect(await status(await token(t, await assertion(t, file.id, keys.es!), { client_assertion_type: 'urn:other' }))).toEqual([400, 'invalid_request'])
  })

  test('the same client authentication at introspection, revocation and PAR (aud their own URL)', async () => {
    const { t, file } = await setup()
    const access = ((await (await token(t, await assertion(t, file.id, keys.es!))).json()) as { access_token: string }).access_token
    const at = async (path: string) => ({ client_assertion_type: TYPE, client_assertion: await assertion(t, file.id, keys.es!, { aud: `${ORIGIN}${path}` }) })
    const introspected = await call(t, '/api/oauth/introspect', { token: access, ...(await at('/api/oauth/introspect')) })
    expect(((await introspected.json()) as { active: boolean; sub: string }).sub).toBe(file.id)
    expect((await call(t, '/api/oauth/revoke', { token: access, ...(await at('/api/oauth/revoke')) })).status).toBe(200)
    const par = await call(t, '/api/oauth/par', { response_type: 'code', scope: 'openid', redirect_uri: 'https://x.example/cb', ...(await at('/api/oauth/par')) })
    // It has no redirect URI: the push is checked (and refused) after the client authenticated.
    expect(await status(par)).toEqual([400, 'invalid_request'])
  })
})

describe('--jwks-uri', () => {
  test('fetched once and cached by Cache-Control; an unknown kid fetches again at most once a minute', async () => {
    const { t, uri } = await setup()
    served.jwks = { keys: [keys.es!.jwk] }
    served.fetches = 0
    expect((await token(t, await assertion(t, uri.id, keys.es!))).status).toBe(200)
    expect((await token(t, await assertion(t, uri.id, keys.es!))).status).toBe(200)
    expect(served.fetches).toBe(1)
    // The client rotates a key in: within the minute of the fetch its kid is unknown, and nothing is fetched.
    served.jwks = { keys: [keys.es!.jwk, keys.later!.jwk] }
    expect((await token(t, await assertion(t, uri.id, keys.later!))).status).toBe(401)
    expect(served.fetches).toBe(1)
    // A minute on (the JWKS still fresh by its max-age), the unknown kid fetches it again.
    t.clock.advance(61_000)
    expect((await token(t, await assertion(t, uri.id, keys.later!))).status).toBe(200)
    expect(served.fetches).toBe(2)
    // A kid the JWKS does not have: no new fetch within the minute.
    expect((await token(t, await assertion(t, uri.id, keys.rs!))).status).toBe(401)
    expect(served.fetches).toBe(2)
    t.clock.advance(61_000)
    expect((await token(t, await assertion(t, uri.id, keys.rs!))).status).toBe(401)
    expect(served.fetches).toBe(3)
  })
})

test('a --jwks-uri on a loopback or private address is never fetched unless its host is allow-listed: the assertion is refused (401 invalid_client)', async () => {
  // An https server on loopback whose certificate the server trusts: with its host allow-listed
  // it would be fetched and the assertion accepted (the tests below); here it is not allow-listed.
  const docs = new DocumentServer()
  try {
    const t = await createTestApp()
    t.ctx.clientKeys = new ClientKeys(t.ctx, { allowHosts: [], ca: docs.tls.cert })
    await createResource(t.store, { uri: 'https://reports.example', name: 'Reports', scopes: ['reports:read=Read reports'] }, t.clock.now())
    const base = { redirectUris: [], public: false, skipConsent: false, grantTypes: ['client_credentials'], allowedScopes: ['reports:read'], authMethod: 'private_key_jwt' }
    const jwks = () => Response.json({ keys: [keys.es!.jwk] }, { headers: { 'cache-control': 'max-age=3600' } })
    const port = new URL(docs.url('/')).port
    for (const jwksUri of [docs.route('/inside.jwks', jwks), `https://127.0.0.1:${port}/inside.jwks`, `https://[::1]:${port}/inside.jwks`, 'https://10.0.0.7/jwks', 'https://192.168.1.20/jwks', 'https://169.254.169.254/jwks']) {
      const client = (await createClient(t.store, { ...base, name: 'Inside job', jwksUri }, t.clock.now())).client
      const res = await token(t, await assertion(t, client.id, keys.es!))
      expect([jwksUri, ...(await status(res))]).toEqual([jwksUri, 401, 'invalid_client'])
    }
    expect(docs.hits.get('/inside.jwks') ?? 0).toBe(0)
  } finally {
    docs.stop()
  }
})

describe('--jwks-uri over https (loopback, a test CA), counted', () => {
  const docs = new DocumentServer()
  afterAll(() => docs.stop())
  let answer: () => Response

  async function httpsSetup(path: string) {
    const t = await createTestApp({ CLIENT_ID_METADATA_ALLOW_HOSTS: docs.host })
    t.ctx.clientKeys = new ClientKeys(t.ctx, { allowHosts: [docs.host], ca: docs.tls.cert })
    await createResource(t.store, { uri: 'https://reports.example', name: 'Reports', scopes: ['reports:read=Read reports'] }, t.clock.now())
    const base = { redirectUris: [], public: false, skipConsent: false, grantTypes: ['client_credentials'], allowedScopes: ['reports:read'], authMethod: 'private_key_jwt' }
    const client = (await createClient(t.store, { ...base, name: 'Remote job', jwksUri: docs.route(path, () => answer()) }, t.clock.now())).client
    return { t, client, hits: () => docs.hits.get(path) ?? 0 }
  }
  const good = () => Response.json({ keys: [keys.es!.jwk] }, { headers: { 'cache-control': 'max-age=3600' } })

  test('a failing fetch is remembered for 10 s: assertions meanwhile are refused without fetching; then it is tried again', async () => {
    const { t, client, hits } = await httpsSetup('/failing.jwks')
    answer = () => new Response('down', { status: 500 })
    for (let i = 0; i < 5; i++) expect(await status(await token(t, await assertion(t, client.id, keys.es!)))).toEqual([401, 'invalid_client'])
    expect(hits()).toBe(1)
    // At once, too: twenty assertions, no new fetch.
    const parallel = await Promise.all(Array.from({ length: 20 }, async () => (await token(t, await assertion(t, client.id, keys.es!))).status))
    expect(parallel).toEqual(Array(20).fill(401))
    expect(hits()).toBe(1)
    answer = good
    t.clock.advance(9_000)
    expect((await token(t, await assertion(t, client.id, keys.es!))).status).toBe(401)
    expect(hits()).toBe(1)
    t.clock.advance(1_001)
    expect((await token(t, await assertion(t, client.id, keys.es!))).status).toBe(200)
    expect(hits()).toBe(2)
  })

  test('a first fetch shared: twenty assertions at once on a cold cache cost one fetch', async () => {
    const { t, client, hits } = await httpsSetup('/cold.jwks')
    answer = good
    const answers = await Promise.all(Array.from({ length: 20 }, async () => (await token(t, await assertion(t, client.id, keys.es!))).status))
    expect(answers).toEqual(Array(20).fill(200))
    expect(hits()).toBe(1)
  })

  test('an unknown kid refetches at most once a minute, even sent twenty at once; keys still fresh keep working when that refetch fails', async () => {
    const { t, client, hits } = await httpsSetup('/rotating.jwks')
    answer = good
    expect((await token(t, await assertion(t, client.id, keys.es!))).status).toBe(200)
    expect(hits()).toBe(1)
    t.clock.advance(61_000)
    const forged = await Promise.all(Array.from({ length: 20 }, async () => (await token(t, await assertion(t, client.id, keys.rs!))).status))
    expect(forged).toEqual(Array(20).fill(401))
    expect(hits()).toBe(2)
    expect((await token(t, await assertion(t, client.id, keys.rs!))).status).toBe(401)
    expect(hits()).toBe(2)
    // A minute on, the JWKS endpoint fails: the unknown kid's refetch fails, the cached key still signs in.
    t.clock.advance(61_000)
    answer = () => new Response('down', { status: 503 })
    expect((await token(t, await assertion(t, client.id, keys.rs!))).status).toBe(401)
    expect(hits()).toBe(3)
    expect((await token(t, await assertion(t, client.id, keys.es!))).status).toBe(200)
    expect(hits()).toBe(3)
  })
})

test('client create refusals: a private key in the JWKS, a key without kid, both --jwks-file and --jwks-uri, a public client, keys without the method', async () => {
  const priv = await generateKeyPair('ES256', { extractable: true })
  const jwk = { ...(await exportJWK(priv.privateKey)), kid: 'p' }
  expect(() => checkKeys({ public: false, authMethod: 'private_key_jwt', jwks: JSON.stringify({ keys: [jwk] }) })).toThrow('is a private or secret key')
  expect(() => checkKeys({ public: false, authMethod: 'private_key_jwt', jwks: JSON.stringify({ keys: [{ kty: 'EC' }] }) })).toThrow('every key of the JWKS needs a kid')
  expect(() => checkKeys({ public: false, authMethod: 'private_key_jwt', jwks: '{"keys":[]}', jwksUri: 'https://x.example/jwks' })).toThrow('needs one of --jwks-file or --jwks-uri')
  expect(() => checkKeys({ public: true, authMethod: 'private_key_jwt', jwksUri: 'https://x.example/jwks' })).toThrow('a public client cannot use private_key_jwt')
  expect(() => checkKeys({ public: false, jwksUri: 'https://x.example/jwks' })).toThrow('--jwks-file and --jwks-uri are for --auth-method private_key_jwt')
  const t = await createTestApp()
  const doc = (await (await t.handle('/.well-known/openid-configuration')).json()) as Record<string, unknown>
  expect(doc.token_endpoint_auth_methods_supported).toContain('private_key_jwt')
  expect(doc.token_endpoint_auth_signing_alg_values_supported).toEqual(['RS256', 'PS256', 'ES256', 'EdDSA'])
})
