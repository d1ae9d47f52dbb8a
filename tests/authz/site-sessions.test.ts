import { beforeEach, describe, expect, test } from 'bun:test'
import { createGroup, removeMember } from '../../src/accounts/groups'
import { setUserDisabled } from '../../src/accounts/users'
import { addSiteRule, createSite } from '../../src/authz/sites'
import { CALLBACK, ORIGIN, addClient, addUser, authorizeAndAllow, authorizePath, cookieHeader, csrfFrom, handleFrom, mintTokenPair, postForm, signIn, tokenRequest, type TestApp, createTestApp } from '../helpers'
import { csrfOf, turnOnTotp } from '../accounts/mfa-flows'
import { BROWSER, PROXIES, PROXY, STATE, callback, checkWith, expectStartedAgain, siteSession, startAt, startPath, stateCookieFor, type Jar } from './flow'

const PHOTOS = 'https://photos.example.com/albums/1'
const WIKI = 'https://wiki.example.org/page'
const start = (rd: string) => `${ORIGIN}${startPath(rd)}`
const fromBrowser = (path: string, jar: Jar = {}) => handleFrom(t, BROWSER, path, { headers: { cookie: cookieHeader(jar) } })

let t: TestApp
let jar: Jar
let annId: string

beforeEach(async () => {
  t = await createTestApp(PROXIES)
  annId = (await addUser(t, 'ann@example.com', 'Ann Lee')).id
  await createGroup(t.store, 'family', t.clock.now())
  await t.store.groups.addMember('family', annId)
  await createSite(t.store, { host: 'photos.example.com', name: 'Photos', allowedGroups: ['family'] }, t.clock.now())
  await createSite(t.store, { host: '*.example.org', name: 'Wikis' }, t.clock.now())
  jar = await signIn(t)
})

describe('/authz/start', () => {
  test('signed out: to /login and back; the sign-in form lets its POST end at the site (CSP form-action)', async () => {
    const out = await fromBrowser(startPath(PHOTOS))
    expect(out.status).toBe(303)
    const login = out.headers.get('location')!
    expect(login).toBe(`/login?return_to=${encodeURIComponent(startPath(PHOTOS))}`)
    const page = await fromBrowser(login)
    expect(page.headers.get('content-security-policy')).toContain('form-action \'self\' https://photos.example.com')
    const fresh: Jar = {}
    const csrf = await csrfOf(t, login, fresh)
    const signedIn = await postForm(t, '/login', { email: 'ann@example.com', password: 'correct horse battery', csrf_token: csrf, return_to: startPath(PHOTOS) }, fresh)
    expect([signedIn.status, signedIn.headers.get('location')]).toEqual([303, startPath(PHOTOS)])
  })

  test('rd must be an http(s) URL on a site\'s host, else 400 (no open redirect)', async () => {
    for (const rd of ['https://evil.example/', 'https://example.org/', 'javascript:alert(1)', '/albums', '//photos.example.com/', 'https://photos.example.com.evil.net/', 'https://photos.example.com@evil.example/', 'https://evil.example\\@photos.example.com/', 'https://photos.example.com/%2f..%2fadmin', '']) {
      const answer = await fromBrowser(startPath(rd), jar)
      expect([rd, answer.status, answer.headers.get('location')]).toEqual([rd, 400, null])
    }
    expect((await fromBrowser('/authz/start', jar)).status).toBe(400)
    expect(await t.rows('SELECT * FROM site_codes')).toEqual([])
  })

  test('two-factor sites: a one-factor session steps up at /login/two-step and comes back; without a second factor, a page says how', async () => {
    await createSite(t.store, { host: 'vault.example.com', name: 'Vault', policy: 'two-factor' }, t.clock.now())
    const VAULT = 'https://vault.example.com/'
    const none = await fromBrowser(startPath(VAULT), jar)
    expect(none.status).toBe(403)
    expect(await none.text()).toContain('Two-step sign-in required')
    const { totp } = await turnOnTotp(t, jar)
    const up = await fromBrowser(startPath(VAULT), jar)
    expect([up.status, up.headers.get('location')]).toEqual([303, `/login/two-step?return_to=${encodeURIComponent(startPath(VAULT))}`])
    const page = await fromBrowser(up.headers.get('location')!, jar)
    expect(page.headers.get('content-security-policy')).toContain('https://vault.example.com')
    t.clock.advance(30_000) // the code that confirmed TOTP is spent
    const done = await postForm(t, '/login/two-step', { csrf_token: csrfFrom(await page.text()), code: totp.generate({ timestamp: t.clock.now() }), return_to: startPath(VAULT) }, jar)
    expect([done.status, done.headers.get('location')]).toEqual([303, startPath(VAULT)])
    for (const c of done.headers.getSetCookie()) jar[c.split('=')[0]!] = c.split(';')[0]!.slice(c.indexOf('=') + 1)
    const cookie = await siteSession(t, jar, VAULT)
    expect((await checkWith(t, VAULT, cookie)).status).toBe(200)
  })
})

describe('one-time codes', () => {
  test('a code is bound to its host: shown at another it is refused and spent', async () => {
    const to = await startAt(t, jar, PHOTOS)
    const elsewhere = await callback(t, to, 'wiki.example.org')
    expect([elsewhere.status, elsewhere.headers.getSetCookie()]).toEqual([400, []])
    expectStartedAgain(await callback(t, to), PHOTOS)
  })

  test('a code is bound to the scheme and port of its return URL: shown over http, or at another port, it is refused and spent', async () => {
    for (const other of ['http://photos.example.com/albums/1', 'https://photos.example.com:8443/albums/1']) {
      const to = await startAt(t, jar, PHOTOS)
      const wrong = new URL(other)
      wrong.pathname = to.pathname
      wrong.search = to.search
      const refused = await callback(t, wrong)
      expect([other, refused.status, refused.headers.getSetCookie()]).toEqual([other, 400, []])
      expectStartedAgain(await callback(t, to), PHOTOS)
    }
    expect(await t.rows('SELECT * FROM site_codes')).toEqual([])
  })

  test('a code is good only in the browser that asked for it: sent to another browser (login CSRF), it is refused, spent, and that browser signs in as itself', async () => {
    // Mallory starts a sign-in in her own browser (her state cookie) and sends the victim the callback link.
    await t.store.groups.addMember('family', (await addUser(t, 'mallory@example.com', 'Mallory')).id)
    const mallory = await signIn(t, 'mallory@example.com')
    const malloryState = 'mallory-state-'.padEnd(43, 'm')
    const started = await handleFrom(t, BROWSER, startPath(PHOTOS, malloryState), { headers: { cookie: cookieHeader(mallory) } })
    const to = new URL(started.headers.get('location')!)
    // The victim's browser: no state cookie, or one of its own.
    const victimState = expectStartedAgain(await callback(t, to, to.host, PROXY, undefined), PHOTOS)
    expect(victimState).not.toBe(malloryState)
    expectStartedAgain(await callback(t, to, to.host, PROXY, STATE), PHOTOS)
    // The code is dead: even Mallory's own browser cannot spend it now.
    expectStartedAgain(await callback(t, to, to.host, PROXY, malloryState), PHOTOS)
    expect(await t.rows('SELECT * FROM site_codes')).toEqual([])
    // The victim's restarted chain ends in the victim's own site session.
    const mine = await handleFrom(t, BROWSER, startPath(PHOTOS, victimState), { headers: { cookie: cookieHeader(jar) } })
    const back = await callback(t, new URL(mine.headers.get('location')!), 'photos.example.com', PROXY, victimState)
    expect(back.status).toBe(302)
    const cookie = back.headers.getSetCookie()[0]!.split(';')[0]!
    expect((await checkWith(t, PHOTOS, cookie)).headers.get('remote-user')).toBe('ann@example.com')
  })

  test('a code works once, for 60 seconds', async () => {
    const to = await startAt(t, jar, PHOTOS)
    expect((await callback(t, to)).status).toBe(302)
    expectStartedAgain(await callback(t, to), PHOTOS)
    const late = await startAt(t, jar, PHOTOS)
    t.clock.advance(60_001)
    expectStartedAgain(await callback(t, late), PHOTOS)
    for (const code of ['', 'x', 'A'.repeat(43)]) expect((await callback(t, new URL(`https://photos.example.com/.latchkey/callback?code=${code}`))).status).toBe(400)
    expect(await t.rows('SELECT * FROM site_codes')).toEqual([])
  })

  test('the callback binds to X-Forwarded-Host only from a trusted proxy (else Host)', async () => {
    const to = await startAt(t, jar, PHOTOS)
    // A browser reaching Latchkey directly cannot claim to be at photos.example.com by a header.
    expect((await callback(t, to, 'photos.example.com', BROWSER)).status).toBe(400)
  })

  test('codes are stored hashed; handing one out is audited (site.sign_in)', async () => {
    const to = await startAt(t, jar, PHOTOS)
    await t.ctx.audit.flush()
    const [event] = await t.rows("SELECT kind, user_id, detail FROM audit_events WHERE kind = 'site.sign_in'")
    expect(event).toEqual({ kind: 'site.sign_in', user_id: annId, detail: JSON.stringify({ site: 'photos.example.com', host: 'photos.example.com' }) })
    const [row] = await t.rows('SELECT code_hash, host, return_to FROM site_codes')
    expect(row).toEqual({ code_hash: expect.any(String), host: 'photos.example.com', return_to: PHOTOS })
    expect(row!.code_hash).not.toBe(to.searchParams.get('code'))
  })
})

describe('a site session ends with its sign-in session', () => {
  const both = async () => [await siteSession(t, jar, PHOTOS), await siteSession(t, jar, WIKI)] as const
  const statuses = async (photos: string, wiki: string) => [(await checkWith(t, PHOTOS, photos)).status, (await checkWith(t, WIKI, wiki)).status]

  test('signing out ends every site session', async () => {
    const [photos, wiki] = await both()
    expect(await statuses(photos, wiki)).toEqual([200, 200])
    const csrf = await csrfOf(t, '/account', jar)
    expect((await postForm(t, '/logout', { csrf_token: csrf }, jar)).status).toBe(303)
    expect(await statuses(photos, wiki)).toEqual([302, 302])
  })

  test('"sign out everywhere" ends every site session', async () => {
    const [photos, wiki] = await both()
    const csrf = await csrfOf(t, '/account', jar)
    expect((await postForm(t, '/account/sign-out-everywhere', { csrf_token: csrf }, jar)).status).toBe(303)
    expect(await statuses(photos, wiki)).toEqual([302, 302])
  })

  test('disabling the user ends every site session', async () => {
    const [photos, wiki] = await both()
    await setUserDisabled(t.ctx, annId, true)
    expect(await statuses(photos, wiki)).toEqual([302, 302])
  })

  test('leaving the allowed group: 403 at once at that site, the others unaffected', async () => {
    const [photos, wiki] = await both()
    await removeMember(t.ctx, 'family', annId)
    expect(await statuses(photos, wiki)).toEqual([403, 200])
  })

  test('https://HOST/.latchkey/logout: GET shows a button, only its POST (with the token bound to the site cookie) signs out the sign-in session and every site session', async () => {
    const [photos, wiki] = await both()
    const at = (method: string, cookie: string, body?: string) =>
      handleFrom(t, PROXY, '/.latchkey/logout', {
        method,
        body,
        headers: { 'x-forwarded-host': 'photos.example.com', 'x-forwarded-proto': 'https', cookie, ...(body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) },
      })
    // A cross-site link or image (a top-level GET) signs nobody out.
    const page = await at('GET', photos)
    expect([page.status, page.headers.get('cache-control'), page.headers.getSetCookie()]).toEqual([200, 'no-store', []])
    const html = await page.text()
    expect(html).toContain('<form method="post" action="/.latchkey/logout">')
    expect(await statuses(photos, wiki)).toEqual([200, 200])
    // A POST without the token, with another's, or with the token of another site cookie: refused, nothing ends.
    const csrf = csrfFrom(html)
    const otherCookie = await siteSession(t, jar, 'https://photos.example.com/x')
    const otherCsrf = csrfFrom(await (await at('GET', otherCookie)).text())
    for (const body of ['', 'csrf_token=x', `csrf_token=${encodeURIComponent(otherCsrf)}`]) {
      const refused = await at('POST', photos, body)
      expect([body, refused.status, refused.headers.getSetCookie()]).toEqual([body, 403, []])
    }
    expect(await statuses(photos, wiki)).toEqual([200, 200])
    const out = await at('POST', photos, `csrf_token=${encodeURIComponent(csrf)}`)
    expect(out.status).toBe(303)
    expect(out.headers.get('location')).toBe(`${ORIGIN}/login`)
    expect(out.headers.getSetCookie()).toEqual(['__Host-lk_site=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Secure'])
    expect(await statuses(photos, wiki)).toEqual([302, 302])
    expect((await fromBrowser('/account', jar)).status).toBe(303)
    // Without a site cookie there is nothing to sign out here: on to Latchkey's sign-in page.
    const none = await at('GET', '')
    expect([none.status, none.headers.get('location')]).toEqual([303, `${ORIGIN}/login`])
  })

  test('a site session expires with its sign-in session (7 days)', async () => {
    const [photos] = await both()
    t.clock.advance(7 * 24 * 3600 * 1000 + 1)
    expect((await checkWith(t, PHOTOS, photos)).status).toBe(302)
  })
})

describe('paths the rules see', () => {
  test('normalisation bypass attempts never reach a protected path', async () => {
    await addSiteRule(t.store, 'photos.example.com', { paths: ['^/public/'], policy: 'bypass' })
    const open = await checkWith(t, 'https://photos.example.com/public/a.png')
    expect(open.status).toBe(200)
    // Nobody signed in: every Remote-* header present and empty, so a proxy overwrites forged ones.
    expect(['remote-user', 'remote-email', 'remote-name', 'remote-groups', 'remote-id', 'remote-jwt'].map((h) => open.headers.get(h))).toEqual(['', '', '', '', '', ''])
    const attempts: Array<[string, number]> = [
      ['/public/../admin', 302],
      ['/public/%2e%2e/admin', 302],
      ['/public/%2E%2E/admin', 302],
      ['/public/./../admin', 302],
      ['//public/../admin', 302],
      ['/public%2f..%2fadmin', 403],
      ['/public/..%2fadmin', 403],
      ['/public/..%5cadmin', 403],
      ['/public/%252e%252e/admin', 403],
      ['/public/..;/admin', 403],
      ['/public;x/../admin', 403],
      ['/public%3Bx/../admin', 403],
      ['/public/%00/../admin', 403],
    ]
    for (const [path, status] of attempts) {
      const answer = await checkWith(t, 'https://photos.example.com' + path)
      expect([path, answer.status]).toEqual([path, status])
      if (status === 302) expect(answer.headers.get('location')).toStartWith('https://photos.example.com/.latchkey/start?rd=')
    }
  })
})

describe('machines and apps: bearer tokens issued for the site', () => {
  test('every site is a resource whose URI is its origin: a token obtained through the OAuth flow for it passes the check', async () => {
    const { client, secret } = await addClient(t, { name: 'Uploader' })
    const params = { client_id: client.id, redirect_uri: CALLBACK, scope: 'openid email', state: 's', resource: 'https://photos.example.com/' }
    const back = await authorizeAndAllow(t, jar, params)
    const res = await tokenRequest(t, { grant_type: 'authorization_code', code: back.searchParams.get('code')!, client_id: client.id, client_secret: secret, redirect_uri: CALLBACK, resource: 'https://photos.example.com' })
    expect(res.status).toBe(200)
    const token = ((await res.json()) as { access_token: string }).access_token
    const ok = await checkWith(t, PHOTOS, undefined, { authorization: `Bearer ${token}` })
    expect([ok.status, ok.headers.get('remote-user')]).toEqual([200, 'ann@example.com'])
    // A host no site names is no resource.
    const none = await t.handle(authorizePath({ ...params, resource: 'https://elsewhere.example.com' }), { headers: { cookie: cookieHeader(jar) } })
    expect(none.status).toBe(303)
    expect(new URL(none.headers.get('location')!).searchParams.get('error')).toBe('invalid_target')
  })


  test('an access token whose resource is the site origin is allowed like a session; one for anything else is not', async () => {
    const { client } = await addClient(t, { name: 'Robot' })
    const forSite = (await mintTokenPair(t, client.id, annId, 'openid', 'https://photos.example.com')).access_token
    const ok = await checkWith(t, PHOTOS, undefined, { authorization: `Bearer ${forSite}` })
    expect([ok.status, ok.headers.get('remote-user'), ok.headers.get('remote-groups')]).toEqual([200, 'ann@example.com', 'family'])
    const forApi = (await mintTokenPair(t, client.id, annId, 'openid')).access_token
    const forOther = (await mintTokenPair(t, client.id, annId, 'openid', 'https://wiki.example.org')).access_token
    for (const token of [forApi, forOther, 'lk_at_1.' + 'A'.repeat(43)]) {
      const answer = await checkWith(t, PHOTOS, undefined, { authorization: `Bearer ${token}` })
      expect([answer.status, answer.headers.get('remote-user')]).toEqual([401, null])
    }
  })
})
