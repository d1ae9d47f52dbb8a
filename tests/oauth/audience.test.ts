import { beforeEach, describe, expect, test } from 'bun:test'
import { createResource } from '../../src/oauth/resources'
import { verifyJwt } from '../../src/oidc/jwt'
import {
  CALLBACK,
  ORIGIN,
  addClient,
  authorizeAndAllow,
  authorizePath,
  bearer,
  cookieHeader,
  signedInApp,
  tokenRequest,
  type TestApp,
} from '../helpers'

const MCP = 'https://mcp.example.com'

let t: TestApp
let client: Awaited<ReturnType<typeof addClient>>
let jar: Record<string, string>
/** A confidential client the resource names as an introspector (the MCP server's own). */
let introspector: Awaited<ReturnType<typeof addClient>>

beforeEach(async () => {
  ;({ t, client, jar } = await signedInApp())
  introspector = await addClient(t, { name: 'MCP server' })
  await createResource(t.store, { uri: MCP, name: 'Home MCP', scopes: ['tools:read=Read your tools', 'tools:call=Run tools'], introspectors: [introspector.client.id] }, t.clock.now())
})

const params = (extra: Record<string, string | undefined> = {}) => ({ client_id: client.client.id, redirect_uri: CALLBACK, scope: 'openid tools:read', state: 's', resource: MCP, ...extra })
const get = (p: Record<string, string | undefined>) => t.handle(authorizePath(p), { headers: { cookie: cookieHeader(jar) } })
const basic = (c: { client: { id: string }; secret: string | null }) => ({ authorization: `Basic ${btoa(`${c.client.id}:${c.secret}`)}` })

function redirectError(res: Response): Record<string, string | null> {
  expect(res.status).toBe(303)
  const url = new URL(res.headers.get('location')!)
  expect(url.origin + url.pathname).toBe(CALLBACK)
  return { error: url.searchParams.get('error'), state: url.searchParams.get('state'), code: url.searchParams.get('code') }
}

async function exchange(extra: Record<string, string | undefined> = {}, p = params()) {
  const callback = await authorizeAndAllow(t, jar, p)
  return tokenRequest(t, { grant_type: 'authorization_code', code: callback.searchParams.get('code')!, client_id: client.client.id, client_secret: client.secret!, redirect_uri: CALLBACK, ...extra })
}

async function introspect(token: string, who = client) {
  const res = await t.handle('/api/oauth/introspect', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...basic(who) }, body: new URLSearchParams({ token }) })
  expect(res.status).toBe(200)
  return (await res.json()) as Record<string, unknown>
}

describe('resource indicators at /oauth/authorize (RFC 8707)', () => {
  test("the consent page names the resource and shows its scopes in its words; the form carries resource", async () => {
    const res = await get(params({ scope: 'openid tools:read tools:call' }))
    expect(res.status).toBe(200)
    const html = await res.text()
    expect(html).toContain('Demo App</span> wants to access <strong>Home MCP</strong>')
    expect(html).toContain('<li data-scope="tools:read">Read your tools</li>')
    expect(html).toContain('<li data-scope="tools:call">Run tools</li>')
    expect(html).toContain('<li data-scope="openid">Sign you in with your account</li>')
    expect(html).toContain(`name="resource" value="${MCP}"`)
  })

  test('an unregistered resource, several resources, or a malformed one is invalid_target at the client', async () => {
    for (const resource of ['https://other.example', 'not a uri', 'https://mcp.example.com#frag']) {
      expect(redirectError(await get(params({ resource })))).toEqual({ error: 'invalid_target', state: 's', code: null })
    }
    const twice = `${authorizePath(params())}&resource=${encodeURIComponent('https://other.example')}`
    expect(redirectError(await t.handle(twice, { headers: { cookie: cookieHeader(jar) } })).error).toBe('invalid_target')
  })

  test("a resource's scopes need its resource; the settings API's scopes cannot be asked for with one", async () => {
    expect(redirectError(await get(params({ resource: undefined }))).error).toBe('invalid_scope')
    expect(redirectError(await get(params({ scope: 'tools:read settings:read' }))).error).toBe('invalid_scope')
    expect(redirectError(await get(params({ scope: 'tools:write' }))).error).toBe('invalid_scope')
    expect((await get(params({ scope: 'openid profile email offline_access tools:call' }))).status).toBe(200)
  })

  test('a consent covers one resource: consent for the app itself does not cover the resource, nor the other way round', async () => {
    await authorizeAndAllow(t, jar, { client_id: client.client.id, redirect_uri: CALLBACK, scope: 'openid', state: 's' })
    expect((await get(params({ scope: 'openid' }))).status).toBe(200)
    await authorizeAndAllow(t, jar, params())
    expect(redirectError(await get(params())).code).toBeString()
    // A trailing slash names the same resource and its consent.
    expect(redirectError(await get(params({ resource: `${MCP}/` }))).code).toBeString()
    await createResource(t.store, { uri: 'https://files.example', name: 'Files', scopes: ['tools:read=Read files'] }, t.clock.now())
    expect((await get(params({ resource: 'https://files.example' }))).status).toBe(200)
    expect(await t.rows("SELECT resource, scope FROM consents ORDER BY resource")).toEqual([
      { resource: '', scope: 'openid' },
      { resource: MCP, scope: 'openid tools:read' },
    ])
  })

  test('the account page lists the app once, with what it may do for itself and for the resource', async () => {
    await authorizeAndAllow(t, jar, { client_id: client.client.id, redirect_uri: CALLBACK, scope: 'email', state: 's' })
    await authorizeAndAllow(t, jar, params())
    const html = await (await t.handle('/account', { headers: { cookie: cookieHeader(jar) } })).text()
    expect(html.match(/<strong>Demo App<\/strong>/g)).toHaveLength(1)
    expect(html).toContain('See your email address · Sign you in with your account · Read your tools')
  })
})

describe('audience-bound tokens', () => {
  test("the token is for the resource: introspection says aud, the settings API refuses it (401 invalid_token), userinfo answers", async () => {
    const res = await exchange()
    expect(res.status).toBe(200)
    const body = (await res.json()) as { access_token: string; refresh_token: string; scope: string }
    expect(body.scope).toBe('openid tools:read')
    expect(body.access_token).toStartWith('lk_at_')
    expect(await introspect(body.access_token)).toMatchObject({ active: true, aud: MCP, scope: 'openid tools:read', client_id: client.client.id })
    expect(await introspect(body.refresh_token)).toMatchObject({ active: true, aud: MCP, token_type: 'refresh_token' })

    const settings = await t.handle(`/api/settings?client_id=${client.client.id}`, { headers: bearer(body.access_token) })
    expect(settings.status).toBe(401)
    expect(await settings.json()).toEqual({ error: 'invalid_token', error_description: 'the access token was issued for another resource' })
    expect(settings.headers.get('www-authenticate')).toBe(`Bearer realm="latchkey", error="invalid_token", resource_metadata="${ORIGIN}/.well-known/oauth-protected-resource"`)

    const userinfo = await t.handle('/api/oauth/userinfo', { headers: bearer(body.access_token) })
    expect(userinfo.status).toBe(200)
    expect(await userinfo.json()).toMatchObject({ sub: expect.any(String) })
  })

  test("the resource's --introspector clients may introspect its tokens; other clients learn nothing", async () => {
    const { access_token } = (await (await exchange()).json()) as { access_token: string }
    expect(await introspect(access_token, introspector)).toMatchObject({ active: true, aud: MCP, client_id: client.client.id })
    const stranger = await addClient(t, { name: 'Stranger' })
    expect(await introspect(access_token, stranger)).toEqual({ active: false })
  })

  test('a token for Latchkey itself has no aud, and works at the settings API as before', async () => {
    const res = await exchange({}, { client_id: client.client.id, redirect_uri: CALLBACK, scope: 'settings:read', state: 's', resource: `${ORIGIN}/api` })
    const { access_token } = (await res.json()) as { access_token: string }
    expect(await introspect(access_token)).not.toHaveProperty('aud')
    expect((await t.handle(`/api/settings?client_id=${client.client.id}`, { headers: bearer(access_token) })).status).toBe(200)
  })

  test('the token endpoint: resource may repeat the authorization\'s (with or without a slash), not name another (invalid_target)', async () => {
    expect((await exchange({ resource: `${MCP}/` })).status).toBe(200)
    for (const resource of ['https://other.example', `${ORIGIN}/api`]) {
      const res = await exchange({ resource })
      expect(res.status).toBe(400)
      expect(((await res.json()) as { error: string }).error).toBe('invalid_target')
    }
  })

  test('a refresh keeps the audience; naming another resource is invalid_target and changes nothing', async () => {
    const first = (await (await exchange()).json()) as { refresh_token: string }
    const other = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: client.client.id, client_secret: client.secret!, resource: `${ORIGIN}/api` })
    expect(other.status).toBe(400)
    expect(await other.json()).toEqual({ error: 'invalid_target', error_description: 'resource is not the one the authorization was for' })
    const refreshed = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: client.client.id, client_secret: client.secret!, resource: MCP, scope: 'tools:read' })
    expect(refreshed.status).toBe(200)
    const body = (await refreshed.json()) as { access_token: string; scope: string }
    expect(body.scope).toBe('tools:read')
    expect(await introspect(body.access_token)).toMatchObject({ active: true, aud: MCP })
  })

  test('deleting the resource revokes its tokens and consents', async () => {
    const { access_token } = (await (await exchange()).json()) as { access_token: string }
    expect(await t.store.resources.deleteResource(MCP)).toBe(true)
    expect(await introspect(access_token)).toEqual({ active: false })
    expect(await t.rows("SELECT scope FROM consents WHERE resource <> ''")).toEqual([])
  })
})

describe('--token-format jwt: RFC 9068 access tokens', () => {
  const JWT_API = 'https://api.example.org/v1'
  beforeEach(async () => {
    await createResource(t.store, { uri: JWT_API, name: 'Photos API', scopes: ['photos:read=See your photos'], tokenFormat: 'jwt', introspectors: [introspector.client.id] }, t.clock.now())
  })

  test('the access token is a JWT (typ at+jwt) with iss sub aud client_id scope exp iat jti, signed with the ID-token keys', async () => {
    const res = await exchange({}, params({ resource: JWT_API, scope: 'photos:read' }))
    expect(res.status).toBe(200)
    const { access_token, expires_in } = (await res.json()) as { access_token: string; expires_in: number }
    const jwks = (await (await t.handle('/.well-known/jwks.json')).json()) as { keys: Array<JsonWebKey & { kid: string }> }
    const keys = new Map(await Promise.all(jwks.keys.map(async (k) => [k.kid, { kid: k.kid, alg: 'RS256' as const, key: await crypto.subtle.importKey('jwk', k, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, ['verify']) }] as const)))
    const verified = await verifyJwt(access_token, (kid) => keys.get(kid))
    expect(verified?.header).toMatchObject({ alg: 'RS256', typ: 'at+jwt' })
    const claims = verified!.payload
    expect(Object.keys(claims).sort()).toEqual(['aud', 'client_id', 'exp', 'iat', 'iss', 'jti', 'scope', 'sub'])
    expect(claims).toMatchObject({ iss: ORIGIN, aud: JWT_API, client_id: client.client.id, scope: 'photos:read' })
    expect((claims.exp as number) - (claims.iat as number)).toBe(expires_in)
    // The JWT is also what userinfo, introspection and revocation take.
    expect((await t.handle('/api/oauth/userinfo', { headers: bearer(access_token) })).status).toBe(200)
    expect(await introspect(access_token, introspector)).toMatchObject({ active: true, aud: JWT_API, sub: claims.sub })
    const revoked = await t.handle('/api/oauth/revoke', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...basic(client) }, body: new URLSearchParams({ token: access_token }) })
    expect(revoked.status).toBe(200)
    expect(await introspect(access_token, introspector)).toEqual({ active: false })
  })

  test('a forged or altered JWT is refused', async () => {
    const { access_token } = (await (await exchange({}, params({ resource: JWT_API, scope: 'photos:read' }))).json()) as { access_token: string }
    const [h, p, s] = access_token.split('.')
    const payload = JSON.parse(Buffer.from(p!, 'base64url').toString())
    const altered = `${h}.${Buffer.from(JSON.stringify({ ...payload, scope: 'photos:read photos:write' })).toString('base64url')}.${s}`
    expect(await introspect(altered, introspector)).toEqual({ active: false })
    expect((await t.handle('/api/oauth/userinfo', { headers: bearer(altered) })).status).toBe(401)
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url')}.${p}.`
    expect(await introspect(unsigned, introspector)).toEqual({ active: false })
  })

  test('a refresh issues a JWT again, for the same audience', async () => {
    const first = (await (await exchange({}, params({ resource: JWT_API, scope: 'photos:read' }))).json()) as { refresh_token: string }
    const res = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: client.client.id, client_secret: client.secret! })
    const { access_token } = (await res.json()) as { access_token: string }
    expect(JSON.parse(Buffer.from(access_token.split('.')[1]!, 'base64url').toString())).toMatchObject({ aud: JWT_API, scope: 'photos:read' })
  })
})
