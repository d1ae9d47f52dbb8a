import { beforeEach, describe, expect, test } from 'bun:test'
import {
  CALLBACK,
  ORIGIN,
  addClient,
  addUser,
  authorizeAndAllow,
  authorizePath,
  cookieHeader,
  csrfFrom,
  postForm,
  signIn,
  type TestApp,
  signedInApp,
} from '../helpers'

let t: TestApp
let client: Awaited<ReturnType<typeof addClient>>
let jar: Record<string, string>

beforeEach(async () => {
  ;({ t, client, jar } = await signedInApp())
})

const base = () => ({ client_id: client.client.id, redirect_uri: CALLBACK, scope: 'profile email', state: 'xyz' })
const get = (params: Record<string, string | undefined>, cookies = jar) =>
  t.handle(authorizePath(params), { headers: { cookie: cookieHeader(cookies) } })
const codeCount = async () => (await t.rows('SELECT code_hash FROM auth_codes')).length

function expectRedirectError(res: Response, error: string) {
  expect(res.status).toBe(303)
  const url = new URL(res.headers.get('location')!)
  expect(url.origin + url.pathname).toBe(CALLBACK)
  expect(url.searchParams.get('error')).toBe(error)
  expect(url.searchParams.get('state')).toBe('xyz')
  expect(url.searchParams.get('iss')).toBe(ORIGIN)
  expect(url.searchParams.get('code')).toBeNull()
}

describe('GET /oauth/authorize: errors before the client is verified are pages, never redirects', () => {
  for (const [name, params] of [
    ['missing client_id', { client_id: undefined }],
    ['unknown client_id', { client_id: 'nope' }],
    ['missing redirect_uri', { redirect_uri: undefined }],
    ['unregistered redirect_uri', { redirect_uri: 'https://evil.example/callback' }],
    ['redirect_uri that only starts like the registered one', { redirect_uri: CALLBACK + '/extra' }],
    ['redirect_uri differing only by a trailing slash', { redirect_uri: CALLBACK + '/' }],
  ] as const) {
    test(`${name} → 400 HTML error page without Location`, async () => {
      const res = await get({ ...base(), ...params })
      expect(res.status).toBe(400)
      expect(res.headers.get('location')).toBeNull()
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
      expect(res.headers.get('x-frame-options')).toBe('DENY')
    })
  }
})

describe('GET /oauth/authorize: errors after verification go back to the client with state and iss', () => {
  test('missing scope → invalid_scope', async () => expectRedirectError(await get({ ...base(), scope: undefined }), 'invalid_scope'))
  test('empty scope → invalid_scope', async () => expectRedirectError(await get({ ...base(), scope: '' }), 'invalid_scope'))
  test('unknown scope → invalid_scope', async () => expectRedirectError(await get({ ...base(), scope: 'profile admin' }), 'invalid_scope'))
  test('response_type=token → unsupported_response_type', async () =>
    expectRedirectError(await get({ ...base(), response_type: 'token' }), 'unsupported_response_type'))
  test('code_challenge_method=plain → invalid_request', async () =>
    expectRedirectError(await get({ ...base(), code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }), 'invalid_request'))
  test('public client without code_challenge → invalid_request', async () => {
    const pub = await addClient(t, { public: true })
    expectRedirectError(await get({ ...base(), client_id: pub.client.id }), 'invalid_request')
  })
  test('a repeated parameter → invalid_request', async () => {
    const res = await t.handle(authorizePath(base()) + '&scope=email', { headers: { cookie: cookieHeader(jar) } })
    expectRedirectError(res, 'invalid_request')
  })
  test('errors are detected before sign-in', async () => expectRedirectError(await get({ ...base(), scope: 'nope' }, {}), 'invalid_scope'))
})

describe('GET /oauth/authorize: sign-in and consent', () => {
  test('not signed in → 303 to /login with the request as return_to', async () => {
    const path = authorizePath(base())
    const res = await t.handle(path)
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe(`/login?return_to=${encodeURIComponent(path)}`)
  })

  test('signed in → consent page naming the app, the user and each scope, with Allow and Deny', async () => {
    const res = await get({ ...base(), scope: 'profile email settings:read settings:write' })
    expect(res.status).toBe(200)
    const html = await res.text()
    expect(html).toContain('Demo App')
    expect(html).toContain('Ann Lee')
    expect(html).toContain('ann@example.com')
    expect(html).toContain('See your name and profile picture')
    expect(html).toContain('See your email address')
    expect(html).toContain('Read the settings this app saved for you')
    expect(html).toContain('Save and delete settings for you in this app')
    expect(html).toContain('>Allow</button>')
    expect(html).toContain('>Deny</button>')
    expect(res.headers.get('content-security-policy')).toContain("form-action 'self' https://app.example;")
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
    expect(res.headers.get('x-frame-options')).toBe('DENY')
    expect(res.headers.get('referrer-policy')).toBe('no-referrer')
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
  })

  test('names from clients and users are escaped', async () => {
    const evil = await addClient(t, { name: '<script>alert(1)</script>' })
    await addUser(t, 'eve@example.com', '<img src=x onerror=alert(2)>')
    const eveJar = await signIn(t, 'eve@example.com')
    const html = await (await get({ ...base(), client_id: evil.client.id }, eveJar)).text()
    expect(html).not.toContain('<script>alert(1)')
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
    expect(html).not.toContain('<img src=x')
  })

  test('state with quotes round-trips through the hidden form field unchanged', async () => {
    const state = `"><script>x</script>&a=b`
    const callback = await authorizeAndAllow(t, jar, { ...base(), state })
    expect(callback.searchParams.get('state')).toBe(state)
  })

  test('Allow → 303 to the callback with code, the same state and iss', async () => {
    const callback = await authorizeAndAllow(t, jar, base())
    expect(callback.origin + callback.pathname).toBe(CALLBACK)
    expect(callback.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(callback.searchParams.get('state')).toBe('xyz')
    expect(callback.searchParams.get('iss')).toBe(ORIGIN)
  })

  test('the code is stored only as its hash', async () => {
    const code = (await authorizeAndAllow(t, jar, base())).searchParams.get('code')!
    const rows = (await t.rows('SELECT * FROM auth_codes'))
    expect(JSON.stringify(rows)).not.toContain(code)
    expect(rows).toHaveLength(1)
  })

  test('Deny → 303 with error=access_denied, state and iss, and no code', async () => {
    const page = await get(base())
    const res = await postForm(t, '/oauth/authorize', { ...base(), csrf_token: csrfFrom(await page.text()), decision: 'deny' }, jar)
    expectRedirectError(res, 'access_denied')
    expect(await codeCount()).toBe(0)
  })

  for (const [name, csrf] of [
    ['without its CSRF token', undefined],
    ['with a wrong CSRF token', 'A'.repeat(43)],
  ] as const) {
    test(`a consent POST ${name} → 403 and issues nothing`, async () => {
      const res = await postForm(t, '/oauth/authorize', { ...base(), csrf_token: csrf, decision: 'allow' }, jar)
      expect(res.status).toBe(403)
      expect(res.headers.get('location')).toBeNull()
      expect(await codeCount()).toBe(0)
      expect(await t.rows('SELECT user_id FROM consents')).toHaveLength(0)
    })
  }

  test("another user's CSRF token is refused", async () => {
    await addUser(t, 'bob@example.com', 'Bob')
    const bobJar = await signIn(t, 'bob@example.com')
    const bobCsrf = csrfFrom(await (await get(base(), bobJar)).text())
    const res = await postForm(t, '/oauth/authorize', { ...base(), csrf_token: bobCsrf, decision: 'allow' }, jar)
    expect(res.status).toBe(403)
  })

  test('a consent POST re-validates the request: a tampered redirect_uri gets a page, not a redirect', async () => {
    const csrf = csrfFrom(await (await get(base())).text())
    const res = await postForm(t, '/oauth/authorize', { ...base(), redirect_uri: 'https://evil.example/', csrf_token: csrf, decision: 'allow' }, jar)
    expect(res.status).toBe(400)
    expect(res.headers.get('location')).toBeNull()
  })

  test('already granted scopes skip the consent page; a new scope asks again', async () => {
    await authorizeAndAllow(t, jar, base())
    const again = await get({ ...base(), scope: 'email' })
    expect(again.status).toBe(303)
    expect(new URL(again.headers.get('location')!).searchParams.get('code')).toBeTruthy()
    const more = await get({ ...base(), scope: 'email settings:read' })
    expect(more.status).toBe(200)
  })

  test('a skip_consent client gets a code without the consent page', async () => {
    const trusted = await addClient(t, { skipConsent: true })
    const res = await get({ ...base(), client_id: trusted.client.id })
    expect(res.status).toBe(303)
    const url = new URL(res.headers.get('location')!)
    expect(url.searchParams.get('code')).toBeTruthy()
    expect(url.searchParams.get('state')).toBe('xyz')
    expect(url.searchParams.get('iss')).toBe(ORIGIN)
  })

  test('the granted scope is what was requested, never more', async () => {
    await authorizeAndAllow(t, jar, { ...base(), scope: 'profile email settings:read' })
    const code = (await authorizeAndAllow(t, jar, { ...base(), scope: 'email' })).searchParams.get('code')!
    const res = await t.handle('/api/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: client.client.id, client_secret: client.secret }),
    })
    expect(((await res.json()) as { scope: string }).scope).toBe('email')
  })

  test('a registered redirect_uri with its own query keeps it', async () => {
    const withQuery = await addClient(t, { redirectUris: ['https://app.example/cb?tenant=7'], skipConsent: true })
    const res = await get({ ...base(), client_id: withQuery.client.id, redirect_uri: 'https://app.example/cb?tenant=7' })
    const url = new URL(res.headers.get('location')!)
    expect(url.searchParams.get('tenant')).toBe('7')
    expect(url.searchParams.get('code')).toBeTruthy()
  })
})
