import { beforeEach, describe, expect, spyOn, test } from 'bun:test'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import { DatabaseUnavailable } from '../../src/db/store'
import { createClient, deleteClient, DEVICE_CODE, findClient, updateClient } from '../../src/oauth/clients'
import { pendingFromBody, pollBodyKey } from '../../src/oauth/token/grants/device_code'
import { addUser, cookieHeader, csrfFrom, ORIGIN, postForm, signIn, createTestApp, type TestApp } from '../helpers'

/**
 * Issue 38 "Speed": a device's poll (a form with grant_type=…device_code) is answered before the
 * router (src/oauth/token/fast-path.ts), exactly as through it. Every outcome is asked of both —
 * the app's own answer (`app.respond`) and Elysia's router alone (`app.fetch`) — with requests in
 * the same state (two device codes taken through the same steps), and their statuses, headers and
 * bodies compared whole; the test also tells which of them met the router.
 */
let t: TestApp
let tv: string
let router: (request: Request) => Promise<Response>
/** Requests app.respond handed on to the router. */
let routed: Request[]

beforeEach(async () => {
  t = await createTestApp()
  await addUser(t)
  tv = (await createClient(t.store, { name: 'Living-room TV', redirectUris: [], public: true, skipConsent: false, grantTypes: [DEVICE_CODE] }, t.clock.now())).client.id
  router = t.app.fetch as unknown as (request: Request) => Promise<Response>
  routed = []
  // app.respond reaches Elysia through app.fetch (Elysia's handle calls it): counted here.
  Object.defineProperty(t.app, 'fetch', { configurable: true, writable: true, value: (request: Request) => (routed.push(request), router(request)) })
})

const TOKEN = `${ORIGIN}/api/oauth/token`
const FORM = 'application/x-www-form-urlencoded'
type Fields = Record<string, string>
const formRequest = (fields: Fields | string, headers: Record<string, string> = {}, url = TOKEN) =>
  new Request(url, { method: 'POST', headers: { 'content-type': FORM, ...headers }, body: typeof fields === 'string' ? fields : new URLSearchParams(fields).toString() })

interface Answer {
  status: number
  headers: Array<[string, string]>
  body: string
}
async function read(response: Response | Promise<Response>): Promise<Answer> {
  const r = await response
  // A server fault names a request id of its own in each answer: compared without it.
  return { status: r.status, headers: [...r.headers], body: (await r.text()).replace(/request id \S+"/, 'request id ID"') }
}

/**
 * The same request (made twice by `make`: 0 for the app, 1 for the router alone) answered by
 * both; returns the app's answer and whether the router was met on the way.
 */
async function both(make: (side: 0 | 1) => Request): Promise<Answer & { viaRouter: boolean; json: Record<string, unknown> }> {
  const before = routed.length
  const app = await read(t.app.respond(make(0)))
  const viaRouter = routed.length > before
  const alone = await read(router(make(1)))
  expect(app).toEqual(alone)
  return { ...app, viaRouter, json: app.body.startsWith('{') ? JSON.parse(app.body) : {} }
}

async function start(clientId = tv, extra: Fields = {}) {
  const res = await t.handle('/api/oauth/device_authorization', { method: 'POST', headers: { 'content-type': FORM }, body: new URLSearchParams({ client_id: clientId, scope: 'openid email', ...extra }) })
  expect(res.status).toBe(200)
  return (await res.json()) as { device_code: string; user_code: string }
}
/** Two device requests in the same state, one for each side. */
const twins = async (clientId = tv, extra: Fields = {}) => [await start(clientId, extra), await start(clientId, extra)] as const
const pollOf = (deviceCode: string, extra: Fields = {}): Fields => ({ grant_type: DEVICE_CODE, device_code: deviceCode, client_id: tv, ...extra })

async function decide(userCode: string, decision: 'allow' | 'deny') {
  const jar = await signIn(t)
  const page = await t.handle(`/device?user_code=${userCode}`, { headers: { cookie: cookieHeader(jar) } })
  expect((await postForm(t, '/device', { user_code: userCode, decision, csrf_token: csrfFrom(await page.text()) }, jar)).status).toBe(200)
}

describe('a device poll: answered before the router, exactly as through it', () => {
  test('authorization_pending, then slow_down, then pending again after the longer interval, then expired_token: 400 no-store, never the router', async () => {
    const pair = await twins()
    const poll = () => both((side) => formRequest(pollOf(pair[side].device_code)))
    const pending = await poll()
    expect([pending.status, pending.json, pending.viaRouter]).toEqual([400, { error: 'authorization_pending', error_description: 'the user has not finished yet' }, false])
    expect(Object.fromEntries(pending.headers)).toEqual({
      'content-type': 'application/json',
      'cache-control': 'no-store',
      'access-control-allow-origin': '*',
      'access-control-expose-headers': 'ETag, WWW-Authenticate',
      'x-content-type-options': 'nosniff',
    })
    const slow = await poll()
    expect([slow.status, slow.json.error, slow.viaRouter]).toEqual([400, 'slow_down', false])
    t.clock.advance(10_000)
    expect((await poll()).json.error).toBe('authorization_pending')
    t.clock.advance(600_001)
    const expired = await poll()
    expect([expired.json, expired.viaRouter]).toEqual([{ error: 'expired_token', error_description: 'the device code has expired; start again' }, false])
  })

  test('denied: access_denied once, then invalid_grant; allowed: the tokens once (200, no-store, Pragma), then invalid_grant', async () => {
    const denied = await twins()
    for (const d of denied) await decide(d.user_code, 'deny')
    const refusal = await both((side) => formRequest(pollOf(denied[side].device_code)))
    expect([refusal.status, refusal.json.error, refusal.viaRouter]).toEqual([400, 'access_denied', false])
    expect((await both((side) => formRequest(pollOf(denied[side].device_code)))).json.error).toBe('invalid_grant')

    const allowed = await twins()
    for (const a of allowed) await decide(a.user_code, 'allow')
    t.clock.advance(5_000)
    const before = routed.length
    const answers = [await t.app.respond(formRequest(pollOf(allowed[0].device_code))), await router(formRequest(pollOf(allowed[1].device_code)))]
    expect(routed.length).toBe(before)
    const shapes = await Promise.all(answers.map(async (r) => ({ status: r.status, headers: [...r.headers], keys: Object.keys((await r.json()) as object).sort() })))
    expect(shapes[0]).toEqual(shapes[1]!)
    expect(shapes[0]!.status).toBe(200)
    expect(shapes[0]!.keys).toEqual(['access_token', 'expires_in', 'id_token', 'refresh_token', 'scope', 'token_type'])
    expect([answers[0]!.headers.get('cache-control'), answers[0]!.headers.get('pragma')]).toEqual(['no-store', 'no-cache'])
    t.clock.advance(5_000)
    expect((await both((side) => formRequest(pollOf(allowed[side].device_code)))).json.error).toBe('invalid_grant')
  })

  test('a code polled again is answered from memory (no read of it, no router) exactly as the router answers; what memory may not answer goes the whole way, with the same answer', async () => {
    const pair = await twins()
    const other = (await createClient(t.store, { name: 'Other TV', redirectUris: [], public: true, skipConsent: false, grantTypes: [DEVICE_CODE] }, t.clock.now())).client.id
    const web = (await createClient(t.store, { name: 'Web', redirectUris: ['https://app.example/cb'], public: true, skipConsent: false }, t.clock.now())).client.id
    // The first polls read each code (and each client) and keep them.
    for (const client of [tv, other, web]) await both((side) => formRequest(pollOf(pair[side].device_code, { client_id: client })))
    const finds = spyOn(t.store.devices, 'findDeviceCode')
    try {
      /** Polls both twins `after` ms after the last (5 s: a poll that finds nothing, not slow_down); how many reads of a code the app's side made. */
      const poll = async (extra: Fields = {}, headers: Record<string, string> = {}, after = 5_000) => {
        t.clock.advance(after)
        const before = finds.mock.calls.length
        const app = await read(t.app.respond(formRequest(pollOf(pair[0].device_code, extra), headers)))
        const appReads = finds.mock.calls.length - before
        expect(app).toEqual(await read(router(formRequest(pollOf(pair[1].device_code, extra), headers))))
        return { error: (JSON.parse(app.body) as { error: string }).error, appReads }
      }
      expect(await poll()).toEqual({ error: 'authorization_pending', appReads: 0 })
      // Not the plainest poll: another parameter, or the client named in a Basic header (Go's x/oauth2).
      expect(await poll({ scope: 'openid' })).toEqual({ error: 'authorization_pending', appReads: 1 })
      expect(await poll({ client_id: '' }, { authorization: `Basic ${btoa(`${tv}:`)}` })).toEqual({ error: 'authorization_pending', appReads: 1 })
      // Held, but not for what memory answers: another client's code, a client not given the grant.
      expect(await poll({ client_id: other })).toEqual({ error: 'invalid_grant', appReads: 1 })
      expect(await poll({ client_id: web })).toEqual({ error: 'unauthorized_client', appReads: 0 })
      // Too soon: slow_down (written: the code is read again), then memory again once the longer interval passed.
      expect(await poll()).toEqual({ error: 'authorization_pending', appReads: 0 })
      let told = 0
      t.store.changes.onChange((change) => void (change?.devices && told++))
      expect(await poll({}, {}, 1_000)).toEqual({ error: 'slow_down', appReads: 1 })
      // Each side's slow_down is told at its commit; on PostgreSQL once more when its NOTIFY
      // (drizzle/pg/0027) comes back through the feed, emptying the cache again: waited for.
      const echoes = t.store.engine === 'postgres' ? 4 : 2
      for (const began = performance.now(); told < echoes && performance.now() - began < 2_000; ) await new Promise((resolve) => setImmediate(resolve))
      expect(told).toBe(echoes)
      expect(await poll({}, {}, 10_000)).toEqual({ error: 'authorization_pending', appReads: 1 })
      expect(await poll({}, {}, 10_000)).toEqual({ error: 'authorization_pending', appReads: 0 })
      // A confidential client's code, held: naming the client without its secret is no poll of it.
      const { client: console, secret } = (await createClient(t.store, { name: 'Console', redirectUris: [], public: false, skipConsent: false, grantTypes: [DEVICE_CODE] }, t.clock.now())) as { client: { id: string }; secret: string }
      const held = await twins(console.id, { client_secret: secret })
      const consolePoll = async (fields: Fields) => {
        t.clock.advance(5_000)
        const app = await read(t.app.respond(formRequest({ grant_type: DEVICE_CODE, device_code: held[0].device_code, ...fields })))
        expect(app).toEqual(await read(router(formRequest({ grant_type: DEVICE_CODE, device_code: held[1].device_code, ...fields }))))
        return [app.status, (JSON.parse(app.body) as { error: string }).error]
      }
      expect(await consolePoll({ client_id: console.id, client_secret: secret })).toEqual([400, 'authorization_pending'])
      expect(await consolePoll({ client_id: console.id })).toEqual([401, 'invalid_client'])
    } finally {
      finds.mockRestore()
    }
  })

  test('a body answered from memory is known again by its bytes, without parsing: only for the same bytes, no Authorization header, its client still public with the grant, its code still pending', async () => {
    const [first, second] = await twins()
    const body = (code: string) => new TextEncoder().encode(new URLSearchParams(pollOf(code)).toString())
    const request = (headers: Record<string, string> = {}) => formRequest('', headers)
    const bytes = body(first.device_code)
    const key = pollBodyKey(bytes)!
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/)
    // Not known before memory answered it; longer than any plain poll: never looked up.
    expect(pendingFromBody(t.ctx, request(), key)).toBeUndefined()
    expect(pollBodyKey(new Uint8Array(513))).toBeUndefined()
    // The first poll reads the code (through the router's path), the second is answered from memory and learns its body.
    expect((await read(t.app.respond(new Request(TOKEN, { method: 'POST', headers: { 'content-type': FORM }, body: bytes })))).body).toContain('authorization_pending')
    t.clock.advance(5_000)
    expect((await read(t.app.respond(new Request(TOKEN, { method: 'POST', headers: { 'content-type': FORM }, body: bytes })))).body).toContain('authorization_pending')
    t.clock.advance(5_000)
    const known = await read(pendingFromBody(t.ctx, request(), key)!)
    expect([known.status, JSON.parse(known.body)]).toEqual([400, { error: 'authorization_pending', error_description: 'the user has not finished yet' }])
    // Too soon after that poll: not pending (slow_down is the full path's).
    expect(pendingFromBody(t.ctx, request(), key)).toBeUndefined()
    t.clock.advance(5_000)
    // Another body (another code), or the same with an Authorization header: not answered from it.
    expect(pendingFromBody(t.ctx, request(), pollBodyKey(body(second.device_code))!)).toBeUndefined()
    expect(pendingFromBody(t.ctx, request({ authorization: `Basic ${btoa(`${tv}:`)}` }), key)).toBeUndefined()
    // The person allows: the code is no longer pending, and the same bytes are no longer answered from memory.
    await decide(first.user_code, 'allow')
    expect(pendingFromBody(t.ctx, request(), key)).toBeUndefined()
    const tokens = await t.app.respond(new Request(TOKEN, { method: 'POST', headers: { 'content-type': FORM }, body: bytes }))
    expect(tokens.status).toBe(200)
  })

  test('a body known by its bytes whose client was deleted, or lost the grant, is not answered from memory', async () => {
    const pending = await twins()
    const bytes = new TextEncoder().encode(new URLSearchParams(pollOf(pending[0].device_code)).toString())
    const key = pollBodyKey(bytes)!
    for (let i = 0; i < 2; i++, t.clock.advance(5_000)) await t.app.respond(new Request(TOKEN, { method: 'POST', headers: { 'content-type': FORM }, body: bytes }))
    expect((await pendingFromBody(t.ctx, formRequest(''), key))?.status).toBe(400)
    t.clock.advance(5_000)
    const stored = (await findClient(t.store, tv))!
    expect(await updateClient(t.store, tv, { ...stored, grantTypes: ['authorization_code'], redirectUris: ['https://tv.example/cb'], postLogoutRedirectUris: [], requireMfa: false, requirePar: false, jwks: null, jwksUri: null, authMethod: null })).toBe(true)
    expect(pendingFromBody(t.ctx, formRequest(''), key)).toBeUndefined()
    const refused = await read(t.app.respond(new Request(TOKEN, { method: 'POST', headers: { 'content-type': FORM }, body: bytes })))
    expect([refused.status, JSON.parse(refused.body).error]).toEqual([400, 'unauthorized_client'])
    expect(await deleteClient(t.store, tv)).toBe(true)
    expect(pendingFromBody(t.ctx, formRequest(''), key)).toBeUndefined()
    const gone = await read(t.app.respond(new Request(TOKEN, { method: 'POST', headers: { 'content-type': FORM }, body: bytes })))
    expect([gone.status, JSON.parse(gone.body).error]).toEqual([401, 'invalid_client'])
  })

  test('refusals of the request: an unknown code, no code, another client, a client not given the grant, a repeated parameter, bad UTF-8, a body too large (declared or streamed), a bad Host', async () => {
    const pair = await twins()
    const unknown = await both(() => formRequest(pollOf('lk_dc_nothing-here')))
    expect([unknown.status, unknown.json.error, unknown.viaRouter]).toEqual([400, 'invalid_grant', false])
    const missing = await both(() => formRequest({ grant_type: DEVICE_CODE, client_id: tv }))
    expect([missing.status, missing.json]).toEqual([400, { error: 'invalid_request', error_description: 'device_code is required' }])
    // An empty value is an omitted one (RFC 6749 §3.2).
    expect((await both(() => formRequest(`grant_type=${encodeURIComponent(DEVICE_CODE)}&device_code=&client_id=${tv}`))).json.error_description).toBe('device_code is required')
    const other = (await createClient(t.store, { name: 'Other TV', redirectUris: [], public: true, skipConsent: false, grantTypes: [DEVICE_CODE] }, t.clock.now())).client.id
    expect((await both((side) => formRequest(pollOf(pair[side].device_code, { client_id: other })))).json.error).toBe('invalid_grant')
    const web = (await createClient(t.store, { name: 'Web', redirectUris: ['https://app.example/cb'], public: true, skipConsent: false }, t.clock.now())).client.id
    const notGiven = await both((side) => formRequest(pollOf(pair[side].device_code, { client_id: web })))
    expect([notGiven.status, notGiven.json.error]).toEqual([400, 'unauthorized_client'])
    const repeated = await both((side) => formRequest(`grant_type=${encodeURIComponent(DEVICE_CODE)}&device_code=${pair[side].device_code}&device_code=x&client_id=${tv}`))
    expect([repeated.status, repeated.json, repeated.viaRouter]).toEqual([400, { error: 'invalid_request', error_description: 'parameter "device_code" is repeated' }, false])
    const utf8 = await both(() => new Request(TOKEN, { method: 'POST', headers: { 'content-type': FORM }, body: new Uint8Array([0x67, 0x3d, 0xff, 0xfe]) }))
    expect([utf8.status, utf8.json.error_description]).toEqual([400, 'request body is not valid UTF-8'])
    const declared = await both(() => formRequest(pollOf('x'), { 'content-length': String(2 * 1_048_576) }))
    expect([declared.status, declared.json.error]).toEqual([413, 'request_too_large'])
    const streamed = await both(() => formRequest(`grant_type=${encodeURIComponent(DEVICE_CODE)}&device_code=${'x'.repeat(1_048_576)}`))
    expect([streamed.status, streamed.json.error]).toEqual([413, 'request_too_large'])
    const host = await both(() => formRequest(pollOf('x'), { host: 'bad host' }))
    expect([host.status, host.json.error_description]).toEqual([400, 'the Host header is not a valid host[:port]'])
    // A query string and the Content-Type's parameters change nothing.
    const dressed = await both((side) => formRequest(pollOf(pair[side].device_code), { 'content-type': `${FORM}; charset=UTF-8` }, `${TOKEN}?via=query`))
    expect([dressed.json.error, dressed.viaRouter]).toEqual(['authorization_pending', false])
  })

  test('client authentication: a confidential client by Basic or in the body; a wrong secret is 401 with the Basic challenge; no client is 401; a bad assertion is refused', async () => {
    const made = await createClient(t.store, { name: 'Console', redirectUris: [], public: false, skipConsent: false, grantTypes: [DEVICE_CODE] }, t.clock.now())
    const { client, secret } = made as { client: { id: string }; secret: string }
    const pair = await twins(client.id, { client_secret: secret })
    const basic = (id: string, s: string) => ({ authorization: `Basic ${btoa(`${encodeURIComponent(id)}:${encodeURIComponent(s)}`)}` })
    const byBasic = await both((side) => formRequest({ grant_type: DEVICE_CODE, device_code: pair[side].device_code }, basic(client.id, secret)))
    expect([byBasic.json.error, byBasic.viaRouter]).toEqual(['authorization_pending', false])
    t.clock.advance(5_000)
    expect((await both((side) => formRequest({ grant_type: DEVICE_CODE, device_code: pair[side].device_code, client_id: client.id, client_secret: secret }))).json.error).toBe('authorization_pending')
    const wrong = await both((side) => formRequest({ grant_type: DEVICE_CODE, device_code: pair[side].device_code }, basic(client.id, 'not the secret')))
    expect([wrong.status, wrong.json.error, Object.fromEntries(wrong.headers)['www-authenticate']]).toEqual([401, 'invalid_client', 'Basic realm="latchkey", charset="UTF-8"'])
    const nobody = await both((side) => formRequest({ grant_type: DEVICE_CODE, device_code: pair[side].device_code }))
    expect([nobody.status, nobody.json.error_description]).toEqual([401, 'client authentication is required'])
    const noSecret = await both((side) => formRequest({ grant_type: DEVICE_CODE, device_code: pair[side].device_code, client_id: client.id }))
    expect([noSecret.status, noSecret.json.error]).toEqual([401, 'invalid_client'])
    const badType = await both((side) => formRequest({ grant_type: DEVICE_CODE, device_code: pair[side].device_code, client_assertion_type: 'x', client_assertion: 'y' }))
    expect([badType.status, badType.json.error]).toEqual([400, 'invalid_request'])
    const garbage = await both((side) => formRequest({ grant_type: DEVICE_CODE, device_code: pair[side].device_code, client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: 'not.a.jwt' }))
    expect([garbage.status, garbage.json.error, garbage.viaRouter]).toEqual([401, 'invalid_client', false])
  })

  test('a private_key_jwt client polls with an assertion (each used once): pending; the same assertion again is refused', async () => {
    const pair = await generateKeyPair('ES256', { extractable: true })
    const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256' }] })
    const console_ = (await createClient(t.store, { name: 'Signed console', redirectUris: [], public: false, skipConsent: false, grantTypes: [DEVICE_CODE], authMethod: 'private_key_jwt', jwks }, t.clock.now())).client
    const sign = () =>
      new SignJWT({ jti: crypto.randomUUID() }).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setIssuer(console_.id).setSubject(console_.id).setAudience(ORIGIN).setIssuedAt(Math.floor(t.clock.now() / 1000)).setExpirationTime(Math.floor(t.clock.now() / 1000) + 60).sign(pair.privateKey)
    const signedPoll = (deviceCode: string, jwt: string) => formRequest({ grant_type: DEVICE_CODE, device_code: deviceCode, client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: jwt })
    const codes = [] as string[]
    for (let i = 0; i < 2; i++) {
      const res = await t.handle('/api/oauth/device_authorization', { method: 'POST', headers: { 'content-type': FORM }, body: new URLSearchParams({ scope: 'openid', client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: await sign() }) })
      expect(res.status).toBe(200)
      codes.push(((await res.json()) as { device_code: string }).device_code)
    }
    const jwts = [await sign(), await sign()]
    const pending = await both((side) => signedPoll(codes[side]!, jwts[side]!))
    expect([pending.json.error, pending.viaRouter]).toEqual(['authorization_pending', false])
    t.clock.advance(5_000)
    const replayed = await both((side) => signedPoll(codes[side]!, jwts[side]!))
    expect([replayed.status, replayed.json.error]).toEqual([401, 'invalid_client'])
  })

  test('a fault is the app’s own 500 with a request id, nothing of it in the body; the database unavailable is 503 with Retry-After', async () => {
    const pair = await twins()
    // Codes held nowhere (as one issued by another instance): each poll asks the database.
    const peek = t.store.devices.peekDeviceCode.bind(t.store.devices)
    t.store.devices.peekDeviceCode = () => undefined
    const find = t.store.devices.findDeviceCode.bind(t.store.devices)
    t.store.devices.findDeviceCode = () => Promise.reject(new Error('disk on fire: secret-detail'))
    const fault = await both((side) => formRequest(pollOf(pair[side].device_code)))
    expect([fault.status, fault.json.error, fault.viaRouter, fault.body.includes('secret-detail')]).toEqual([500, 'server_error', false, false])
    t.store.devices.findDeviceCode = () => {
      throw new DatabaseUnavailable(new Error('connection refused'))
    }
    const down = await both((side) => formRequest(pollOf(pair[side].device_code)))
    expect([down.status, down.json.error, Object.fromEntries(down.headers)['retry-after']]).toEqual([503, 'temporarily_unavailable', '1'])
    t.store.devices.findDeviceCode = find
    t.store.devices.peekDeviceCode = peek
    expect((await both((side) => formRequest(pollOf(pair[side].device_code)))).json.error).toBe('authorization_pending')
  })
})

describe('anything else meets the router, as before', () => {
  test('another grant, no grant, an unknown grant: the router answers, with the body the fast path read', async () => {
    const job = (await createClient(t.store, { name: 'Job', redirectUris: [], public: false, skipConsent: false, grantTypes: ['client_credentials'], allowedScopes: [] }, t.clock.now())) as { client: { id: string }; secret: string }
    const cc = await both(() => formRequest({ grant_type: 'client_credentials', client_id: job.client.id, client_secret: job.secret }))
    expect([cc.status, cc.json.error, cc.viaRouter]).toEqual([400, 'invalid_target', true])
    const none = await both(() => formRequest({ client_id: tv }))
    expect([none.status, none.json, none.viaRouter]).toEqual([400, { error: 'invalid_request', error_description: 'grant_type is required' }, true])
    const unknown = await both(() => formRequest({ grant_type: 'password', client_id: tv }))
    expect([unknown.status, unknown.json.error, unknown.viaRouter]).toEqual([400, 'unsupported_grant_type', true])
  })

  test('a poll sent as JSON, or to another path, is the router’s (as before)', async () => {
    const pair = await twins()
    const json = await both((side) => new Request(TOKEN, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(pollOf(pair[side].device_code)) }))
    expect([json.json.error, json.viaRouter]).toEqual(['authorization_pending', true])
    const typed = await both(() => new Request(TOKEN, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...pollOf('x'), device_code: 5 }) }))
    expect([typed.status, typed.json, typed.viaRouter]).toEqual([400, { error: 'invalid_request', error_description: 'device_code is invalid' }, true])
    const get = await both(() => new Request(TOKEN))
    expect([get.status, get.json.error, get.viaRouter]).toEqual([405, 'method_not_allowed', true])
    const text = await both(() => new Request(TOKEN, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'grant_type=x' }))
    expect([text.status, text.json.error, text.viaRouter]).toEqual([400, 'invalid_request', true])
  })
})
