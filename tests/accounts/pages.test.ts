import { beforeEach, describe, expect, test } from 'bun:test'
import {
  CALLBACK,
  addClient,
  addUser,
  bearer,
  cookieHeader,
  cookiesFrom,
  createTestApp,
  csrfFrom,
  postForm,
  signIn,
  tokenThroughFlow,
  type TestApp,
} from '../helpers'

let t: TestApp

beforeEach(async () => {
  t = await createTestApp({ SIGNUP: 'open' })
  await addUser(t)
})

function expectSecurityHeaders(res: Response) {
  expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
  expect(res.headers.get('x-frame-options')).toBe('DENY')
  expect(res.headers.get('referrer-policy')).toBe('no-referrer')
  expect(res.headers.get('x-content-type-options')).toBe('nosniff')
}

async function postLogin(fields: Record<string, string | undefined>, withCsrf = true) {
  const page = await t.handle('/login')
  const jar = cookiesFrom(page)
  const csrf = csrfFrom(await page.text())
  return postForm(t, '/login', { csrf_token: withCsrf ? csrf : undefined, ...fields }, jar)
}

describe('/login', () => {
  test("CSP form-action allows the app's registered callback origin, so a returning user's sign-in can land there (issue 18 item 9)", async () => {
    const { client } = await addClient(t)
    const authorize = (redirectUri: string) =>
      `/oauth/authorize?${new URLSearchParams({ client_id: client.id, redirect_uri: redirectUri, scope: 'email', state: 's' })}`
    const formAction = async (path: string) => /form-action ([^;]*)/.exec((await t.handle(path)).headers.get('content-security-policy')!)![1]
    const origin = new URL(CALLBACK).origin
    expect(await formAction(`/login?return_to=${encodeURIComponent(authorize(CALLBACK))}`)).toBe(`'self' ${origin}`)
    expect(await formAction(`/signup?return_to=${encodeURIComponent(authorize(CALLBACK))}`)).toBe(`'self' ${origin}`)
    // Only a redirect URI the app registered: never one the link merely names.
    expect(await formAction(`/login?return_to=${encodeURIComponent(authorize('https://evil.example/cb'))}`)).toBe("'self'")
    expect(await formAction('/login')).toBe("'self'")
  })

  test('the page has Email, Password, "Sign in", a CSRF token and the security headers', async () => {
    const res = await t.handle('/login')
    expect(res.status).toBe(200)
    expectSecurityHeaders(res)
    const html = await res.text()
    expect(html).toContain('<label for="email">Email</label>')
    expect(html).toContain('<label for="password">Password</label>')
    expect(html).toContain('>Sign in</button>')
    expect(html).toContain('name="csrf_token"')
  })

  test('reached from an authorization request, the page names the app (escaped); otherwise it does not', async () => {
    const app = await addClient(t, { name: 'Notes <b>' })
    const returnTo = encodeURIComponent(`/oauth/authorize?client_id=${app.client.id}&scope=email`)
    for (const path of [`/login?return_to=${returnTo}`, `/signup?return_to=${returnTo}`]) {
      const html = await (await t.handle(path)).text()
      expect(html).toContain('to continue to <strong>Notes &lt;b&gt;</strong>')
    }
    expect(await (await t.handle('/login')).text()).not.toContain('to continue to')
    expect(await (await t.handle(`/login?return_to=${encodeURIComponent('/oauth/authorize?client_id=nope')}`)).text()).not.toContain('to continue to')
  })

  test('good credentials → 303 to return_to with an HttpOnly SameSite=Lax session cookie', async () => {
    const res = await postLogin({ email: 'ANN@example.com', password: 'correct horse battery', return_to: '/oauth/authorize?x=1' })
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/oauth/authorize?x=1')
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('lk_session='))!
    expect(cookie).toContain('HttpOnly')
    expect(cookie).toContain('SameSite=Lax')
    expect(cookie).toContain('Path=/')
    expect(cookie).not.toContain('Secure')
  })

  test('Secure cookies when ISSUER is https', async () => {
    t = await createTestApp({ ISSUER: 'https://id.example' })
    await addUser(t)
    const res = await postLogin({ email: 'ann@example.com', password: 'correct horse battery' })
    // Under https the cookie carries the __Host- prefix (SPEC "Hostile input").
    expect(res.headers.getSetCookie().find((c) => c.startsWith('__Host-lk_session='))).toContain('; Secure')
  })

  test('the session is stored only as a hash', async () => {
    const res = await postLogin({ email: 'ann@example.com', password: 'correct horse battery' })
    const token = res.headers.getSetCookie().find((c) => c.startsWith('lk_session='))!.split(/[=;]/)[1]!
    expect(JSON.stringify((await t.rows('SELECT * FROM sessions')))).not.toContain(token)
  })

  for (const [name, fields] of [
    ['wrong password', { email: 'ann@example.com', password: 'nope nope nope' }],
    ['unknown email', { email: 'who@example.com', password: 'correct horse battery' }],
  ] as const) {
    test(`${name} → the page again, 401, "Invalid email or password"`, async () => {
      const res = await postLogin(fields)
      expect(res.status).toBe(401)
      expect(res.headers.getSetCookie().some((c) => c.startsWith('lk_session='))).toBe(false)
      expect(await res.text()).toContain('Invalid email or password')
    })
  }

  test('after 5 failures in a row an account waits, doubling, before the next try — known or unknown email alike', async () => {
    t = await createTestApp({ LOGIN_ATTEMPTS_PER_MINUTE: '1000' })
    await addUser(t)
    for (const email of ['ann@example.com', 'nobody@example.com']) {
      for (let i = 0; i < 5; i++) expect((await postLogin({ email, password: 'wrong password' })).status).toBe(401)
      const blocked = await postLogin({ email, password: 'correct horse battery' })
      expect(blocked.status).toBe(429)
      expect(blocked.headers.get('retry-after')).toBe('1')
      expect(await blocked.text()).toContain('Too many failed sign-ins for this account')
      expect(blocked.headers.getSetCookie().some((c) => c.startsWith('lk_session='))).toBe(false)
    }
    t.clock.advance(1000)
    expect((await postLogin({ email: 'ann@example.com', password: 'wrong password' })).status).toBe(401)
    expect((await postLogin({ email: 'ann@example.com', password: 'correct horse battery' })).headers.get('retry-after')).toBe('2')
    t.clock.advance(2000)
    // The right password, once allowed, signs in and clears the count.
    expect((await postLogin({ email: 'ann@example.com', password: 'correct horse battery' })).status).toBe(303)
    expect((await postLogin({ email: 'ann@example.com', password: 'wrong password' })).status).toBe(401)
    // Another account is not affected.
    await addUser(t, 'bob@example.com', 'Bob')
    expect((await postLogin({ email: 'bob@example.com', password: 'correct horse battery' })).status).toBe(303)
  })

  test('a login POST without its CSRF token → 403, no session', async () => {
    const res = await postLogin({ email: 'ann@example.com', password: 'correct horse battery' }, false)
    expect(res.status).toBe(403)
    expect(res.headers.getSetCookie().some((c) => c.startsWith('lk_session='))).toBe(false)
  })

  for (const evil of ['//evil.example/x', 'https://evil.example/', '/\\evil.example', '/%0d%0aSet-Cookie:x', 'javascript:alert(1)', '\t//evil.example']) {
    test(`return_to ${JSON.stringify(evil)} never leaves the site`, async () => {
      const res = await postLogin({ email: 'ann@example.com', password: 'correct horse battery', return_to: evil })
      expect(res.status).toBe(303)
      const location = res.headers.get('location')!
      expect(new URL(location, 'http://localhost:3000').origin).toBe('http://localhost:3000')
      expect(location.startsWith('//')).toBe(false)
    })
  }
})

describe('/signup', () => {
  async function postSignup(fields: Record<string, string>) {
    const page = await t.handle('/signup')
    const jar = cookiesFrom(page)
    return postForm(t, '/signup', { csrf_token: csrfFrom(await page.text()), ...fields }, jar)
  }

  test('the page has Full name, Email, Password and "Create account"', async () => {
    const res = await t.handle('/signup')
    expectSecurityHeaders(res)
    const html = await res.text()
    for (const label of ['Full name', 'Email', 'Password']) expect(html).toContain(`>${label}</label>`)
    expect(html).toContain('>Create account</button>')
  })

  test('creates the account and signs the user in', async () => {
    const res = await postSignup({ full_name: 'Bo Chen', email: 'bo@example.com', password: 'long enough pw' })
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/account')
    const jar = cookiesFrom(res)
    const account = await t.handle('/account', { headers: { cookie: cookieHeader(jar) } })
    expect(await account.text()).toContain('Bo Chen')
  })

  test('a sign-up POST without its CSRF token → 403, no account', async () => {
    const res = await postForm(t, '/signup', { full_name: 'Bo', email: 'bo@example.com', password: 'long enough pw' })
    expect(res.status).toBe(403)
    expect(await t.rows('SELECT id FROM users')).toHaveLength(1)
  })

  test('password under 8 or over 256 characters → 400, no account', async () => {
    for (const password of ['short', 'x'.repeat(257)]) {
      const res = await postSignup({ full_name: 'Bo', email: 'bo@example.com', password })
      expect(res.status).toBe(400)
    }
    expect(await t.rows('SELECT id FROM users')).toHaveLength(1)
  })

  test('an email already taken → 409, no second account', async () => {
    const res = await postSignup({ full_name: 'Ann 2', email: 'Ann@Example.com', password: 'long enough pw' })
    expect(res.status).toBe(409)
    expect(await t.rows('SELECT id FROM users')).toHaveLength(1)
  })

  test('SIGNUP=domain:… → only addresses at those domains sign up (another is refused with a clear message, no account); they verify by mail first', async () => {
    t = await createTestApp({ SIGNUP: 'domain:example.com,Example.ORG', SMTP_URL: 'smtp://mail.invalid:25' })
    const other = await postSignup({ full_name: 'Eve', email: 'eve@elsewhere.example', password: 'long enough pw' })
    expect(other.status).toBe(400)
    expect(await other.text()).toContain('Sign-up here is for addresses at example.com or example.org. Ask your administrator for an invitation.')
    // A subdomain is another domain.
    expect((await postSignup({ full_name: 'Sub', email: 'sub@mail.example.com', password: 'long enough pw' })).status).toBe(400)
    expect(await t.rows('SELECT id FROM users')).toHaveLength(0)
    const res = await postSignup({ full_name: 'Bo Chen', email: 'bo@EXAMPLE.org', password: 'long enough pw' })
    expect(res.status).toBe(303)
    // The address is proven before the account is of use (EMAIL_VERIFICATION=required with it).
    expect(res.headers.get('location')).toStartWith('/check-email')
    expect(await t.rows('SELECT email, email_verified FROM users')).toEqual([{ email: 'bo@example.org', email_verified: t.engine === 'postgres' ? false : 0 }])
    expect(await t.rows("SELECT recipient FROM mail_outbox WHERE subject = 'Verify your email'")).toHaveLength(1)
  })

  test('SIGNUP=closed → GET and POST are 404 and no account is made', async () => {
    t = await createTestApp({ SIGNUP: 'closed' })
    expect((await t.handle('/signup')).status).toBe(404)
    const res = await postForm(t, '/signup', { full_name: 'X', email: 'x@example.com', password: 'long enough pw' })
    expect(res.status).toBe(404)
    expect(await t.rows('SELECT id FROM users')).toHaveLength(0)
    expect(await (await t.handle('/login')).text()).not.toContain('Create account')
  })
})

describe('/account and /logout', () => {
  test('not signed in → 303 to /login', async () => {
    const res = await t.handle('/account')
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/login?return_to=%2Faccount')
  })

  test('shows the profile and each authorized app with scopes and "Revoke access"; revoking ends its tokens and consent', async () => {
    const app = await addClient(t, { name: 'Notes <App>' })
    const token = await tokenThroughFlow(t, app, 'profile settings:read')
    const jar = await signIn(t)
    const page = await t.handle('/account', { headers: { cookie: cookieHeader(jar) } })
    expectSecurityHeaders(page)
    const html = await page.text()
    expect(html).toContain('Ann Lee')
    expect(html).toContain('ann@example.com')
    expect(html).toContain('Notes &lt;App&gt;')
    expect(html).toContain('See your name and profile picture')
    expect(html).toContain('Read the settings this app saved for you')
    expect(html).toContain('>Revoke access</button>')
    expect(html).toMatch(/<time datetime="\d{4}-\d\d-\d\dT/)

    const revoke = await postForm(t, '/account/revoke', { csrf_token: csrfFrom(html), client_id: app.client.id }, jar)
    expect(revoke.status).toBe(303)
    expect((await t.handle('/api/oauth/userinfo', { headers: bearer(token) })).status).toBe(401)
    expect(await (await t.handle('/account', { headers: { cookie: cookieHeader(jar) } })).text()).not.toContain('Notes &lt;App&gt;')
    // Consent is forgotten: the next authorization asks again.
    const again = await t.handle(`/oauth/authorize?client_id=${app.client.id}&redirect_uri=${encodeURIComponent(CALLBACK)}&scope=profile`, {
      headers: { cookie: cookieHeader(jar) },
    })
    expect(again.status).toBe(200)
  })

  test('a skip-consent app is listed too, and can be revoked', async () => {
    const app = await addClient(t, { name: 'First Party', skipConsent: true })
    const token = await tokenThroughFlow(t, app, 'email')
    const jar = await signIn(t)
    const html = await (await t.handle('/account', { headers: { cookie: cookieHeader(jar) } })).text()
    expect(html).toContain('First Party')
    expect(html).toContain('See your email address')
    await postForm(t, '/account/revoke', { csrf_token: csrfFrom(html), client_id: app.client.id }, jar)
    expect((await t.handle('/api/oauth/userinfo', { headers: bearer(token) })).status).toBe(401)
  })

  test('revoke without CSRF → 403 and the token still works', async () => {
    const app = await addClient(t)
    const token = await tokenThroughFlow(t, app, 'email')
    const jar = await signIn(t)
    const res = await postForm(t, '/account/revoke', { client_id: app.client.id }, jar)
    expect(res.status).toBe(403)
    expect((await t.handle('/api/oauth/userinfo', { headers: bearer(token) })).status).toBe(200)
  })

  test('logout needs CSRF, then ends the session', async () => {
    const jar = await signIn(t)
    const refused = await postForm(t, '/logout', {}, jar)
    expect(refused.status).toBe(403)
    const csrf = csrfFrom(await (await t.handle('/account', { headers: { cookie: cookieHeader(jar) } })).text())
    const res = await postForm(t, '/logout', { csrf_token: csrf }, jar)
    expect(res.status).toBe(303)
    expect((await t.handle('/account', { headers: { cookie: cookieHeader(jar) } })).status).toBe(303)
  })

  test('GET /login when already signed in goes straight to return_to', async () => {
    const jar = await signIn(t)
    const res = await t.handle('/login?return_to=%2Faccount%3Fx%3D1', { headers: { cookie: cookieHeader(jar) } })
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/account?x=1')
  })
})
