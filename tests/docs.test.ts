import { beforeAll, describe, expect, test } from 'bun:test'
import pkg from '../package.json'
import { addClient, addUser, bearer, createTestApp, mintToken, type TestApp } from './helpers'

/**
 * Issue 37: the API documentation at /docs is complete — every route a client or an operator uses,
 * with request and response schemas and examples — and speaks of the product only.
 */

/**
 * The routes that are pages for people (and the assets they load), not API: each listed here by
 * hand, so a new route is documented or named here on purpose. /admin is pages throughout.
 */
const PAGES = [
  'GET /', 'GET /login', 'POST /login', 'GET /signup', 'POST /signup', 'POST /logout', 'POST /login/passkey', 'POST /login/passkey/options', 'GET /login/two-step', 'POST /login/two-step',
  'POST /login/two-step/cancel', 'POST /login/switch', 'GET /forgot-password', 'POST /forgot-password', 'GET /reset-password', 'POST /reset-password', 'GET /verify-email', 'POST /verify-email',
  'POST /verify-email/resend', 'GET /check-email', 'GET /confirm-email', 'POST /confirm-email', 'GET /setup', 'POST /setup', 'POST /setup/passkey/options', 'POST /setup/passkey',
  'GET /account', 'POST /account/revoke', 'POST /account/sign-out-everywhere', 'POST /account/sessions/sign-out', 'POST /account/sessions/sign-out-others', 'POST /account/email',
  'POST /account/profile', 'POST /account/password', 'POST /account/password/change', 'POST /account/password/remove', 'GET /account/delete', 'POST /account/delete', 'GET /account/data',
  'GET /account/data/delete', 'POST /account/data/delete', 'POST /account/passkeys', 'POST /account/passkeys/options', 'POST /account/passkeys/rename', 'POST /account/passkeys/remove',
  'GET /account/two-step', 'POST /account/two-step/setup', 'POST /account/two-step/confirm', 'POST /account/two-step/recovery-codes', 'POST /account/two-step/disable',
  // The consent and sign-out confirmations post back to the endpoint they were shown at; the device page is verification_uri.
  'POST /oauth/authorize', 'POST /oauth/logout', 'GET /device', 'POST /device',
  // A protected site's sign-out page and its button, on the site's host.
  'GET /.latchkey/logout', 'POST /.latchkey/logout', 'POST /.latchkey/language',
  'GET /avatars/:file', 'GET /assets/app.css', 'GET /assets/webauthn.js', 'GET /assets/passkeys.js', 'GET /assets/copy.js', 'GET /favicon.svg', 'GET /favicon.ico', 'GET /docs', 'GET /openapi.json',
  'GET /assets/brand/logo', 'GET /assets/brand/logo-dark', 'GET /assets/brand/favicon', 'GET /assets/brand.css', 'GET /assets/apps/:id/logo', 'POST /account/passkeys/confirm-options', 'POST /account/avatar', 'POST /account/avatar/remove', 'POST /account/language', 'GET /login/provider/:id', 'GET /login/provider/:id/callback', 'POST /account/providers/:id/connect', 'POST /account/providers/:id/disconnect', 'POST /language',
]

type Doc = {
  openapi: string
  info: { title: string; version: string }
  paths: Record<string, Record<string, any>>
  webhooks: Record<string, Record<string, any>>
  components: any
}
let t: TestApp
let doc: Doc
let text: string

beforeAll(async () => {
  // Dynamic registration on: its routes exist only then, and are documented only then.
  t = await createTestApp({ DYNAMIC_REGISTRATION: 'open' })
  const res = await t.handle('/openapi.json')
  expect(res.status).toBe(200)
  text = await res.text()
  doc = JSON.parse(text)
  // A fresh PostgreSQL schema and the document's first build: more than the default 5 s on a busy machine.
}, 60_000)

const operations = () => Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ method, path, op })))

describe('API documentation', () => {
  test('/openapi.json is an OpenAPI 3.1 document of the server', async () => {
    expect(doc.openapi).toBe('3.1.0')
    expect(doc.info).toMatchObject({ title: 'Latchkey', version: pkg.version })
    expect(Object.keys(doc.paths['/api/settings']!)).toEqual(['get', 'post'])
    expect(doc.paths['/api/settings']!.post.requestBody.content['application/json'].schema.required).toEqual(['client_id', 'key', 'value'])
    expect(Object.keys(doc.paths['/api/oauth/token']!.post.requestBody.content).sort()).toEqual(['application/json', 'application/x-www-form-urlencoded'])
    expect(Object.keys(doc.paths['/api/settings']!.post.responses).sort()).toEqual(['200', '400', '401', '403', '409', '412', '413'])
    expect(doc.paths['/api/oauth/userinfo']!.get.security).toEqual([{ bearer: [] }])
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' })
    // Pages and the consent form are not part of the API.
    expect(doc.paths['/login']).toBeUndefined()
    expect(doc.paths['/oauth/authorize']!.post).toBeUndefined()
  })

  test('every route of the server is documented, but the pages listed above', () => {
    const documented = new Set(operations().map(({ method, path }) => `${method.toUpperCase()} ${path}`))
    const routes = (t.app.routes as Array<{ method: string; path: string }>)
      .filter((r) => r.method !== 'OPTIONS' && r.path !== '/admin' && !r.path.startsWith('/admin/'))
      .map((r) => `${r.method} ${r.path}`)
    const missing = routes.filter((r) => !PAGES.includes(r) && !documented.has(r.replace(/:([^/]+)/g, '{$1}')))
    expect(missing).toEqual([])
    // And no page is documented as API.
    expect(PAGES.filter((p) => documented.has(p))).toEqual([])
    // Listed pages are real routes (a stale entry would hide nothing but mislead).
    expect(PAGES.filter((p) => !routes.includes(p))).toEqual([])
  })

  test('the routes a client or an operator uses are there, with what they take and answer', () => {
    const expected = [
      'get /.well-known/openid-configuration', 'get /.well-known/oauth-authorization-server', 'get /.well-known/oauth-protected-resource', 'get /.well-known/oauth-protected-resource/api',
      'get /.well-known/jwks.json', 'get /oauth/authorize', 'get /oauth/logout', 'post /api/oauth/token', 'post /api/oauth/revoke', 'post /api/oauth/introspect', 'post /api/oauth/par',
      'post /api/oauth/device_authorization', 'post /api/oauth/register', 'get /api/oauth/register/{client_id}', 'delete /api/oauth/register/{client_id}', 'get /api/oauth/userinfo',
      'get /api/settings', 'post /api/settings', 'get /api/settings/{key}', 'delete /api/settings/{key}', 'get /api/settings-events', 'post /api/settings-events/ticket',
      'get /api/authz/forward-auth', 'get /api/authz/auth-request', 'get /.latchkey/start', 'get /authz/start', 'get /.latchkey/callback', 'get /healthz', 'get /metrics',
    ]
    expect(operations().map(({ method, path }) => `${method} ${path}`).sort()).toEqual(expected.sort())
    // /metrics has a listener of its own.
    expect(doc.paths['/metrics']!.get.servers).toEqual([{ url: 'http://127.0.0.1:9464', description: 'METRICS_ADDRESS' }])
  })

  test('every operation has a summary, answers, and a schema and an example for every body it takes or answers', () => {
    const gaps: string[] = []
    const media = (where: string, content: Record<string, any>) => {
      for (const [type, m] of Object.entries(content)) {
        if (!m.schema) gaps.push(`${where} ${type}: no schema`)
        if (m.example === undefined && !Object.keys(m.examples ?? {}).length) gaps.push(`${where} ${type}: no example`)
      }
    }
    for (const { method, path, op } of operations()) {
      const name = `${method} ${path}`
      if (!op.summary) gaps.push(`${name}: no summary`)
      if (!Object.keys(op.responses ?? {}).length) gaps.push(`${name}: no responses`)
      if (op.requestBody) media(`${name} request`, op.requestBody.content)
      for (const [status, r] of Object.entries(op.responses ?? {}) as Array<[string, any]>) {
        if (!r.description) gaps.push(`${name} ${status}: no description`)
        media(`${name} ${status}`, r.content ?? {})
      }
      for (const p of op.parameters ?? []) if (!p.schema) gaps.push(`${name} ${p.name}: no schema`)
    }
    expect(gaps).toEqual([])
  })

  test('the token endpoint shows every grant and every client authentication method', () => {
    const token = doc.paths['/api/oauth/token']!.post
    const examples = Object.values(token.requestBody.content['application/x-www-form-urlencoded'].examples) as Array<{ value: Record<string, string> }>
    expect(examples.map((e) => e.value.grant_type).sort()).toEqual(['authorization_code', 'authorization_code', 'client_credentials', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'])
    expect(examples.some((e) => e.value.client_secret !== undefined)).toBe(true)
    expect(examples.some((e) => e.value.client_assertion_type === 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer')).toBe(true)
    for (const method of ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none']) expect(token.description).toContain(method)
    expect(Object.keys(token.requestBody.content['application/x-www-form-urlencoded'].schema.properties)).toEqual(expect.arrayContaining(['client_assertion', 'client_assertion_type', 'device_code', 'code_verifier']))
    expect(token.responses['200'].content['application/json'].example).toMatchObject({ token_type: 'Bearer', expires_in: 3600 })
  })

  test('the well-known documents are shown as this server answers them', async () => {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server', '/.well-known/oauth-protected-resource', '/.well-known/jwks.json']) {
      const live = await (await t.handle(path)).json()
      expect(doc.paths[path]!.get.responses['200'].content['application/json'].example).toEqual(live)
    }
  })

  test('what an app receives: the back-channel logout request', () => {
    const hook = doc.webhooks.backchannelLogout!.post
    expect(Object.keys(hook.requestBody.content)).toEqual(['application/x-www-form-urlencoded'])
    expect(hook.requestBody.content['application/x-www-form-urlencoded'].schema.required).toEqual(['logout_token'])
    expect(hook.requestBody.content['application/x-www-form-urlencoded'].schema.properties.logout_token.description).toContain('logout+jwt')
  })

  test('speaks of the product only: no framework, runtime, library or internal names', () => {
    expect(text).not.toMatch(/elysia|drizzle|typebox|\bbun\b|sqlite|postgres|prom-client|family_?id|token_?id|family_ref|AppContext/i)
  })

  test('every documented operation answers in-process (no 404 or 405 of a missing route)', async () => {
    const client = await addClient(t, { name: 'Photos' })
    const user = await addUser(t)
    const token = await mintToken(t, client.client.id, user.id)
    await t.handle('/api/settings', { method: 'POST', headers: { ...bearer(token), 'content-type': 'application/json' }, body: JSON.stringify({ client_id: client.client.id, key: 'theme', value: 'dark' }) })
    const answered: Array<[string, number]> = []
    for (const { method, path, op } of operations()) {
      if (path === '/metrics') continue
      let url = path
      for (const p of op.parameters ?? []) if (p.in === 'path') url = url.replace(`{${p.name}}`, encodeURIComponent(p.example ?? 'x'))
      const body = method === 'get' || method === 'delete' ? undefined : new URLSearchParams({})
      const res = await t.handle(url, { method: method.toUpperCase(), headers: bearer(token), body })
      answered.push([`${method} ${path}`, res.status])
    }
    expect(answered.filter(([, status]) => status === 404 || status === 405)).toEqual([])
    expect(answered.length).toBe(operations().length - 1)
  })

  test('/docs is a readable reference page with schemas and examples, and no scripts', async () => {
    const res = await t.handle('/docs')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'")
    const html = await res.text()
    for (const { method, path } of operations()) expect(html).toContain(`<code>${method.toUpperCase()} ${path}</code>`)
    expect(html).toContain('<h2>What an app receives</h2>')
    expect(html).toContain('<code>logout_token</code>')
    expect(html).toContain('Example “A refresh, client_secret_post”')
    expect(html).toContain('&quot;token_type&quot;: &quot;Bearer&quot;')
    expect(html).not.toContain('<script')
  })
})
