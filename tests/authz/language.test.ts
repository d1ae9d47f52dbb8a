import { beforeEach, describe, expect, test } from 'bun:test'
import { createSite } from '../../src/authz/sites'
import { ORIGIN, addUser, handleFrom, signIn, type TestApp, createTestApp } from '../helpers'
import { PROXIES, PROXY, checkWith, siteSession, type Jar } from './flow'

/**
 * Issue 36: the pages forward-auth shows on a protected site's own origin (the check's "Access
 * denied", /.latchkey/logout, an error under /.latchkey/) have the footer language menu; the proxy
 * routes only /.latchkey/ there to Latchkey, so the menu posts to /.latchkey/language, which sets
 * that host's cookie (Origin checked as POST /language checks it).
 */
let t: TestApp
let jar: Jar

beforeEach(async () => {
  t = await createTestApp(PROXIES)
  await addUser(t, 'ann@example.com', 'Ann Lee')
  await createSite(t.store, { host: 'closed.example.com', name: 'Closed', policy: 'deny' }, t.clock.now())
  await createSite(t.store, { host: 'photos.example.com', name: 'Photos' }, t.clock.now())
  await createSite(t.store, { host: 'plain.example.net', name: 'Plain', policy: 'deny' }, t.clock.now())
  jar = await signIn(t)
})

const langOf = (html: string) => /^<!doctype html><html lang="([^"]+)"/.exec(html)?.[1]
const menu = (returnTo: string) => `<footer><form method="post" action="/.latchkey/language" class="language"><input type="hidden" name="return_to" value="${returnTo}"/>`

/** The site's /.latchkey/ as the proxy passes it on: X-Forwarded-Host and -Proto name the site. */
function atSite(path: string, host: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}, proto = 'https') {
  const headers = { 'x-forwarded-host': host, 'x-forwarded-proto': proto, accept: 'text/html', ...(init.body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }), ...init.headers }
  return handleFrom(t, PROXY, path, { method: init.method ?? 'GET', body: init.body, headers })
}
const choose = (host: string, fields: string, headers: Record<string, string>, proto = 'https') => atSite('/.latchkey/language', host, { method: 'POST', body: fields, headers }, proto)

describe('the language menu on a protected site’s origin', () => {
  test('the check’s "Access denied" speaks that host’s language cookie, else Accept-Language; its menu posts to /.latchkey/language and comes back to the original URL', async () => {
    const cookied = await checkWith(t, 'https://closed.example.com/docs?x=1&y=2', '__Host-lk_lang=de', { 'accept-language': 'fr' })
    expect(cookied.status).toBe(403)
    const html = await cookied.text()
    expect(langOf(html)).toBe('de')
    expect(html).toContain('<h1>Zugriff verweigert</h1>')
    expect(html).toContain(menu('/docs?x=1&amp;y=2'))
    expect(html).not.toContain('action="/language"')
    // Latchkey's own cookie name is not this https host's; Accept-Language decides.
    expect(langOf(await (await checkWith(t, 'https://closed.example.com/', 'lk_lang=de', { 'accept-language': 'fr' })).text())).toBe('fr')
    // A plain-http site's cookie has no prefix.
    const plain = await (await checkWith(t, 'http://plain.example.net/a', 'lk_lang=sv')).text()
    expect([langOf(plain), plain.includes(menu('/a'))]).toEqual(['sv', true])
  })

  test('POST /.latchkey/language through the proxy sets that host’s cookie for a year and comes back; the next page there speaks it', async () => {
    const chosen = await choose('closed.example.com', 'locale=ja&return_to=%2Fdocs%3Fx%3D1', { origin: 'https://closed.example.com' })
    expect(chosen.status).toBe(303)
    expect(chosen.headers.get('location')).toBe('/docs?x=1')
    expect(chosen.headers.getSetCookie()).toEqual(['__Host-lk_lang=ja; Path=/; HttpOnly; SameSite=Lax; Max-Age=31536000; Secure'])
    const cookie = chosen.headers.getSetCookie()[0]!.split(';')[0]!
    expect(langOf(await (await checkWith(t, 'https://closed.example.com/docs?x=1', cookie, { 'accept-language': 'de' })).text())).toBe('ja')
    // Chromium under no-referrer sends Origin: null; Sec-Fetch-Site (no page can set it) decides. A return_to elsewhere comes back to /.
    const chromium = await choose('closed.example.com', 'locale=ar&return_to=https%3A%2F%2Fevil.example%2F', { origin: 'null', 'sec-fetch-site': 'same-origin' })
    expect([chromium.status, chromium.headers.get('location')]).toEqual([303, '/'])
    const plain = await choose('plain.example.net', 'locale=pl&return_to=%2F', { origin: 'http://plain.example.net' }, 'http')
    expect(plain.headers.getSetCookie()).toEqual(['lk_lang=pl; Path=/; HttpOnly; SameSite=Lax; Max-Age=31536000'])
  })

  test('another origin (Latchkey’s own, another site, none) cannot switch it; an unknown language is 400; nothing is set', async () => {
    for (const headers of [{ origin: ORIGIN }, { origin: 'https://photos.example.com' }, { origin: 'http://closed.example.com' }, {}, { 'sec-fetch-site': 'cross-site' }, { origin: 'null' }, { origin: 'https://evil.example', 'sec-fetch-site': 'same-origin' }] as Record<string, string>[]) {
      const refused = await choose('closed.example.com', 'locale=de&return_to=%2F', headers)
      expect([JSON.stringify(headers), refused.status, refused.headers.getSetCookie()]).toEqual([JSON.stringify(headers), 403, []])
      expect(langOf(await refused.text())).toBe('en')
    }
    const unknown = await choose('closed.example.com', 'locale=klingon&return_to=%2F', { origin: 'https://closed.example.com' })
    expect([unknown.status, unknown.headers.getSetCookie()]).toEqual([400, []])
  })

  test('/.latchkey/logout and an error page under /.latchkey/ speak that host’s language, with the menu posting to /.latchkey/language', async () => {
    const site = await siteSession(t, jar, 'https://photos.example.com/x')
    const logout = await atSite('/.latchkey/logout', 'photos.example.com', { headers: { cookie: `${site}; __Host-lk_lang=sv` } })
    expect(logout.status).toBe(200)
    const html = await logout.text()
    expect(langOf(html)).toBe('sv')
    expect(html).toContain(menu('/.latchkey/logout'))
    const broken = await atSite('/.latchkey/start?rd=nowhere', 'photos.example.com', { headers: { cookie: '__Host-lk_lang=es', 'accept-language': 'de' } })
    expect(broken.status).toBe(400)
    const page = await broken.text()
    expect(langOf(page)).toBe('es')
    expect(page).toContain(menu('/'))
    // Latchkey's own pages keep POST /language.
    expect(await (await t.handle('/no-such-page', { headers: { accept: 'text/html' } })).text()).toContain('<form method="post" action="/language" class="language">')
  })
})
