/**
 * Issue 8 ("hostile input cannot hurt it"), in-process: each test names the review item it pins.
 * The binary-level twins (timing, memory, real sockets, file modes) are in tests/e2e/hostile.test.ts.
 */
import { describe, expect, spyOn, test } from 'bun:test'
import { sha256 } from '../../src/lib/crypto'
import {
  CALLBACK,
  PASSWORD,
  addClient,
  addUser,
  authorizePath,
  bearer,
  capturingLogger,
  cookieHeader,
  cookiesFrom,
  createTestApp,
  csrfFrom,
  form,
  handleFrom,
  postForm,
  signIn,
  signedInApp,
  tokenThroughFlow,
  type TestApp,
} from '../helpers'

const deepJson = (levels: number) => '{"state":' + '['.repeat(levels) + ']'.repeat(levels) + '}'
const DEPTH_ERROR = { error: 'invalid_request', error_description: 'JSON nests deeper than 64 levels' }

/** The login page's CSRF cookie and token, as a browser at `peer` would get them. */
async function loginForm(t: TestApp, peer = '192.0.2.1') {
  const page = await handleFrom(t, peer, '/login')
  return { jar: cookiesFrom(page), csrf: csrfFrom(await page.text()) }
}

async function attemptLogin(t: TestApp, email: string, password: string, peer = '192.0.2.1', headers: Record<string, string> = {}) {
  const { jar, csrf } = await loginForm(t, peer)
  return handleFrom(t, peer, '/login', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader(jar), ...headers },
    body: form({ email, password, csrf_token: csrf }),
  })
}

describe('item 1: deeply nested JSON is refused before parsing or validation', () => {
  test('every JSON route answers 400 invalid_request at 20,000 and 50,000 levels, never 5xx', async () => {
    const { t, client } = await signedInApp()
    const token = await tokenThroughFlow(t, client, 'settings:write')
    const routes: Array<[string, Record<string, string>]> = [
      ['/api/oauth/token', {}],
      ['/api/oauth/revoke', {}],
      ['/api/settings', bearer(token)],
    ]
    for (const levels of [20_000, 50_000]) {
      for (const [path, headers] of routes) {
        const started = performance.now()
        const res = await t.handle(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: deepJson(levels) })
        expect(res.status).toBe(400)
        expect(await res.json()).toEqual(DEPTH_ERROR)
        expect(performance.now() - started).toBeLessThan(500)
      }
    }
  })

  test('64 levels are accepted, 65 are not; brackets inside strings do not count', async () => {
    const { t, client } = await signedInApp()
    const token = await tokenThroughFlow(t, client, 'settings:write')
    const save = (value: string) =>
      t.handle('/api/settings', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...bearer(token) },
        body: `{"client_id":"${client.client.id}","key":"k","value":${value}}`,
      })
    // The body object is level 1, so the value may nest 63 levels.
    expect((await save('['.repeat(63) + ']'.repeat(63))).status).toBe(200)
    expect(await (await save('['.repeat(64) + ']'.repeat(64))).json()).toEqual(DEPTH_ERROR)
    expect((await save(JSON.stringify('['.repeat(500) + '\\"{'.repeat(100)))).status).toBe(200)
  })

  test('page routes take no JSON at all: 415, before any session or CSRF check', async () => {
    const t = await createTestApp({ SIGNUP: 'open' })
    for (const path of ['/login', '/signup', '/logout', '/oauth/authorize', '/account/revoke', '/account/sign-out-everywhere']) {
      const res = await t.handle(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: deepJson(20_000) })
      expect(res.status).toBe(415)
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    }
  })
})

describe('item 2: page bodies are limited to 64 KiB and to form encoding', () => {
  test('a declared body over 64 KiB → 413 page; over 1 MiB on the API → 413 JSON; nothing read', async () => {
    const t = await createTestApp()
    const big = (path: string, type: string, length: number) =>
      t.handle(path, { method: 'POST', headers: { 'content-type': type, 'content-length': String(length) }, body: 'x' })
    for (const path of ['/login', '/signup', '/logout', '/oauth/authorize', '/account/revoke']) {
      const res = await big(path, 'application/x-www-form-urlencoded', 65_537)
      expect(res.status).toBe(413)
      expect(await res.text()).toContain('more than 64 KiB')
    }
    const api = await big('/api/oauth/token', 'application/json', 1_048_577)
    expect(api.status).toBe(413)
    expect(await api.json()).toEqual({ error: 'request_too_large', error_description: 'request body is larger than 1 MiB' })
  })

  test('a streamed form is cut at 64 KiB; 64 KiB exactly is read', async () => {
    const t = await createTestApp()
    const stream = (bytes: number) =>
      new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('email=' + 'a'.repeat(bytes - 6)))
          controller.close()
        },
      })
    const post = (bytes: number) =>
      t.handle('/login', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: stream(bytes) })
    expect((await post(65_537)).status).toBe(413)
    expect((await post(65_536)).status).toBe(403) // read, then refused for its missing CSRF token
  })

  test('multipart, text and missing content types → 415', async () => {
    const t = await createTestApp()
    for (const type of ['multipart/form-data; boundary=x', 'text/plain', '']) {
      const res = await t.handle('/login', { method: 'POST', headers: type ? { 'content-type': type } : {}, body: 'email=a' })
      expect(res.status).toBe(415)
    }
  })
})

describe('item 4: parallel guesses get no more password checks than sequential ones', () => {
  test('60 parallel sign-ins at one account: 5 are checked (401), 55 are 429 — even the right password among them', async () => {
    const t = await createTestApp({ LOGIN_ATTEMPTS_PER_MINUTE: '1000' })
    await addUser(t)
    const { jar, csrf } = await loginForm(t)
    const attempts = Array.from({ length: 60 }, (_, i) =>
      postForm(t, '/login', { email: 'ann@example.com', password: i === 30 ? PASSWORD : 'wrong password', csrf_token: csrf }, jar),
    )
    const statuses = (await Promise.all(attempts)).map((r) => r.status)
    expect(statuses.filter((s) => s === 401).length).toBe(5)
    expect(statuses.filter((s) => s === 429).length).toBe(55)
  })
})

describe('item 5: password checks per client address (LOGIN_ATTEMPTS_PER_MINUTE)', () => {
  test('the 11th check in a minute from one address → 429 with Retry-After, fast, before hashing; other addresses are not affected', async () => {
    const t = await createTestApp()
    for (let i = 0; i < 10; i++) expect((await attemptLogin(t, `user${i}@example.com`, 'wrong password')).status).toBe(401)
    // Before hashing: no password is verified for it (was a 15 ms bound, against argon2's ~25).
    const verify = spyOn(Bun.password, 'verify')
    let blocked: Response
    try {
      blocked = await attemptLogin(t, 'user10@example.com', 'wrong password')
      expect(verify).toHaveBeenCalledTimes(0)
    } finally {
      verify.mockRestore()
    }
    expect(blocked.status).toBe(429)
    expect(blocked.headers.get('retry-after')).toBe('60')
    expect(await blocked.text()).toContain('Too many sign-in attempts from your network')
    expect((await attemptLogin(t, 'user10@example.com', 'wrong password', '192.0.2.2')).status).toBe(401)
    t.clock.advance(60_000)
    expect((await attemptLogin(t, 'user10@example.com', 'wrong password')).status).toBe(401)
  })

  test('sign-up counts too', async () => {
    const t = await createTestApp({ LOGIN_ATTEMPTS_PER_MINUTE: '2', SIGNUP: 'open' })
    const signUp = async (i: number) => {
      const page = await handleFrom(t, '192.0.2.9', '/signup')
      const jar = cookiesFrom(page)
      return handleFrom(t, '192.0.2.9', '/signup', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader(jar) },
        body: form({ full_name: 'N', email: `n${i}@example.com`, password: PASSWORD, csrf_token: csrfFrom(await page.text()) }),
      })
    }
    expect((await signUp(1)).status).toBe(303)
    expect((await signUp(2)).status).toBe(303)
    const third = await signUp(3)
    expect(third.status).toBe(429)
    expect(third.headers.get('retry-after')).toBe('60')
    expect((await t.row('SELECT CAST(count(*) AS INTEGER) AS n FROM users'))).toEqual({ n: 2 })
  })

  test('behind a trusted proxy the forwarded address counts; from anyone else X-Forwarded-For is ignored', async () => {
    const t = await createTestApp({ LOGIN_ATTEMPTS_PER_MINUTE: '1', TRUSTED_PROXIES: '10.0.0.0/8' })
    const viaProxy = (client: string) => attemptLogin(t, 'a@example.com', 'wrong password', '10.1.2.3', { 'x-forwarded-for': `${client}, 10.9.9.9` })
    expect((await viaProxy('198.51.100.1')).status).toBe(401)
    expect((await viaProxy('198.51.100.1')).status).toBe(429)
    expect((await viaProxy('198.51.100.2')).status).toBe(401)
    // An untrusted peer cannot pick its address by sending the header.
    const direct = (spoofed: string) => attemptLogin(t, 'b@example.com', 'wrong password', '203.0.113.7', { 'x-forwarded-for': spoofed })
    expect((await direct('198.51.100.3')).status).toBe(401)
    expect((await direct('198.51.100.4')).status).toBe(429)
  })
})

describe('item 9: the route never depends on the Host', () => {
  test('a one-letter host does not drop the first path segment', async () => {
    const { t, jar } = await signedInApp()
    const res = await t.app.handle(new Request('http://x/zzz/account', { headers: { cookie: cookieHeader(jar) } }))
    expect(res.status).toBe(404)
    expect(((await res.json()) as { error: string }).error).toBe('not_found')
    expect((await t.app.handle(new Request('http://x/account', { headers: { cookie: cookieHeader(jar) } }))).status).toBe(200)
  })

  test('a Host that is not host[:port] → 400 (JSON on the API, a page elsewhere)', async () => {
    const t = await createTestApp()
    for (const host of ['a b', 'x/y', 'a@b', 'h:99999', 'h:port', '[zz]']) {
      const api = await t.handle('/api/oauth/userinfo', { headers: { host } })
      expect(api.status).toBe(400)
      expect(await api.json()).toEqual({ error: 'invalid_request', error_description: 'the Host header is not a valid host[:port]' })
      expect((await t.handle('/login', { headers: { host } })).status).toBe(400)
    }
    for (const host of ['x', 'localhost:3000', '127.0.0.1', '[::1]:8080', 'id.example.com']) expect((await t.handle('/login', { headers: { host } })).status).toBe(200)
  })
})

describe('item 10: a non-ASCII return_to', () => {
  test('signing in goes there, percent-encoded, not a 500', async () => {
    const t = await createTestApp()
    await addUser(t)
    const { jar, csrf } = await loginForm(t)
    const res = await postForm(t, '/login', { email: 'ann@example.com', password: PASSWORD, csrf_token: csrf, return_to: '/account?name=Zoë&x=日本' }, jar)
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/account?name=Zo%C3%AB&x=%E6%97%A5%E6%9C%AC')
  })
})

describe('item 11: attribute values escape & < > " \'', () => {
  test('state round-trips byte for byte through the consent form', async () => {
    const { t, client, jar } = await signedInApp()
    const state = `a&lt;b "q" 'r' <s> & &amp; é`
    const params = { client_id: client.client.id, redirect_uri: CALLBACK, scope: 'email', state }
    const page = await (await t.handle(authorizePath(params), { headers: { cookie: cookieHeader(jar) } })).text()
    expect(page).toContain('name="state" value="a&amp;lt;b &quot;q&quot; &#x27;r&#x27; &lt;s&gt; &amp; &amp;amp; é"')
    const stateField = /name="state" value="([^"]*)"/.exec(page)![1]!
    const decoded = stateField.replace(/&(amp|lt|gt|quot|#x27);/g, (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#x27': "'" })[e]!)
    const res = await postForm(t, '/oauth/authorize', { ...params, state: decoded, csrf_token: csrfFrom(page), decision: 'allow' }, jar)
    expect(new URL(res.headers.get('location')!).searchParams.get('state')).toBe(state)
  })

  test('an email typed at sign-in comes back escaped in the form', async () => {
    const t = await createTestApp()
    const { jar, csrf } = await loginForm(t)
    const html = await (await postForm(t, '/login', { email: `a&b"c'd<e>@example.com`, password: 'wrong password', csrf_token: csrf }, jar)).text()
    expect(html).toContain('value="a&amp;b&quot;c&#x27;d&lt;e&gt;@example.com"')
  })
})

describe('item 12: sessions and CSRF', () => {
  test('a CSRF token computed from a cookie the attacker chose is refused (the token is keyed by a server secret)', async () => {
    const t = await createTestApp()
    await addUser(t)
    const planted = 'A'.repeat(43)
    for (const forged of [sha256(`csrf:${planted}`), sha256(planted)]) {
      const res = await postForm(t, '/login', { email: 'ann@example.com', password: PASSWORD, csrf_token: forged }, { lk_csrf: planted })
      expect(res.status).toBe(403)
    }
    // The server's own pair for that cookie works: the page renders a token for it.
    const page = await t.handle('/login', { headers: { cookie: `lk_csrf=${planted}` } })
    const res = await postForm(t, '/login', { email: 'ann@example.com', password: PASSWORD, csrf_token: csrfFrom(await page.text()) }, { lk_csrf: planted })
    expect(res.status).toBe(303)
  })

  test('signing in replaces the browser\'s previous session', async () => {
    const t = await createTestApp()
    await addUser(t)
    await addUser(t, 'bob@example.com', 'Bob')
    const first = await signIn(t)
    const page = await t.handle('/login?return_to=/account', { headers: { cookie: cookieHeader(first) } })
    expect(page.status).toBe(303) // already signed in; sign in as Bob through the form anyway
    const login = await t.handle('/login')
    const jar = { ...first, ...cookiesFrom(login) }
    const res = await postForm(t, '/login', { email: 'bob@example.com', password: PASSWORD, csrf_token: csrfFrom(await (await t.handle('/account', { headers: { cookie: cookieHeader(first) } })).text()) }, jar)
    expect(res.status).toBe(303)
    // Ann's old session cookie no longer opens anything.
    expect((await t.handle('/account', { headers: { cookie: cookieHeader(first) } })).status).toBe(303)
    expect((await t.row('SELECT CAST(count(*) AS INTEGER) AS n FROM sessions'))).toEqual({ n: 1 })
  })

  test('"Sign out everywhere" ends every session of the user, and needs CSRF', async () => {
    const t = await createTestApp()
    await addUser(t)
    const laptop = await signIn(t)
    const phone = await signIn(t)
    const page = await (await t.handle('/account', { headers: { cookie: cookieHeader(laptop) } })).text()
    expect(page).toContain('>Sign out everywhere</button>')
    expect((await postForm(t, '/account/sign-out-everywhere', {}, laptop)).status).toBe(403)
    expect((await t.handle('/account', { headers: { cookie: cookieHeader(phone) } })).status).toBe(200)
    const res = await postForm(t, '/account/sign-out-everywhere', { csrf_token: csrfFrom(page) }, laptop)
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/login')
    for (const jar of [laptop, phone]) expect((await t.handle('/account', { headers: { cookie: cookieHeader(jar) } })).status).toBe(303)
  })
})

describe('item 13: protocol rough edges', () => {
  test('revocation answers application/json {} with nosniff; an empty token is 400', async () => {
    const { t, client } = await signedInApp()
    const token = await tokenThroughFlow(t, client, 'email')
    const revoke = (value: string) =>
      t.handle('/api/oauth/revoke', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: 'Basic ' + btoa(`${client.client.id}:${client.secret}`) },
        body: form({ token: value }),
      })
    const ok = await revoke(token)
    expect(ok.status).toBe(200)
    expect(ok.headers.get('content-type')).toBe('application/json')
    expect(ok.headers.get('x-content-type-options')).toBe('nosniff')
    expect(await ok.json()).toEqual({})
    const empty = await revoke('')
    expect(empty.status).toBe(400)
    expect(await empty.json()).toEqual({ error: 'invalid_request', error_description: 'token is required' })
  })

  test('a public client sending Basic base64(client_id:) is a public client, not a failed authentication', async () => {
    const t = await createTestApp()
    const app = await addClient(t, { public: true })
    await addUser(t)
    const jar = await signIn(t)
    const verifier = 'v'.repeat(43)
    const page = await t.handle(authorizePath({ client_id: app.client.id, redirect_uri: CALLBACK, scope: 'email', code_challenge: sha256(verifier), code_challenge_method: 'S256' }), { headers: { cookie: cookieHeader(jar) } })
    const html = await page.text()
    const fields = Object.fromEntries([...html.matchAll(/name="([a-z_]+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]))
    const callback = await postForm(t, '/oauth/authorize', { ...fields, decision: 'allow' }, jar)
    const code = new URL(callback.headers.get('location')!).searchParams.get('code')!
    const res = await t.handle('/api/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: 'Basic ' + btoa(`${app.client.id}:`) },
      body: form({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK, code_verifier: verifier }),
    })
    expect(res.status).toBe(200)
    // A confidential client with an empty password is still refused, with the Basic challenge.
    const confidential = await addClient(t)
    const refused = await t.handle('/api/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: 'Basic ' + btoa(`${confidential.client.id}:`) },
      body: form({ grant_type: 'authorization_code', code: 'x', redirect_uri: CALLBACK }),
    })
    expect(refused.status).toBe(401)
    expect(refused.headers.get('www-authenticate')).toStartWith('Basic')
  })

  test('every kind of response sends X-Content-Type-Options: nosniff', async () => {
    const { t, client, jar } = await signedInApp()
    const token = await tokenThroughFlow(t, client, 'settings:read settings:write')
    await t.handle('/api/settings', { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(token) }, body: JSON.stringify({ client_id: client.client.id, key: 'k', value: 1 }) })
    const etag = (await t.handle('/api/settings/k', { headers: bearer(token) })).headers.get('etag')!
    const responses = [
      await t.handle('/api/oauth/userinfo', { headers: bearer(token) }),
      await t.handle('/api/oauth/userinfo'),
      await t.handle('/api/settings/k', { headers: { ...bearer(token), 'if-none-match': etag } }),
      await t.handle('/api/settings', { method: 'OPTIONS', headers: { origin: 'https://a.example', 'access-control-request-method': 'POST' } }),
      await t.handle('/api/nope'),
      await t.handle('/healthz'),
      await t.handle('/.well-known/oauth-authorization-server'),
      await t.handle('/assets/app.css'),
      await t.handle('/login'),
      await t.handle('/account', { headers: { cookie: cookieHeader(jar) } }),
      await t.handle('/'),
      await t.handle('/docs'),
      await t.handle('/openapi.json'),
    ]
    for (const res of responses) expect([res.status, res.headers.get('x-content-type-options')]).toEqual([res.status, 'nosniff'])
  })

  test('logout posted without its CSRF field → 403 (not 400)', async () => {
    const { t, jar } = await signedInApp()
    const res = await postForm(t, '/logout', {}, jar)
    expect(res.status).toBe(403)
    expect((await t.handle('/account', { headers: { cookie: cookieHeader(jar) } })).status).toBe(200)
  })
})

describe('item 14: failed sign-ins and throttling are logged as events', () => {
  test('the email is hashed, the password never written; throttling names its limit and the client address', async () => {
    const capture = capturingLogger()
    const t = await createTestApp({ LOGIN_ATTEMPTS_PER_MINUTE: '6' }, { log: capture.log })
    await addUser(t)
    for (let i = 0; i < 6; i++) await attemptLogin(t, 'ann@example.com', 'secret guess 1')
    await attemptLogin(t, 'other@example.com', 'secret guess 2')
    const events = capture.entries().filter((e) => e.msg !== 'request')
    const failed = events.filter((e) => e.msg === 'sign-in failed')
    expect(failed.length).toBe(5)
    expect(failed[0]).toMatchObject({ level: 'warn', reason: 'credentials', email_hash: sha256('ann@example.com').slice(0, 16), client: '192.0.2.1' })
    expect(events.filter((e) => e.msg === 'sign-in throttled').map((e) => [e.limit, e.client])).toEqual([
      ['account', '192.0.2.1'],
      ['address', '192.0.2.1'],
    ])
    const text = capture.text()
    for (const secret of ['ann@example.com', 'other@example.com', 'secret guess']) expect(text).not.toContain(secret)
  })
})
