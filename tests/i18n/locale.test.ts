import { describe, expect, test } from 'bun:test'
import { loadConfig } from '../../src/config'
import { fromAcceptLanguage, fromUiLocales, matchLocale } from '../../src/i18n/locales'
import { CALLBACK, ORIGIN, authorizePath, cookieHeader, createTestApp, csrfFrom, form, signedInApp, type TestApp } from '../helpers'
import { englishLeft } from './english'

/** Issue 36 / SPEC "Brand and language": ui_locales, the user's choice, the footer cookie, Accept-Language, DEFAULT_LOCALE. */
const langOf = async (res: Response) => /^<!doctype html><html lang="([^"]+)" dir="(ltr|rtl)">/.exec(await res.text())?.slice(1, 3).join(' ')
const page = (t: TestApp, path: string, headers: Record<string, string> = {}) => t.handle(path, { headers })
const PKCE = { code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', response_type: 'code', redirect_uri: CALLBACK }

describe('matching a language tag', () => {
  test('exact, any case; a bare language names our variant; Traditional Chinese is not Simplified', () => {
    expect(['de', 'DE', 'de-AT', 'pt', 'pt-PT', 'pt-br', 'zh', 'zh-Hans-CN', 'zh-cn', 'ar-EG', 'sv-FI', 'ja-JP'].map(matchLocale)).toEqual(['de', 'de', 'de', 'pt-BR', 'pt-BR', 'pt-BR', 'zh-CN', 'zh-CN', 'zh-CN', 'ar', 'sv', 'ja'])
    expect(['zh-TW', 'zh-Hant', 'zh-HK', 'tlh', '', '*', 'x'.repeat(40)].map(matchLocale)).toEqual([undefined, undefined, undefined, undefined, undefined, undefined, undefined])
  })

  test('Accept-Language by q-value, ties in order, q=0 refused, unknown skipped', () => {
    expect(fromAcceptLanguage('fr;q=0.5, de;q=0.9')).toBe('de')
    expect(fromAcceptLanguage('tlh, nl;q=0.3, sv;q=0.3')).toBe('nl')
    expect(fromAcceptLanguage('de;q=0, fr;q=0.1')).toBe('fr')
    expect(fromAcceptLanguage('pt')).toBe('pt-BR')
    expect(fromAcceptLanguage('zh-TW, zh;q=0.5')).toBe('zh-CN')
    expect(fromAcceptLanguage('*')).toBeUndefined()
    expect(fromAcceptLanguage('de;q=abc')).toBe('de')
  })

  test('ui_locales: the first we speak of a space-separated list', () => {
    expect(fromUiLocales('tlh fr-CA de')).toBe('fr')
    expect(fromUiLocales('tlh')).toBeUndefined()
  })
})

describe('the language of a page', () => {
  test('Accept-Language, else DEFAULT_LOCALE (en by default)', async () => {
    const t = await createTestApp()
    expect(await langOf(await page(t, '/login'))).toBe('en ltr')
    expect(await langOf(await page(t, '/login', { 'accept-language': 'sv-SE,sv;q=0.9' }))).toBe('sv ltr')
    const nl = await createTestApp({ DEFAULT_LOCALE: 'nl' })
    expect(await langOf(await page(nl, '/login'))).toBe('nl ltr')
    expect(await langOf(await page(nl, '/login', { 'accept-language': 'tlh' }))).toBe('nl ltr')
  })

  test('an unknown DEFAULT_LOCALE stops start-up naming the variable', () => {
    expect(() => loadConfig({ DEFAULT_LOCALE: 'klingon' })).toThrow('DEFAULT_LOCALE: must be one of en, de, fr, es, it, nl, pt-BR, pl, sv, ja, zh-CN, ar, got "klingon"')
    expect(loadConfig({ DEFAULT_LOCALE: 'ar' }).defaultLocale).toBe('ar')
  })

  test('the footer cookie beats Accept-Language; an unknown cookie value passes to the next rule', async () => {
    const t = await createTestApp()
    expect(await langOf(await page(t, '/login', { cookie: 'lk_lang=fr', 'accept-language': 'de' }))).toBe('fr ltr')
    expect(await langOf(await page(t, '/login', { cookie: 'lk_lang=klingon', 'accept-language': 'de' }))).toBe('de ltr')
    expect(await langOf(await page(t, '/login', { cookie: 'lk_lang=ar' }))).toBe('ar rtl')
  })

  test("the user's choice beats the cookie; ui_locales of the authorization request beats both, through sign-in and consent", async () => {
    const { t, client, jar } = await signedInApp()
    const user = (await t.store.users.findUserByEmail('ann@example.com'))!
    await t.store.users.setLanguage(user.id, { locale: 'it', timeZone: null })
    const cookie = `${cookieHeader(jar)}; lk_lang=fr`
    expect(await langOf(await page(t, '/account', { cookie, 'accept-language': 'de' }))).toBe('it ltr')
    const authz = authorizePath({ client_id: client.client.id, scope: 'openid', ...PKCE, ui_locales: 'tlh pl' })
    expect(await langOf(await page(t, authz, { cookie }))).toBe('pl ltr')
    // Not signed in: the sign-in page that continues to that request speaks it too.
    expect(await langOf(await page(t, `/login?return_to=${encodeURIComponent(authz)}`, { cookie: 'lk_lang=fr' }))).toBe('pl ltr')
    // An unknown ui_locales decides nothing.
    const unknown = authorizePath({ client_id: client.client.id, scope: 'openid', ...PKCE, ui_locales: 'tlh' })
    expect(await langOf(await page(t, unknown, { cookie }))).toBe('it ltr')
  })

  test('RP-initiated logout: the app\'s ui_locales decides the confirmation and the signed-out page, kept through the POST', async () => {
    const { t, jar } = await signedInApp()
    const confirm = await page(t, '/oauth/logout?ui_locales=nl', { cookie: cookieHeader(jar), 'accept-language': 'de' })
    const html = await confirm.text()
    expect(/^<!doctype html><html lang="([^"]+)"/.exec(html)?.[1]).toBe('nl')
    expect(html).toContain('<input type="hidden" name="ui_locales" value="nl"/>')
    const done = await t.handle('/oauth/logout', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader(jar), 'accept-language': 'de' }, body: form({ csrf_token: csrfFrom(html), ui_locales: 'nl' }) })
    expect(await langOf(done)).toBe('nl ltr')
  })

  test("error pages follow a signed-in user's choice: a 404, a refused form, a failed flow; an unknown or expired session falls to the next rule", async () => {
    const { t, client, jar } = await signedInApp()
    const user = (await t.store.users.findUserByEmail('ann@example.com'))!
    await t.store.users.setLanguage(user.id, { locale: 'de', timeZone: null })
    const browser = { cookie: cookieHeader(jar), 'accept-language': 'en', accept: 'text/html' }
    const missing = await page(t, '/no-such-page', browser)
    expect(missing.status).toBe(404)
    const html = await missing.text()
    expect(html).toStartWith('<!doctype html><html lang="de" dir="ltr">')
    expect(html).toContain('<h1>Seite nicht gefunden</h1>')
    // A PageError (an unknown app at /oauth/authorize) and an API refusal met by a browser (405).
    expect(await langOf(await page(t, authorizePath({ client_id: 'nope', scope: 'openid' }), browser))).toBe('de ltr')
    const wrongMethod = await t.handle('/account', { method: 'DELETE', headers: browser })
    expect([wrongMethod.status, await langOf(wrongMethod)]).toEqual([405, 'de ltr'])
    // ui_locales of the flow still ranks first.
    expect(await langOf(await page(t, authorizePath({ client_id: client.client.id, redirect_uri: 'https://evil.example/cb', scope: 'openid', ui_locales: 'ja' }), browser))).toBe('ja ltr')
    // An unknown session cookie, then the same one signed out: Accept-Language decides.
    expect(await langOf(await page(t, '/no-such-page', { ...browser, cookie: cookieHeader({ ...jar, lk_session: 'x'.repeat(43) }), 'accept-language': 'fr' }))).toBe('fr ltr')
    await t.rows(`DELETE FROM sessions`)
    expect(await langOf(await page(t, '/no-such-page', { ...browser, 'accept-language': 'fr' }))).toBe('fr ltr')
  })

  test('an English page has English on it (the German pages\' check can fail)', async () => {
    const t = await createTestApp()
    expect(englishLeft(await (await page(t, '/login')).text())).toContain('signIn.title: (?<![\\p{L}-])Sign in(?![\\p{L}-])')
  })
})

describe('the footer language menu (a form, no JavaScript)', () => {
  const choose = (t: TestApp, fields: Record<string, string>, headers: Record<string, string> = { origin: ORIGIN }) =>
    t.handle('/language', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: form(fields) })

  test('every page has it, with this page to come back to and the current language selected', async () => {
    const t = await createTestApp()
    const html = await (await page(t, '/login?return_to=%2Faccount', { 'accept-language': 'de' })).text()
    expect(html).toContain('<footer><form method="post" action="/language" class="language"><input type="hidden" name="return_to" value="/login?return_to=%2Faccount"/>')
    expect(html).toContain('<option value="de" lang="de" selected>Deutsch</option>')
    expect(html).toContain('<option value="ar" lang="ar">العربية</option>')
  })

  test('choosing sets the cookie for a year and comes back to the page, which then speaks it', async () => {
    const t = await createTestApp()
    const res = await choose(t, { locale: 'ja', return_to: '/login?return_to=%2Faccount' })
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/login?return_to=%2Faccount')
    expect(res.headers.get('set-cookie')).toBe('lk_lang=ja; Path=/; HttpOnly; SameSite=Lax; Max-Age=31536000')
    expect(await langOf(await page(t, '/login', { cookie: 'lk_lang=ja' }))).toBe('ja ltr')
    // Sec-Fetch-Site when a browser sends no Origin, or `null` (Chromium under no-referrer); a return_to elsewhere comes back to /.
    const other = await choose(t, { locale: 'sv', return_to: 'https://evil.example/' }, { 'sec-fetch-site': 'same-origin' })
    expect([other.status, other.headers.get('location')]).toEqual([303, '/'])
    const chromium = await choose(t, { locale: 'sv', return_to: '/login' }, { origin: 'null', 'sec-fetch-site': 'same-origin' })
    expect(chromium.status).toBe(303)
  })

  test('another site cannot switch it (CSRF), nor can a form without Origin; an unknown language is 400; nothing is set', async () => {
    const t = await createTestApp()
    for (const headers of [{ origin: 'https://evil.example' }, {}, { 'sec-fetch-site': 'cross-site' }, { origin: 'null' }, { origin: 'null', 'sec-fetch-site': 'cross-site' }, { origin: 'https://evil.example', 'sec-fetch-site': 'same-origin' }] as Record<string, string>[]) {
      const res = await choose(t, { locale: 'de', return_to: '/login' }, { ...headers, accept: 'text/html' })
      expect(res.status).toBe(403)
      expect(res.headers.get('set-cookie')).toBeNull()
    }
    const bad = await choose(t, { locale: 'klingon', return_to: '/login' }, { origin: ORIGIN, accept: 'text/html' })
    expect(bad.status).toBe(400)
    expect(bad.headers.get('set-cookie')).toBeNull()
  })
})

test('discovery lists ui_locales_supported', async () => {
  const t = await createTestApp()
  const doc = (await (await t.handle('/.well-known/openid-configuration')).json()) as { ui_locales_supported: string[] }
  expect(doc.ui_locales_supported).toEqual(['en', 'de', 'fr', 'es', 'it', 'nl', 'pt-BR', 'pl', 'sv', 'ja', 'zh-CN', 'ar'])
})

