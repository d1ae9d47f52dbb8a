import { beforeEach, describe, expect, test } from 'bun:test'
import { createClient, findClient, updateClient } from '../../src/oauth/clients'
import { addClient, authorizePath, CALLBACK, cookieHeader, csrfFrom, ORIGIN, postForm, signedInApp, type TestApp } from '../helpers'

/**
 * Issue 38, pushed authorization requests (RFC 9126; SPEC "Machines and devices"): the client
 * pushes the parameters, then sends the browser with client_id and request_uri, used once.
 */
let t: TestApp
let client: Awaited<ReturnType<typeof addClient>>
let jar: Record<string, string>

beforeEach(async () => {
  ;({ t, client, jar } = await signedInApp())
})

const basic = (c: Awaited<ReturnType<typeof addClient>>) => ({ authorization: `Basic ${btoa(`${c.client.id}:${c.secret}`)}` })
const PARAMS = { response_type: 'code', redirect_uri: CALLBACK, scope: 'openid email', state: 'st8', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' }

function push(fields: Record<string, string>, headers: Record<string, string> = basic(client)) {
  return t.handle('/api/oauth/par', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(fields) })
}
async function pushed(fields: Record<string, string> = PARAMS): Promise<string> {
  const res = await push(fields)
  expect(res.status).toBe(201)
  expect(res.headers.get('cache-control')).toBe('no-store')
  const body = (await res.json()) as { request_uri: string; expires_in: number }
  expect(body.expires_in).toBe(60)
  expect(body.request_uri).toMatch(/^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{43}$/)
  return body.request_uri
}
/** The handle the consent form carries: the request_uri redeemed when the browser first brought it. */
function carried(html: string): string {
  const m = /name="request_uri" value="([^"]+)"/.exec(html)
  if (!m) throw new Error('no request_uri in page')
  return m[1]!
}
const authorize = (params: Record<string, string>) => t.handle(authorizePath(params), { headers: { cookie: cookieHeader(jar) } })
async function errorPage(res: Response, text: string) {
  expect(res.status).toBe(400)
  expect(res.headers.get('location')).toBeNull()
  expect(await res.text()).toContain(text)
}

describe('POST /api/oauth/par', () => {
  test('201 {request_uri, expires_in: 60}; the consent page carries only client_id and request_uri; Allow sends the code with state', async () => {
    const uri = await pushed()
    // Parameters in the URL beside request_uri are not read (§4): this scope is ignored.
    const page = await authorize({ client_id: client.client.id, request_uri: uri, scope: 'settings:write' })
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toContain('name="request_uri"')
    expect(html).not.toContain('name="redirect_uri"')
    expect(html).not.toContain('settings:write')
    const handle = carried(html)
    expect(handle).toMatch(/^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{43}$/)
    expect(handle).not.toBe(uri)
    const res = await postForm(t, '/oauth/authorize', { client_id: client.client.id, request_uri: handle, csrf_token: csrfFrom(html), decision: 'allow' }, jar)
    expect(res.status).toBe(303)
    const callback = new URL(res.headers.get('location')!)
    expect(callback.origin + callback.pathname).toBe(CALLBACK)
    expect(callback.searchParams.get('state')).toBe('st8')
    expect(callback.searchParams.get('code')).toBeTruthy()
    expect(callback.searchParams.get('iss')).toBe(ORIGIN)
    // Used once: the request_uri or its handle again is an error page, on GET and on a second decision.
    await errorPage(await authorize({ client_id: client.client.id, request_uri: uri }), 'expired or was used already')
    await errorPage(await authorize({ client_id: client.client.id, request_uri: handle }), 'expired or was used already')
    await errorPage(await postForm(t, '/oauth/authorize', { client_id: client.client.id, request_uri: handle, csrf_token: csrfFrom(html), decision: 'allow' }, jar), 'expired or was used already')
    expect(Number((await t.row('SELECT count(*) AS n FROM pushed_requests'))!.n)).toBe(0)
  })

  test("another client's request_uri, an expired one, an unknown one: an error page, never a redirect", async () => {
    const uri = await pushed()
    const other = await addClient(t, { name: 'Other' })
    await errorPage(await authorize({ client_id: other.client.id, request_uri: uri }), 'expired or was used already')
    await errorPage(await authorize({ client_id: client.client.id, request_uri: 'urn:ietf:params:oauth:request_uri:nope' }), 'expired or was used already')
    t.clock.advance(60_001)
    await errorPage(await authorize({ client_id: client.client.id, request_uri: uri }), 'expired or was used already')
  })

  test('checked as /oauth/authorize would: JSON errors, nothing stored', async () => {
    const refused = async (res: Response, status: number, error: string) => {
      expect(res.status).toBe(status)
      expect(((await res.json()) as { error: string }).error).toBe(error)
    }
    await refused(await push({ ...PARAMS, redirect_uri: 'https://evil.example/cb' }), 400, 'invalid_request')
    await refused(await push({ ...PARAMS, scope: 'nonsense' }), 400, 'invalid_scope')
    await refused(await push({ ...PARAMS, response_type: 'token' }), 400, 'unsupported_response_type')
    await refused(await push({ ...PARAMS, resource: 'https://unknown.example' }), 400, 'invalid_target')
    await refused(await push({ ...PARAMS, request_uri: 'urn:ietf:params:oauth:request_uri:x' }), 400, 'invalid_request')
    await refused(await push(PARAMS, { authorization: `Basic ${btoa(`${client.client.id}:wrong`)}` }), 401, 'invalid_client')
    await refused(await push(PARAMS, {}), 401, 'invalid_client')
    expect(Number((await t.row('SELECT count(*) AS n FROM pushed_requests'))!.n)).toBe(0)
  })

  test('a public client pushes with its client_id and PKCE', async () => {
    const spa = await addClient(t, { public: true, name: 'SPA' })
    const res = await push({ ...PARAMS, client_id: spa.client.id }, {})
    expect(res.status).toBe(201)
  })

  test('--require-par: the plain request is a page; a pushed one works; Deny uses it up too', async () => {
    const stored = (await findClient(t.store, client.client.id))!
    expect(await updateClient(t.store, stored.id, { ...stored, requirePar: true })).toBe(true)
    expect((await findClient(t.store, client.client.id))!.requirePar).toBe(true)
    await errorPage(await authorize({ client_id: client.client.id, ...PARAMS }), 'must send its sign-in requests to this server first')
    const uri = await pushed()
    const page = await authorize({ client_id: client.client.id, request_uri: uri })
    expect(page.status).toBe(200)
    const html = await page.text()
    const res = await postForm(t, '/oauth/authorize', { client_id: client.client.id, request_uri: carried(html), csrf_token: csrfFrom(html), decision: 'deny' }, jar)
    expect(new URL(res.headers.get('location')!).searchParams.get('error')).toBe('access_denied')
    await errorPage(await authorize({ client_id: client.client.id, request_uri: uri }), 'expired or was used already')
    await errorPage(await authorize({ client_id: client.client.id, request_uri: carried(html) }), 'expired or was used already')
  })

  test('not signed in: /login returns to the redeemed request (its handle, not the request_uri), which still works afterwards', async () => {
    const uri = await pushed()
    const res = await t.handle(authorizePath({ client_id: client.client.id, request_uri: uri }))
    expect(res.status).toBe(303)
    const login = new URL(res.headers.get('location')!, ORIGIN)
    expect(login.pathname).toBe('/login')
    const back = new URL(login.searchParams.get('return_to')!, ORIGIN)
    expect(back.pathname).toBe('/oauth/authorize')
    expect(back.searchParams.get('client_id')).toBe(client.client.id)
    const handle = back.searchParams.get('request_uri')!
    expect(handle).toMatch(/^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{43}$/)
    expect(handle).not.toBe(uri)
    expect((await authorize({ client_id: client.client.id, request_uri: handle })).status).toBe(200)
    // The request_uri itself was used when the browser first brought it.
    await errorPage(await authorize({ client_id: client.client.id, request_uri: uri }), 'expired or was used already')
  })

  test('expiry is checked once, at redemption (RFC 9126 §4): a sign-in and a decision that take minutes go on; the redeemed flow has its own 15 minutes', async () => {
    const uri = await pushed()
    const login = new URL((await t.handle(authorizePath({ client_id: client.client.id, request_uri: uri }))).headers.get('location')!, ORIGIN)
    t.clock.advance(5 * 60_000) // the request_uri's 60 s are long past while the user signs in
    const page = await t.handle(login.searchParams.get('return_to')!, { headers: { cookie: cookieHeader(jar) } })
    expect(page.status).toBe(200)
    const html = await page.text()
    t.clock.advance(5 * 60_000)
    const res = await postForm(t, '/oauth/authorize', { client_id: client.client.id, request_uri: carried(html), csrf_token: csrfFrom(html), decision: 'allow' }, jar)
    expect(res.status).toBe(303)
    expect(new URL(res.headers.get('location')!).searchParams.get('code')).toBeTruthy()

    // Consent is remembered now: prompt=consent shows the page again.
    const slow = await authorize({ client_id: client.client.id, request_uri: await pushed({ ...PARAMS, prompt: 'consent' }) })
    const slowHtml = await slow.text()
    t.clock.advance(15 * 60_000 + 1)
    await errorPage(await postForm(t, '/oauth/authorize', { client_id: client.client.id, request_uri: carried(slowHtml), csrf_token: csrfFrom(slowHtml), decision: 'allow' }, jar), 'expired or was used already')
  })

  test('used up even when the authorization ends in an error redirect (prompt=none without a session: login_required)', async () => {
    const uri = await pushed({ ...PARAMS, prompt: 'none' })
    const res = await t.handle(authorizePath({ client_id: client.client.id, request_uri: uri }))
    expect(res.status).toBe(303)
    const callback = new URL(res.headers.get('location')!)
    expect([callback.origin + callback.pathname, callback.searchParams.get('error'), callback.searchParams.get('state')]).toEqual([CALLBACK, 'login_required', 'st8'])
    await errorPage(await authorize({ client_id: client.client.id, request_uri: uri }), 'expired or was used already')
    expect(Number((await t.row('SELECT count(*) AS n FROM pushed_requests'))!.n)).toBe(0)
  })

  test('redeemed once on any path: a second browser bringing the same request_uri gets the error page', async () => {
    const uri = await pushed()
    expect((await authorize({ client_id: client.client.id, request_uri: uri })).status).toBe(200)
    await errorPage(await t.handle(authorizePath({ client_id: client.client.id, request_uri: uri })), 'expired or was used already')
    // Two at once: one redeems it.
    const again = await pushed()
    const both = await Promise.all([authorize({ client_id: client.client.id, request_uri: again }), authorize({ client_id: client.client.id, request_uri: again })])
    expect(both.map((r) => r.status).sort()).toEqual([200, 400])
  })

  test('a client has at most 100 pushes waiting: the 101st is 429 temporarily_unavailable with Retry-After 60, nothing stored; redemption or expiry frees a place; other clients are not held up', async () => {
    const uris: string[] = []
    for (let i = 0; i < 100; i++) uris.push(await pushed())
    const over = await push(PARAMS)
    expect(over.status).toBe(429)
    expect(over.headers.get('retry-after')).toBe('60')
    expect(((await over.json()) as { error: string }).error).toBe('temporarily_unavailable')
    expect(Number((await t.row('SELECT count(*) AS n FROM pushed_requests'))!.n)).toBe(100)
    const other = await addClient(t, { name: 'Other' })
    expect((await push(PARAMS, basic(other))).status).toBe(201)
    // Brought by a browser: redeemed, out of the count.
    expect((await authorize({ client_id: client.client.id, request_uri: uris[0]! })).status).toBe(200)
    expect((await push(PARAMS)).status).toBe(201)
    expect((await push(PARAMS)).status).toBe(429)
    t.clock.advance(60_001)
    expect((await push(PARAMS)).status).toBe(201)
  })

  test('pushes sent at once cannot pass the cap: of 20 in parallel with 90 waiting, exactly 10 are stored', async () => {
    for (let i = 0; i < 90; i++) await pushed()
    const answers = await Promise.all(Array.from({ length: 20 }, () => push(PARAMS)))
    expect(answers.filter((r) => r.status === 201).length).toBe(10)
    expect(answers.filter((r) => r.status === 429).length).toBe(10)
    expect(Number((await t.row('SELECT count(*) AS n FROM pushed_requests'))!.n)).toBe(100)
  })

  test('discovery names the endpoint; the purge removes expired requests', async () => {
    const doc = (await (await t.handle('/.well-known/openid-configuration')).json()) as Record<string, unknown>
    expect(doc.pushed_authorization_request_endpoint).toBe(`${ORIGIN}/api/oauth/par`)
    expect(doc.require_pushed_authorization_requests).toBe(false)
    await pushed()
    t.clock.advance(61_000)
    await t.store.purgeExpired(t.clock.now(), { usedCodes: 3600_000, throttle: 3600_000, refreshGrace: 10_000, retiredKeys: 3600_000, mail: 7 * 24 * 3600_000, settingChanges: 30 * 86_400_000 })
    expect(Number((await t.row('SELECT count(*) AS n FROM pushed_requests'))!.n)).toBe(0)
  })
})

test('a client created with --require-par says so in its view', async () => {
  const t2 = (await signedInApp()).t
  const made = await createClient(t2.store, { name: 'Strict', redirectUris: [CALLBACK], public: false, skipConsent: false, requirePar: true }, t2.clock.now())
  expect(made.client.requirePar).toBe(true)
})

describe('ui_locales of a pushed request (OpenID Connect Core §3.1.2.1; issue 36)', () => {
  const EN = { 'accept-language': 'en' }
  const langOf = async (res: Response) => {
    expect(res.status).toBe(200)
    return /^<!doctype html><html lang="([^"]+)"/.exec(await res.text())?.[1]
  }

  test('the sign-in and the consent page speak the pushed ui_locales (German), as a plain request’s, over the browser’s language', async () => {
    const uri = await pushed({ ...PARAMS, ui_locales: 'de-AT en' })
    const start = await t.handle(authorizePath({ client_id: client.client.id, request_uri: uri }), { headers: EN })
    expect(start.status).toBe(303)
    const login = new URL(start.headers.get('location')!, ORIGIN)
    const returnTo = login.searchParams.get('return_to')!
    const page = await t.handle(login.pathname + login.search, { headers: EN })
    const html = await page.text()
    expect(html).toStartWith('<!doctype html><html lang="de" dir="ltr">')
    const browser: Record<string, string> = {}
    for (const c of page.headers.getSetCookie()) browser[c.split('=')[0]!] = c.slice(c.indexOf('=') + 1).split(';')[0]!
    const signedIn = await t.handle('/login', {
      method: 'POST',
      headers: { ...EN, 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader(browser) },
      body: new URLSearchParams({ email: 'ann@example.com', password: 'correct horse battery', csrf_token: csrfFrom(html), return_to: returnTo }),
    })
    expect(signedIn.status).toBe(303)
    expect(signedIn.headers.get('location')).toBe(returnTo)
    for (const c of signedIn.headers.getSetCookie()) browser[c.split('=')[0]!] = c.slice(c.indexOf('=') + 1).split(';')[0]!
    expect(await langOf(await t.handle(returnTo, { headers: { ...EN, cookie: cookieHeader(browser) } }))).toBe('de')
  })

  test('a signed-in user’s consent page speaks the pushed ui_locales (Japanese), and so does the redeemed request when the browser comes back to it', async () => {
    const uri = await pushed({ ...PARAMS, ui_locales: 'ja' })
    const page = await t.handle(authorizePath({ client_id: client.client.id, request_uri: uri }), { headers: { ...EN, cookie: cookieHeader(jar) } })
    const html = await page.text()
    expect(html).toStartWith('<!doctype html><html lang="ja" dir="ltr">')
    // The language menu comes back to the redeemed request, not to the request_uri it used up.
    const menu = /<form method="post" action="\/language" class="language"><input type="hidden" name="return_to" value="([^"]+)"/.exec(html)![1]!.replace(/&amp;/g, '&')
    expect(new URL(menu, ORIGIN).searchParams.get('request_uri')).toBe(carried(html))
    expect(await langOf(await t.handle(authorizePath({ client_id: client.client.id, request_uri: carried(html) }), { headers: { ...EN, cookie: cookieHeader(jar) } }))).toBe('ja')
    // A push without it: the browser's language, as before.
    expect(await langOf(await t.handle(authorizePath({ client_id: client.client.id, request_uri: await pushed() }), { headers: { ...EN, cookie: cookieHeader(jar) } }))).toBe('en')
  })
})
