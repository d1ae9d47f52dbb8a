import { beforeEach, describe, expect, test } from 'bun:test'
import { createClient, updateClient, findClient } from '../../src/oauth/clients'
import { createResource } from '../../src/oauth/resources'
import { addClient, addUser, bearer, createTestApp, mintTokenPair, ORIGIN, type TestApp, CALLBACK } from '../helpers'

/**
 * Issue 38, client credentials (RFC 6749 §4.4; SPEC "Machines and devices"): a confidential app's
 * own token, for a registered resource, with scopes among its --allowed-scope; no user.
 */
let t: TestApp
let job: { id: string; secret: string }

const REPORTS = 'https://reports.example'
const BILLING = 'https://billing.example'
const PURGE = { usedCodes: 3600_000, throttle: 3600_000, refreshGrace: 10_000, retiredKeys: 3600_000, mail: 7 * 24 * 3600_000, settingChanges: 30 * 86_400_000 }

beforeEach(async () => {
  t = await createTestApp()
  await createResource(t.store, { uri: REPORTS, name: 'Reports', scopes: ['reports:read=Read reports', 'reports:write=Write reports'] }, t.clock.now())
  await createResource(t.store, { uri: BILLING, name: 'Billing', scopes: ['billing:read=Read invoices'], tokenFormat: 'jwt' }, t.clock.now())
  const made = await createClient(
    t.store,
    { name: 'Nightly job', redirectUris: [], public: false, skipConsent: false, grantTypes: ['client_credentials'], allowedScopes: ['reports:read', 'billing:read'] },
    t.clock.now(),
  )
  job = { id: made.client.id, secret: made.secret! }
})

const basic = (id: string, secret: string) => ({ authorization: `Basic ${btoa(`${id}:${secret}`)}` })
function token(body: Record<string, string>, headers: Record<string, string> = basic(job.id, job.secret)) {
  return t.handle('/api/oauth/token', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(body) })
}
async function refused(res: Response, status: number, error: string) {
  expect(res.status).toBe(status)
  expect(((await res.json()) as { error: string }).error).toBe(error)
}
async function introspect(as: { id: string; secret: string }, value: string) {
  const res = await t.handle('/api/oauth/introspect', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...basic(as.id, as.secret) }, body: new URLSearchParams({ token: value }) })
  expect(res.status).toBe(200)
  return (await res.json()) as Record<string, unknown>
}

describe('client create|update: --grant, --allowed-scope', () => {
  test('client_credentials alone needs no redirect URI; stored and shown with its allowed scopes', async () => {
    const client = (await findClient(t.store, job.id))!
    expect(client.grantTypes).toEqual(['client_credentials'])
    expect(client.allowedScopes).toEqual(['reports:read', 'billing:read'])
    expect(client.redirectUris).toEqual([])
  })

  test('refusals: a public client, a scope no resource has, --allowed-scope without the grant, an unknown grant, no redirect URI with authorization_code', async () => {
    const base = { name: 'X', redirectUris: [] as string[], public: false, skipConsent: false }
    const now = t.clock.now()
    await expect(createClient(t.store, { ...base, public: true, grantTypes: ['client_credentials'] }, now)).rejects.toThrow('a public client cannot use client_credentials')
    await expect(createClient(t.store, { ...base, grantTypes: ['client_credentials'], allowedScopes: ['email'] }, now)).rejects.toThrow('--allowed-scope "email" is not a scope of a registered resource')
    await expect(createClient(t.store, { ...base, redirectUris: [CALLBACK], allowedScopes: ['reports:read'] }, now)).rejects.toThrow('--allowed-scope is for apps with --grant client_credentials')
    await expect(createClient(t.store, { ...base, grantTypes: ['password'] }, now)).rejects.toThrow('--grant must be one of')
    await expect(createClient(t.store, { ...base, grantTypes: ['client_credentials', 'authorization_code'] }, now)).rejects.toThrow('at least one --redirect-uri is required')
    expect((await t.store.clients.listClients()).length).toBe(1)
  })

  test('update changes grants and scopes, checked as at creation; a public app cannot gain client_credentials', async () => {
    const app = await addClient(t, { public: true })
    const client = (await findClient(t.store, app.client.id))!
    const next = { ...client, grantTypes: ['authorization_code', 'client_credentials'], allowedScopes: [] }
    await expect(updateClient(t.store, client.id, next)).rejects.toThrow('a public client cannot use client_credentials')
    const job2 = (await findClient(t.store, job.id))!
    expect(await updateClient(t.store, job.id, { ...job2, allowedScopes: ['reports:write'] })).toBe(true)
    expect((await findClient(t.store, job.id))!.allowedScopes).toEqual(['reports:write'])
  })
})

describe('POST /api/oauth/token grant_type=client_credentials', () => {
  test('token.issued is written in the token’s own transaction: with the audit writer down, the token is answered and its event is there', async () => {
    t.store.audit.record = () => Promise.reject(new Error('audit writer down'))
    const res = await token({ grant_type: 'client_credentials', scope: 'reports:read' })
    expect(res.status).toBe(200)
    const [issued] = await t.store.audit.list({ limit: 1 })
    expect([issued!.kind, issued!.userId, issued!.clientId, JSON.parse(issued!.detail!)]).toEqual(['token.issued', null, job.id, { grant: 'client_credentials', scope: 'reports:read' }])
  })

  test('a token for the one resource whose scopes were asked: no refresh token, no-store, sub = the client at introspection', async () => {
    const res = await token({ grant_type: 'client_credentials', scope: 'reports:read' })
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const body = (await res.json()) as Record<string, unknown>
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'scope', 'token_type'])
    expect(body).toMatchObject({ token_type: 'Bearer', scope: 'reports:read', expires_in: 3600 })
    const described = await introspect(job, body.access_token as string)
    expect(described).toMatchObject({ active: true, client_id: job.id, sub: job.id, aud: REPORTS, scope: 'reports:read', token_type: 'Bearer' })
    expect(described.groups).toBeUndefined()
    // The token cache answers the second time: the same answer.
    expect(await introspect(job, body.access_token as string)).toEqual(described)
  })

  test('client_secret_post works as Basic does; without scope, resource= gives the allowed scopes of that resource', async () => {
    const res = await token({ grant_type: 'client_credentials', resource: `${REPORTS}/`, client_id: job.id, client_secret: job.secret }, {})
    expect(res.status).toBe(200)
    expect(((await res.json()) as { scope: string }).scope).toBe('reports:read')
  })

  test('a --token-format jwt resource gets an RFC 9068 JWT whose sub is the client', async () => {
    const res = await token({ grant_type: 'client_credentials', scope: 'billing:read', resource: BILLING })
    expect(res.status).toBe(200)
    const jwt = ((await res.json()) as { access_token: string }).access_token
    const payload = JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString())
    expect(payload).toMatchObject({ iss: ORIGIN, sub: job.id, client_id: job.id, aud: BILLING, scope: 'billing:read' })
    expect(await introspect(job, jwt)).toMatchObject({ active: true, sub: job.id, aud: BILLING })
  })

  test('scopes of two resources: invalid_target; a scope not allowed or unknown: invalid_scope; Latchkey’s own API or an unknown resource: invalid_target', async () => {
    await refused(await token({ grant_type: 'client_credentials', scope: 'reports:read billing:read' }), 400, 'invalid_target')
    await refused(await token({ grant_type: 'client_credentials', scope: 'reports:write' }), 400, 'invalid_scope')
    await refused(await token({ grant_type: 'client_credentials', scope: 'nothing:here' }), 400, 'invalid_scope')
    await refused(await token({ grant_type: 'client_credentials', scope: 'reports:read', resource: BILLING }), 400, 'invalid_scope')
    await refused(await token({ grant_type: 'client_credentials', scope: 'reports:read', resource: `${ORIGIN}/api` }), 400, 'invalid_target')
    await refused(await token({ grant_type: 'client_credentials', scope: 'reports:read', resource: 'https://unknown.example' }), 400, 'invalid_target')
    // Both resources allowed and no scope or resource named: which one is ambiguous.
    await refused(await token({ grant_type: 'client_credentials' }), 400, 'invalid_target')
    expect(Number((await t.row('SELECT count(*) AS n FROM access_tokens'))!.n)).toBe(0)
  })

  test('an app not given the grant, a public app: unauthorized_client; a wrong secret: 401 invalid_client; the job may not refresh', async () => {
    const web = await addClient(t)
    await refused(await token({ grant_type: 'client_credentials', scope: 'reports:read' }, basic(web.client.id, web.secret)), 400, 'unauthorized_client')
    const spa = await addClient(t, { public: true })
    await refused(await token({ grant_type: 'client_credentials', scope: 'reports:read', client_id: spa.client.id }, {}), 400, 'unauthorized_client')
    await refused(await token({ grant_type: 'client_credentials', scope: 'reports:read' }, basic(job.id, 'wrong')), 401, 'invalid_client')
    await refused(await token({ grant_type: 'refresh_token', refresh_token: 'lk_rt_1.x' }), 400, 'unauthorized_client')
    await refused(await token({ grant_type: 'authorization_code', code: 'x', redirect_uri: CALLBACK }), 400, 'unauthorized_client')
  })

  test('userinfo and the settings API refuse it (401 invalid_token); revocation ends it; the purge removes it once expired', async () => {
    const res = await token({ grant_type: 'client_credentials', scope: 'reports:read' })
    const access = ((await res.json()) as { access_token: string }).access_token
    const userinfo = await t.handle('/api/oauth/userinfo', { headers: bearer(access) })
    await refused(userinfo, 401, 'invalid_token')
    expect(userinfo.headers.get('www-authenticate')).toContain('error="invalid_token"')
    await refused(await t.handle('/api/settings', { headers: bearer(access) }), 401, 'invalid_token')
    const revoked = await t.handle('/api/oauth/revoke', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...basic(job.id, job.secret) }, body: new URLSearchParams({ token: access }) })
    expect(revoked.status).toBe(200)
    expect(await introspect(job, access)).toEqual({ active: false })
    await token({ grant_type: 'client_credentials', scope: 'reports:read' })
    t.clock.advance(3601_000)
    await t.store.purgeExpired(t.clock.now(), PURGE)
    expect(Number((await t.row('SELECT count(*) AS n FROM access_tokens'))!.n)).toBe(0)
  })

  test("a user's tokens and a client's live side by side: deleting a user leaves the client's token", async () => {
    const user = await addUser(t)
    const web = await addClient(t)
    const pair = await mintTokenPair(t, web.client.id, user.id, 'openid email')
    const access = ((await (await token({ grant_type: 'client_credentials', scope: 'reports:read' })).json()) as { access_token: string }).access_token
    await t.store.users.deleteUser(user.id)
    expect(await introspect({ id: web.client.id, secret: web.secret }, pair.access_token)).toEqual({ active: false })
    expect(await introspect(job, access)).toMatchObject({ active: true, sub: job.id })
  })
})

test('discovery lists client_credentials and the device grant', async () => {
  const doc = (await (await t.handle('/.well-known/openid-configuration')).json()) as { grant_types_supported: string[] }
  expect(doc.grant_types_supported).toEqual(['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code'])
})

describe('a resource registered while the server runs', () => {
  test('is found by its scopes at once: the list of resources a scope-only request searches is read again', async () => {
    // The list is read (and kept) by a first request that names only scopes.
    expect((await token({ grant_type: 'client_credentials', scope: 'reports:read' })).status).toBe(200)
    await createResource(t.store, { uri: 'https://tickets.example', name: 'Tickets', scopes: ['tickets:read=Read tickets'] }, t.clock.now())
    const now = t.clock.now()
    const helpdesk = await createClient(
      t.store,
      { name: 'Helpdesk job', redirectUris: [], public: false, skipConsent: false, grantTypes: ['client_credentials'], allowedScopes: ['tickets:read'] },
      now,
    )
    const res = await token({ grant_type: 'client_credentials', scope: 'tickets:read' }, basic(helpdesk.client.id, helpdesk.secret!))
    expect(res.status).toBe(200)
    expect(await introspect({ id: helpdesk.client.id, secret: helpdesk.secret! }, ((await res.json()) as { access_token: string }).access_token)).toMatchObject({ active: true, aud: 'https://tickets.example' })
  })
})
