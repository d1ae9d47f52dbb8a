import { beforeEach, describe, expect, test } from 'bun:test'
import { createGroup } from '../../src/accounts/groups'
import { addSiteRule, createSite } from '../../src/authz/sites'
import { ORIGIN, addClient, addUser, cookieHeader, handleFrom, mintTokenPair, signIn, type TestApp, createTestApp } from '../helpers'
import { peerAddresses } from '../../src/web/client-address'
import { BROWSER, PROXIES, PROXY, authRequest, callback, checkWith, forwardAuth, forwardedFor, siteSession, startAt, startPath, stateCookieFor, type Jar } from './flow'

const PHOTOS = 'https://photos.example.com/albums/1?sort=new'
/** Where an unsigned-in page load goes first: the site's own /.latchkey/start (its state cookie), then Latchkey. */
const start = (rd: string) => `${new URL(rd).origin}/.latchkey/start?rd=${encodeURIComponent(rd)}`

let t: TestApp
let jar: Jar
let annId: string

beforeEach(async () => {
  t = await createTestApp(PROXIES)
  annId = (await addUser(t, 'ann@example.com', 'Ann Lee')).id
  await createGroup(t.store, 'family', t.clock.now())
  await t.store.groups.addMember('family', annId)
  await createSite(t.store, { host: 'photos.example.com', name: 'Photos', allowedGroups: ['family'], jwt: true }, t.clock.now())
  await createSite(t.store, { host: '*.example.org', name: 'Wikis' }, t.clock.now())
  jar = await signIn(t)
})

describe('forward-auth: who may ask, and what they must send', () => {
  test('a caller outside TRUSTED_PROXIES gets 403 on both endpoints, even with a valid site cookie', async () => {
    const cookie = await siteSession(t, jar, PHOTOS)
    expect((await checkWith(t, PHOTOS, cookie)).status).toBe(200)
    const fromBrowser = await forwardAuth(t, forwardedFor(PHOTOS, { cookie }), BROWSER)
    expect(fromBrowser.status).toBe(403)
    expect(await fromBrowser.json()).toEqual({ error: 'access_denied', error_description: 'the caller is not in TRUSTED_PROXIES' })
    expect((await authRequest(t, { 'x-original-url': PHOTOS, cookie }, '10.0.1.2')).status).toBe(403)
    const none = await createTestApp()
    expect((await forwardAuth(none, forwardedFor(PHOTOS), '127.0.0.1')).status).toBe(403)
  })

  test('a missing or malformed forwarded header is 400, never an allow', async () => {
    await addSiteRule(t.store, 'photos.example.com', { policy: 'bypass' })
    expect((await checkWith(t, PHOTOS)).status).toBe(200)
    const full = forwardedFor(PHOTOS)
    const without = (name: string) => Object.fromEntries(Object.entries(full).filter(([k]) => k !== name))
    for (const name of ['x-forwarded-method', 'x-forwarded-proto', 'x-forwarded-host', 'x-forwarded-uri']) {
      const answer = await forwardAuth(t, without(name))
      expect([name, answer.status]).toEqual([name, 400])
    }
    const malformed: Array<[string, string]> = [
      ['x-forwarded-method', 'get'],
      ['x-forwarded-method', 'G T'],
      ['x-forwarded-proto', 'ftp'],
      ['x-forwarded-host', 'photos.example.com/x'],
      ['x-forwarded-host', 'photos.example.com, evil.example'],
      ['x-forwarded-host', 'user@photos.example.com'],
      ['x-forwarded-host', 'photos.example.com:99999'],
      ['x-forwarded-uri', 'albums'],
      ['x-forwarded-uri', 'https://photos.example.com/'],
      ['x-forwarded-uri', '/a b'],
      ['x-forwarded-uri', ''],
    ]
    for (const [name, value] of malformed) {
      const answer = await forwardAuth(t, { ...full, [name]: value })
      expect([name, value, answer.status]).toEqual([name, value, 400])
      expect((await answer.json()).error).toBe('invalid_request')
    }
    expect((await authRequest(t, {})).status).toBe(400)
    for (const url of ['/albums', 'javascript:alert(1)', 'https://', 'https://photos.example.com:0/', 'https://a@photos.example.com/', 'ftp://photos.example.com/'])
      expect([url, (await authRequest(t, { 'x-original-url': url })).status]).toEqual([url, 400])
    expect((await authRequest(t, { 'x-original-url': PHOTOS, 'x-original-method': 'get' })).status).toBe(400)
    expect((await authRequest(t, { 'x-original-url': PHOTOS })).status).toBe(200)
  })

  test('a query string appended to the endpoint URL is ignored', async () => {
    const spoof = '?x-forwarded-host=evil.example&rd=https://evil.example/&host=evil.example'
    const plain = await checkWith(t, PHOTOS)
    const appended = await forwardAuth(t, forwardedFor(PHOTOS), PROXY, '/api/authz/forward-auth' + spoof)
    expect([appended.status, appended.headers.get('location')]).toEqual([plain.status, plain.headers.get('location')])
    expect(appended.headers.get('location')).toBe(start(PHOTOS))
    const nginx = await handleFrom(t, PROXY, '/api/authz/auth-request' + spoof, { headers: { 'x-original-url': PHOTOS } })
    expect([nginx.status, nginx.headers.get('location')]).toEqual([401, start(PHOTOS)])
  })

  test('a host no site names is 403; *.example.org covers its subdomains only', async () => {
    for (const url of ['https://unknown.example.net/', 'https://example.org/', 'https://photos.example.com.evil.net/', 'https://notexample.org/']) {
      const answer = await checkWith(t, url)
      expect([url, answer.status]).toEqual([url, 403])
      expect(await answer.text()).toContain('Access denied')
    }
    expect((await checkWith(t, 'https://wiki.example.org/')).status).toBe(302)
    expect((await checkWith(t, 'https://a.b.example.org/')).status).toBe(302)
  })
})

describe('forward-auth: not signed in', () => {
  test('a page load is sent to sign in (302 for GET and HEAD, 303 for others); anything else gets 401 with WWW-Authenticate', async () => {
    for (const method of ['GET', 'HEAD']) {
      const answer = await checkWith(t, PHOTOS, undefined, { 'x-forwarded-method': method })
      expect([answer.status, answer.headers.get('location')]).toEqual([302, start(PHOTOS)])
    }
    const post = await checkWith(t, PHOTOS, undefined, { 'x-forwarded-method': 'POST' })
    expect([post.status, post.headers.get('location')]).toEqual([303, start(PHOTOS)])
    for (const extra of <Array<Record<string, string>>>[{ accept: 'application/json' }, { 'x-requested-with': 'XMLHttpRequest' }, { authorization: 'Bearer nonsense' }, { accept: '*/*' }]) {
      const answer = await checkWith(t, PHOTOS, undefined, extra)
      expect([JSON.stringify(extra), answer.status, answer.headers.get('www-authenticate'), answer.headers.get('location')]).toEqual([JSON.stringify(extra), 401, 'Bearer realm="https://photos.example.com"', null])
    }
    const nginx = await authRequest(t, { 'x-original-url': PHOTOS, 'x-original-method': 'POST', accept: 'application/json' })
    expect([nginx.status, nginx.headers.get('location')]).toEqual([401, start(PHOTOS)])
  })

  test('a garbage or unknown site cookie is nobody', async () => {
    for (const cookie of ['__Host-lk_site=garbage', '__Host-lk_site=' + 'A'.repeat(43), '__Host-lk_site=', 'lk_site=' + 'A'.repeat(43), '__Host-lk_session=' + jar['lk_session']]) {
      const answer = await checkWith(t, PHOTOS, cookie)
      expect([cookie, answer.status, answer.headers.get('location')]).toEqual([cookie, 302, start(PHOTOS)])
    }
  })
})

describe('forward-auth: signed in', () => {
  test('the whole chain: /authz/start → the site callback with a code → a host-only cookie → 200 with the Remote-* headers and a 60 s Remote-Jwt for the site', async () => {
    const to = await startAt(t, jar, PHOTOS)
    expect(to.origin + to.pathname).toBe('https://photos.example.com/.latchkey/callback')
    expect(to.searchParams.get('rd')).toBe(PHOTOS)
    expect(to.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const back = await callback(t, to)
    expect(back.status).toBe(302)
    expect(back.headers.get('location')).toBe(PHOTOS)
    const [set] = back.headers.getSetCookie()
    expect(set).toMatch(/^__Host-lk_site=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=2592000; Secure$/)
    expect(set).not.toContain('Domain')
    const rows = await t.rows('SELECT id_hash, host FROM site_sessions')
    expect(rows).toEqual([{ id_hash: expect.not.stringContaining(set!.split(';')[0]!.split('=')[1]!), host: 'photos.example.com' }])
    const ok = await checkWith(t, PHOTOS, set!.split(';')[0]!)
    expect(ok.status).toBe(200)
    expect(ok.headers.get('remote-user')).toBe('ann@example.com')
    expect(ok.headers.get('remote-email')).toBe('ann@example.com')
    expect(ok.headers.get('remote-name')).toBe('Ann Lee')
    expect(ok.headers.get('remote-groups')).toBe('family')
    expect(ok.headers.get('remote-id')).toBe(annId)
    const claims = JSON.parse(Buffer.from(ok.headers.get('remote-jwt')!.split('.')[1]!, 'base64url').toString())
    expect(claims).toEqual({ iss: ORIGIN, sub: annId, aud: 'https://photos.example.com', iat: claims.iat, exp: claims.iat + 60, email: 'ann@example.com', name: 'Ann Lee', groups: ['family'] })
    // nginx's auth_request with the same cookie.
    const nginx = await authRequest(t, { 'x-original-url': PHOTOS, cookie: set!.split(';')[0]! })
    expect([nginx.status, nginx.headers.get('remote-user')]).toEqual([200, 'ann@example.com'])
  })

  test('the redirect chain from the first page load: the site’s /.latchkey/start sets a host-only state cookie → /authz/start with it → the callback, which needs that cookie', async () => {
    const first = await checkWith(t, PHOTOS)
    expect([first.status, first.headers.get('location')]).toEqual([302, start(PHOTOS)])
    const site = (path: string, cookie = '') => handleFrom(t, PROXY, path, { headers: { 'x-forwarded-host': 'photos.example.com', 'x-forwarded-proto': 'https', cookie } })
    const atSite = await site(new URL(first.headers.get('location')!).pathname + new URL(first.headers.get('location')!).search)
    expect(atSite.status).toBe(302)
    const toIssuer = new URL(atSite.headers.get('location')!)
    const state = toIssuer.searchParams.get('state')!
    expect(toIssuer.href).toBe(`${ORIGIN}${startPath(PHOTOS, state)}`)
    expect(atSite.headers.getSetCookie()).toEqual([`__Host-lk_state=${state}; Path=/; HttpOnly; SameSite=Lax; Max-Age=3600; Secure`])
    // A second tab keeps the state the browser already has.
    const again = await site(`/.latchkey/start?rd=${encodeURIComponent(PHOTOS)}`, stateCookieFor(PHOTOS, state))
    expect(new URL(again.headers.get('location')!).searchParams.get('state')).toBe(state)
    const to = new URL((await handleFrom(t, BROWSER, toIssuer.pathname + toIssuer.search, { headers: { cookie: cookieHeader(jar) } })).headers.get('location')!)
    const back = await callback(t, to, to.host, PROXY, state)
    expect([back.status, back.headers.get('location')]).toEqual([302, PHOTOS])
    expect(back.headers.getSetCookie()[1]).toBe('__Host-lk_state=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Secure')
    expect((await checkWith(t, PHOTOS, back.headers.getSetCookie()[0]!.split(';')[0]!)).status).toBe(200)
    // /authz/start without a state (an old link) sends the browser to the site to get one.
    const stateless = await handleFrom(t, BROWSER, `/authz/start?rd=${encodeURIComponent(PHOTOS)}`, { headers: { cookie: cookieHeader(jar) } })
    expect([stateless.status, stateless.headers.get('location')]).toEqual([302, start(PHOTOS)])
    // /.latchkey/start only for a page of this very origin.
    for (const rd of ['https://wiki.example.org/', 'http://photos.example.com/', 'https://photos.example.com:8443/', 'https://evil.example.net/']) {
      expect([rd, (await site(`/.latchkey/start?rd=${encodeURIComponent(rd)}`)).status]).toEqual([rd, 400])
    }
  })

  test('with an https ISSUER, a plain-http site URL is refused (no code or cookie in clear); a site session made over http is none over https', async () => {
    const secure = await createTestApp({ ...PROXIES, ISSUER: 'https://id.example.com' })
    await createSite(secure.store, { host: 'photos.example.com', name: 'Photos' }, secure.clock.now())
    const plain = 'http://photos.example.com:8080/albums/1'
    expect((await handleFrom(secure, BROWSER, startPath(plain))).status).toBe(400)
    const atSite = await handleFrom(secure, PROXY, `/.latchkey/start?rd=${encodeURIComponent(plain)}`, { headers: { 'x-forwarded-host': 'photos.example.com:8080', 'x-forwarded-proto': 'http' } })
    expect(atSite.status).toBe(400)
    // With an http ISSUER (a test set-up) an http site works, but its cookie is worth nothing as __Host-lk_site over https.
    const overHttp = await siteSession(t, jar, 'http://photos.example.com/albums/1')
    expect(overHttp).toStartWith('lk_site=')
    expect((await checkWith(t, 'http://photos.example.com/albums/1', overHttp)).status).toBe(200)
    const asHttps = `__Host-${overHttp}`
    expect((await checkWith(t, PHOTOS, asHttps)).status).toBe(302)
    expect((await checkWith(t, PHOTOS, overHttp)).status).toBe(302)
  })

  test('one sign-in, any number of sites: a second domain needs no password again', async () => {
    const photos = await siteSession(t, jar, PHOTOS)
    const wiki = await siteSession(t, jar, 'http://wiki.example.org:8080/page')
    expect(wiki).toMatch(/^lk_site=/)
    expect((await checkWith(t, 'http://wiki.example.org:8080/page', wiki)).status).toBe(200)
    expect((await checkWith(t, PHOTOS, photos)).status).toBe(200)
  })

  test('a site cookie presented at another site (or another subdomain of a wildcard) is refused', async () => {
    const photos = await siteSession(t, jar, PHOTOS)
    const wiki = await siteSession(t, jar, 'https://wiki.example.org/')
    for (const [url, cookie] of [['https://wiki.example.org/', photos], ['https://docs.example.org/', wiki], [PHOTOS, wiki]] as const) {
      const answer = await checkWith(t, url, cookie)
      expect([url, answer.status, answer.headers.get('remote-user')]).toEqual([url, 302, null])
    }
    // Under http the __Host- cookie is not the one read.
    expect((await checkWith(t, 'http://photos.example.com/', photos)).status).toBe(302)
  })

  test('path parameters cannot slip past a path rule: a `;` in a segment, raw or encoded, is denied', async () => {
    await addSiteRule(t.store, 'photos.example.com', { paths: ['^/admin/'], policy: 'deny' })
    await addSiteRule(t.store, 'photos.example.com', { policy: 'bypass' })
    expect((await checkWith(t, 'https://photos.example.com/photos/1')).status).toBe(200)
    expect((await checkWith(t, 'https://photos.example.com/admin/x')).status).toBe(403)
    for (const path of ['/admin;a=b/x', '/admin%3Bx/x', '/admin%3bx/x', '/photos;x/../admin/x']) {
      expect({ path, status: (await checkWith(t, `https://photos.example.com${path}`)).status }).toEqual({ path, status: 403 })
    }
  })

  test('signed in but not allowed: 403 "Access denied" (a deny policy, not in the allowed groups)', async () => {
    await t.store.groups.removeMember('family', annId)
    const denied = await handleFrom(t, BROWSER, startPath(PHOTOS), { headers: { cookie: `lk_session=${jar['lk_session']}` } })
    expect(denied.status).toBe(403)
    expect(await denied.text()).toContain('Access denied')
    await createSite(t.store, { host: 'closed.example.com', name: 'Closed', policy: 'deny' }, t.clock.now())
    const closed = await checkWith(t, 'https://closed.example.com/')
    expect(closed.status).toBe(403)
    expect(closed.headers.get('content-type')).toContain('text/html')
  })
})

describe('forward-auth: answered before the router, exactly as through it (issue 35 speed)', () => {
  const request = (path: string, init: RequestInit) => {
    const r = new Request(ORIGIN + path, init)
    peerAddresses.set(r, PROXY)
    return r
  }

  test('a check whose site and site session are cached is answered without a promise; a first one, with', async () => {
    const WIKI = 'https://team.example.org/pages/1'
    const cookie = await siteSession(t, jar, WIKI)
    await createSite(t.store, { host: 'wiki.example.net', name: 'Wiki' }, t.clock.now())
    const first = t.app.respond(request('/api/authz/forward-auth', { headers: forwardedFor('https://wiki.example.net/') }))
    expect(first).toBeInstanceOf(Promise)
    expect((await first).status).toBe(302)
    expect((await checkWith(t, WIKI, cookie)).status).toBe(200)
    const cached = t.app.respond(request('/api/authz/forward-auth', { headers: forwardedFor(WIKI, { cookie }) })) as Response
    expect(cached).toBeInstanceOf(Response)
    expect([cached.status, cached.headers.get('remote-email'), cached.headers.get('cache-control')]).toEqual([200, 'ann@example.com', 'no-store'])
    const nginx = t.app.respond(request('/api/authz/auth-request', { headers: { 'x-original-url': WIKI, cookie } })) as Response
    expect(nginx).toBeInstanceOf(Response)
    expect([nginx.status, nginx.headers.get('remote-id')]).toEqual([200, annId])
    // A site that asks for Remote-Jwt signs one per check: a promise, and still 200.
    const photos = await siteSession(t, jar, PHOTOS)
    expect((await checkWith(t, PHOTOS, photos)).headers.get('remote-jwt')).toMatch(/^ey/)
  })

  test('the request guard still runs first: a malformed Host is 400 on both endpoints', async () => {
    for (const path of ['/api/authz/forward-auth', '/api/authz/auth-request']) {
      const answer = await handleFrom(t, PROXY, path, { headers: { ...forwardedFor(PHOTOS), 'x-original-url': PHOTOS, host: 'a b' } })
      expect([path, answer.status]).toEqual([path, 400])
      expect(await answer.json()).toEqual({ error: 'invalid_request', error_description: 'the Host header is not a valid host[:port]' })
    }
  })

  test('another method still meets the router: 405 naming GET', async () => {
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const answer = await handleFrom(t, PROXY, '/api/authz/forward-auth', { method, headers: forwardedFor(PHOTOS) })
      expect([method, answer.status, answer.headers.get('allow')]).toEqual([method, 405, 'GET'])
      expect((await answer.json()).error).toBe('method_not_allowed')
    }
  })

  test('a fault thrown at once or later is the app’s own 500 with a request id, nothing of it in the body', async () => {
    const findSites = t.store.sites.findSites.bind(t.store.sites)
    t.store.sites.findSites = () => {
      throw new Error('disk on fire: secret-detail')
    }
    const thrown = await checkWith(t, 'https://other.example.com/')
    expect(thrown.status).toBe(500)
    const body = await thrown.json()
    expect(body.error).toBe('server_error')
    expect(body.error_description).toMatch(/^an unexpected error occurred; it was logged with request id \S+$/)
    t.store.sites.findSites = () => Promise.reject(new Error('disk on fire: secret-detail'))
    const rejected = await authRequest(t, { 'x-original-url': 'https://other.example.com/' })
    expect(rejected.status).toBe(500)
    expect((await rejected.json()).error).toBe('server_error')
    t.store.sites.findSites = findSites
    expect((await checkWith(t, 'https://other.example.com/')).status).toBe(403)
  })
})
