import { describe, expect, test } from 'bun:test'
import { DYNAMIC_CLIENT_UNUSED_MS, issueRegistrationToken } from '../../src/oauth/dynamic-clients'
import { createClient } from '../../src/oauth/clients'
import { ORIGIN, addUser, authorizePath, cookieHeader, createTestApp, mintTokenPair, signIn, type TestApp } from '../helpers'

const register = (t: TestApp, body: unknown, headers: Record<string, string> = {}) =>
  t.handle('/api/oauth/register', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })

const MCP_CLIENT = { client_name: 'VS Code', redirect_uris: ['http://127.0.0.1/', 'https://vscode.dev/redirect'], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] }

async function expectError(res: Response, status: number, error: string, description?: string) {
  expect(res.status).toBe(status)
  const body = (await res.json()) as { error: string; error_description: string }
  expect(body.error).toBe(error)
  if (description) expect(body.error_description).toBe(description)
}

describe('dynamic client registration (RFC 7591, RFC 7592)', () => {
  test('off by default: the endpoint does not exist and the metadata does not name it', async () => {
    const t = await createTestApp()
    expect((await register(t, MCP_CLIENT)).status).toBe(404)
    const metadata = (await (await t.handle('/.well-known/oauth-authorization-server')).json()) as Record<string, unknown>
    expect(metadata).not.toHaveProperty('registration_endpoint')
  })

  test('open: a public client gets client_id, a registration access token and URI, and no client_secret member at all', async () => {
    const t = await createTestApp({ DYNAMIC_REGISTRATION: 'open' })
    for (const doc of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration'])
      expect(((await (await t.handle(doc)).json()) as Record<string, unknown>).registration_endpoint).toBe(`${ORIGIN}/api/oauth/register`)
    const res = await register(t, MCP_CLIENT)
    expect(res.status).toBe(201)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const body = (await res.json()) as Record<string, unknown>
    expect(Object.keys(body).sort()).toEqual(['client_id', 'client_id_issued_at', 'client_name', 'grant_types', 'id_token_signed_response_alg', 'redirect_uris', 'registration_access_token', 'registration_client_uri', 'response_types', 'token_endpoint_auth_method'])
    expect(body).toMatchObject({
      client_name: 'VS Code',
      redirect_uris: MCP_CLIENT.redirect_uris,
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      id_token_signed_response_alg: 'RS256',
      registration_client_uri: `${ORIGIN}/api/oauth/register/${body.client_id}`,
      client_id_issued_at: Math.floor(t.clock.now() / 1000),
    })
    // Kept hashed only.
    const row = (await t.row('SELECT kind, registration_token_hash, secret_hash FROM clients')) as { kind: string; registration_token_hash: string; secret_hash: string | null }
    expect(row).toMatchObject({ kind: 'dynamic', secret_hash: null })
    expect(row!.registration_token_hash).not.toBe(body.registration_access_token)

    // RFC 7592: read with the registration access token; anything else is 401; DELETE is 204.
    const uri = new URL(body.registration_client_uri as string)
    const auth = { authorization: `Bearer ${body.registration_access_token}` }
    const read = await t.handle(uri.pathname, { headers: auth })
    expect(read.status).toBe(200)
    expect(await read.json()).toMatchObject({ client_id: body.client_id, client_name: 'VS Code', token_endpoint_auth_method: 'none' })
    await expectError(await t.handle(uri.pathname, { headers: { authorization: 'Bearer lk_ra_wrong' } }), 401, 'invalid_token')
    await expectError(await t.handle(uri.pathname), 401, 'invalid_token')
    const deleted = await t.handle(uri.pathname, { method: 'DELETE', headers: auth })
    expect(deleted.status).toBe(204)
    expect(await deleted.text()).toBe('')
    expect(await t.rows('SELECT id FROM clients')).toEqual([])
    await expectError(await t.handle(uri.pathname, { headers: auth }), 401, 'invalid_token')
  })

  test('a confidential client gets its secret once, and authenticates with it', async () => {
    const t = await createTestApp({ DYNAMIC_REGISTRATION: 'open' })
    // OpenID Connect Dynamic Client Registration: it may ask for ES256 ID tokens.
    const res = await register(t, { client_name: 'Agent', redirect_uris: ['https://agent.example/cb'], token_endpoint_auth_method: 'client_secret_post', id_token_signed_response_alg: 'ES256' })
    expect(res.status).toBe(201)
    const body = (await res.json()) as { client_id: string; client_secret: string; client_secret_expires_at: number; id_token_signed_response_alg: string }
    expect(body.id_token_signed_response_alg).toBe('ES256')
    expect((await t.store.clients.findClient(body.client_id))?.idTokenAlg).toBe('ES256')
    expect(body.client_secret).toStartWith('lk_cs_')
    expect(body.client_secret_expires_at).toBe(0)
    // Introspection needs a confidential client: it authenticates.
    const introspect = await t.handle('/api/oauth/introspect', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: 'lk_at_1.x', client_id: body.client_id, client_secret: body.client_secret }),
    })
    expect(await introspect.json()).toEqual({ active: false })
  })

  test('bad metadata: invalid_redirect_uri or invalid_client_metadata, and nothing is stored', async () => {
    const t = await createTestApp({ DYNAMIC_REGISTRATION: 'open' })
    const cases: Array<[unknown, string, string]> = [
      [{ ...MCP_CLIENT, redirect_uris: ['http://app.example/cb'] }, 'invalid_redirect_uri', 'redirect URI "http://app.example/cb" must be https:// or http:// on a loopback address'],
      [{ ...MCP_CLIENT, redirect_uris: ['cursor://anysphere.cursor/cb'] }, 'invalid_redirect_uri', 'redirect URI "cursor://anysphere.cursor/cb" must be https:// or http:// on a loopback address'],
      [{ ...MCP_CLIENT, redirect_uris: ['https://app.example/cb#x'] }, 'invalid_redirect_uri', 'redirect URI "https://app.example/cb#x" must not have a fragment'],
      [{ ...MCP_CLIENT, redirect_uris: [] }, 'invalid_redirect_uri', 'redirect_uris must list at least one redirect URI'],
      [{ client_name: 'x' }, 'invalid_redirect_uri', 'redirect_uris must list at least one redirect URI'],
      [{ ...MCP_CLIENT, redirect_uris: Array.from({ length: 21 }, (_, i) => `https://a.example/${i}`) }, 'invalid_client_metadata', 'redirect_uris must be an array of at most 20 strings'],
      [{ ...MCP_CLIENT, token_endpoint_auth_method: 'private_key_jwt' }, 'invalid_client_metadata', 'token_endpoint_auth_method must be one of none, client_secret_basic, client_secret_post'],
      [{ ...MCP_CLIENT, grant_types: ['client_credentials'] }, 'invalid_client_metadata', 'grant_types may only contain authorization_code, refresh_token; got "client_credentials"'],
      [{ ...MCP_CLIENT, response_types: ['token'] }, 'invalid_client_metadata', 'response_types may only contain code; got "token"'],
      [{ ...MCP_CLIENT, client_name: 'x'.repeat(201) }, 'invalid_client_metadata', 'client_name must be at most 200 characters'],
      [{ ...MCP_CLIENT, client_uri: 'https://a.example/'.padEnd(2001, 'x') }, 'invalid_client_metadata', 'client_uri must be at most 2000 characters, without control characters'],
      [{ ...MCP_CLIENT, client_name: 42 }, 'invalid_client_metadata', 'client_name must be a string'],
      [{ ...MCP_CLIENT, id_token_signed_response_alg: 'none' }, 'invalid_client_metadata', 'id_token_signed_response_alg must be one of RS256, ES256, EdDSA'],
    ]
    for (const [body, error, description] of cases) await expectError(await register(t, body), 400, error, description)
    await expectError(await register(t, [MCP_CLIENT]), 400, 'invalid_request', 'request body must be a JSON object')
    expect(await t.rows('SELECT id FROM clients')).toEqual([])
  })

  test('open registration is throttled per client address (20 an hour), with Retry-After', async () => {
    const t = await createTestApp({ DYNAMIC_REGISTRATION: 'open' })
    for (let i = 0; i < 20; i++) expect((await register(t, MCP_CLIENT)).status).toBe(201)
    const refused = await register(t, MCP_CLIENT)
    await expectError(refused, 429, 'too_many_requests')
    expect(Number(refused.headers.get('retry-after'))).toBe(3600)
    expect(await t.rows('SELECT id FROM clients')).toHaveLength(20)
  })

  test('token: an initial access token from `latchkey client registration-token` is required', async () => {
    const t = await createTestApp({ DYNAMIC_REGISTRATION: 'token' })
    const missing = await register(t, MCP_CLIENT)
    await expectError(missing, 401, 'invalid_token')
    expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="latchkey"')
    await expectError(await register(t, MCP_CLIENT, { authorization: 'Bearer lk_ia_nope' }), 401, 'invalid_token', 'the initial access token is invalid or expired')
    const { token } = await issueRegistrationToken(t, t.clock.now())
    expect((await register(t, MCP_CLIENT, { authorization: `Bearer ${token}` })).status).toBe(201)
    expect((await register(t, MCP_CLIENT, { authorization: `Bearer ${token}` })).status).toBe(201)
    t.clock.advance(7 * 24 * 3600_000)
    await expectError(await register(t, MCP_CLIENT, { authorization: `Bearer ${token}` }), 401, 'invalid_token')
  })

  test('the consent page says the app is not verified by your administrator', async () => {
    const t = await createTestApp({ DYNAMIC_REGISTRATION: 'open' })
    await addUser(t)
    const jar = await signIn(t)
    const { client_id } = (await (await register(t, { ...MCP_CLIENT, token_endpoint_auth_method: 'client_secret_basic' })).json()) as { client_id: string }
    const page = await t.handle(authorizePath({ client_id, redirect_uri: 'https://vscode.dev/redirect', scope: 'openid', state: 's' }), { headers: { cookie: cookieHeader(jar) } })
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('This app registered itself: it is <strong>not verified by your administrator</strong>.')
  })

  test('a dynamically registered app is deleted after 30 days unused; one used since stays, and so do the operator\'s', async () => {
    const t = await createTestApp({ DYNAMIC_REGISTRATION: 'open' })
    const user = await addUser(t)
    const idle = ((await (await register(t, MCP_CLIENT)).json()) as { client_id: string }).client_id
    const busy = ((await (await register(t, MCP_CLIENT)).json()) as { client_id: string }).client_id
    await createClient(t.store, { name: 'Operator app', redirectUris: ['https://op.example/cb'], public: false, skipConsent: false }, t.clock.now())
    t.clock.advance(DYNAMIC_CLIENT_UNUSED_MS - 1000)
    await mintTokenPair(t, busy, user.id, 'openid')
    t.clock.advance(2000)
    expect(await t.store.clients.deleteUnusedClients(t.clock.now() - DYNAMIC_CLIENT_UNUSED_MS, t.clock.now())).toBe(1)
    expect((await t.rows('SELECT id FROM clients')).map((r) => (r as { id: string }).id)).not.toContain(idle)
    expect(await t.rows('SELECT kind FROM clients ORDER BY kind')).toEqual([{ kind: 'dynamic' }, { kind: 'operator' }])
  })
})
