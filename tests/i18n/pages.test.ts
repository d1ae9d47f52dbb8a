import { describe, expect, test } from 'bun:test'
import { newSetupLink } from '../../src/admin/setup-link'
import { createClient, DEVICE_CODE } from '../../src/oauth/clients'
import { turnOnTotp } from '../accounts/mfa-flows'
import { CALLBACK, addClient, addUser, authorizePath, cookieHeader, cookiesFrom, createTestApp, csrfFrom, form, signIn, signedInApp, type TestApp } from '../helpers'
import { englishLeft } from './english'

/**
 * Issue 36: each page in each language — `<html lang dir>` and no English left. German stands
 * for every locale until the translators deliver (tests/i18n/catalog.test.ts holds the others'
 * messages to the same keys); Arabic shows right to left.
 */
const DE = { 'accept-language': 'de-DE,de;q=0.9,en;q=0.8' }
type Jar = Record<string, string>

const get = (t: TestApp, path: string, jar?: Jar, headers: Record<string, string> = DE) => t.handle(path, { headers: { ...headers, ...(jar ? { cookie: cookieHeader(jar) } : {}) } })
const post = (t: TestApp, path: string, fields: Record<string, string | undefined>, jar?: Jar, headers: Record<string, string> = DE) =>
  t.handle(path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers, ...(jar ? { cookie: cookieHeader(jar) } : {}) }, body: form(fields) })

/** A German page: lang and dir, and not one English message on it. */
async function expectGerman(res: Response, status = 200): Promise<string> {
  expect(res.status).toBe(status)
  const html = await res.text()
  expect(html).toStartWith('<!doctype html><html lang="de" dir="ltr">')
  expect(englishLeft(html)).toEqual([])
  return html
}

describe('pages in German (Accept-Language: de)', () => {
  test('sign-in: the page, a wrong password, with the app it continues to', async () => {
    const t = await createTestApp({ SIGNUP: 'open' })
    const { client } = await addClient(t)
    await addUser(t)
    const first = await get(t, '/login')
    const jar = cookiesFrom(first)
    const page = await expectGerman(first)
    expect(page).toContain('<h1>Anmelden</h1>')
    const wrong = await expectGerman(await post(t, '/login', { email: 'ann@example.com', password: 'wrong password', csrf_token: csrfFrom(page) }, jar), 401)
    expect(wrong).toContain('E-Mail-Adresse oder Passwort ist falsch')
    const returnTo = authorizePath({ client_id: client.id, redirect_uri: CALLBACK, response_type: 'code', scope: 'openid', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' })
    const toApp = await expectGerman(await get(t, `/login?return_to=${encodeURIComponent(returnTo)}`))
    expect(toApp).toContain('um mit <strong>Demo App</strong> fortzufahren')
  })

  test('sign-up: the page and a refused name', async () => {
    const t = await createTestApp({ SIGNUP: 'open' })
    const first = await get(t, '/signup')
    const jar = cookiesFrom(first)
    const page = await expectGerman(first)
    const refused = await expectGerman(await post(t, '/signup', { full_name: ' ', email: 'bo@example.com', password: 'long enough password', csrf_token: csrfFrom(page) }, jar), 400)
    expect(refused).toContain('Der vollständige Name muss 1 bis 200 Zeichen lang sein.')
  })

  test('two-step: the code page, a wrong code, the recovery-code page', async () => {
    const t = await createTestApp()
    await addUser(t)
    await turnOnTotp(t, await signIn(t))
    const login = await get(t, '/login')
    const jar = cookiesFrom(login)
    const pending = await post(t, '/login', { email: 'ann@example.com', password: 'correct horse battery', csrf_token: csrfFrom(await login.text()) }, jar)
    cookiesFrom(pending, jar)
    const page = await expectGerman(await get(t, '/login/two-step', jar))
    await expectGerman(await post(t, '/login/two-step', { code: '000000', csrf_token: csrfFrom(page) }, jar), 401)
    await expectGerman(await get(t, '/login/two-step?recovery=1', jar))
  })

  test('consent, and the page of an app restricted to two-step verification', async () => {
    const { t, client, jar } = await signedInApp()
    const params = { client_id: client.client.id, redirect_uri: CALLBACK, response_type: 'code', scope: 'openid profile email settings:read', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' }
    const consent = await expectGerman(await get(t, authorizePath(params), jar))
    expect(consent).toContain('Die Einstellungen lesen, die diese App für Sie gespeichert hat')
    await t.rows(`UPDATE clients SET require_mfa = ${t.engine === 'sqlite' ? 1 : 'true'}`)
    await expectGerman(await get(t, authorizePath(params), jar))
  })

  test('device: the code form, a wrong code, the consent and the end', async () => {
    const t = await createTestApp()
    await addUser(t)
    const tv = (await createClient(t.store, { name: 'Living-room TV', redirectUris: [], public: true, skipConsent: false, grantTypes: [DEVICE_CODE] }, t.clock.now())).client.id
    await expectGerman(await get(t, '/device'))
    await expectGerman(await get(t, '/device?user_code=BCDF-GHJK'), 400)
    const started = await t.handle('/api/oauth/device_authorization', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form({ client_id: tv, scope: 'openid email' }) })
    const { user_code } = (await started.json()) as { user_code: string }
    const jar = await signIn(t)
    const consent = await expectGerman(await get(t, `/device?user_code=${user_code}`, jar))
    expect(consent).toMatch(/Angefordert am <time datetime="2026-[^"]+">\d+\. [A-Za-zä]+\.? 2026, \d\d:\d\d:\d\d UTC<\/time>/)
    await expectGerman(await post(t, '/device', { user_code, decision: 'allow', csrf_token: csrfFrom(consent) }, jar))
  })

  test('sign-out asked by an app, and signed out', async () => {
    const { t, jar } = await signedInApp()
    const confirm = await expectGerman(await get(t, '/oauth/logout', jar))
    await expectGerman(await post(t, '/oauth/logout', { csrf_token: csrfFrom(confirm) }, jar))
  })

  test('error pages: not found, a refused form, a wrong method title', async () => {
    const t = await createTestApp()
    const browser = { ...DE, accept: 'text/html' }
    const missing = await expectGerman(await get(t, '/no-such-page', undefined, browser), 404)
    expect(missing).toContain('<h1>Seite nicht gefunden</h1>')
    const refused = await expectGerman(await post(t, '/login', { email: 'a@b.c', password: 'x' }, undefined, browser), 403)
    expect(refused).toContain('<h1>Anfrage abgelehnt</h1>')
  })
})

test('/setup: the page, a refused password, a used link', async () => {
  const t = await createTestApp()
  const link = await newSetupLink(t.store, t.config.issuer, t.clock.now())
  const path = link.slice(link.indexOf('/setup'))
  const first = await get(t, path)
  const jar = cookiesFrom(first)
  const page = await expectGerman(first)
  expect(page).toContain('<h1>Latchkey einrichten</h1>')
  const token = new URL(link).searchParams.get('token')!
  const short = await expectGerman(await post(t, '/setup', { csrf_token: csrfFrom(page), token, full_name: 'Olga', email: 'olga@example.com', password: 'short' }, jar), 400)
  expect(short).toContain('Das Passwort muss 8 bis 256 Zeichen lang sein.')
  await expectGerman(await get(t, '/setup?token=wrong', undefined, { ...DE, accept: 'text/html' }), 400)
})

describe('right to left', () => {
  test('an Arabic page has <html lang="ar" dir="rtl">', async () => {
    const t = await createTestApp()
    const html = await (await get(t, '/login', undefined, { 'accept-language': 'ar' })).text()
    expect(html).toStartWith('<!doctype html><html lang="ar" dir="rtl">')
  })
})

/** Issue 36: /admin in the admin's own language (their choice on /account; the browser asks for nothing). */
test('/admin: every section, an app, a confirmation, a notice and the audit log, for an admin who chose German', async () => {
  const t = await createTestApp()
  const ann = await addUser(t, 'ann@example.com', 'Ann Admin')
  const carol = await addUser(t, 'carol@example.com', 'Carol Member')
  await t.store.users.setAdmin(ann.id, true)
  await t.store.users.setLanguage(ann.id, { locale: 'de', timeZone: 'Europe/Berlin' })
  const { client } = await addClient(t, { name: 'Grafana' })
  const jar = await signIn(t)
  const none = {}
  for (const path of ['/admin/users', '/admin/apps', `/admin/apps/edit?client_id=${encodeURIComponent(client.id)}`, '/admin/groups', '/admin/resources', '/admin/sites', '/admin/providers', '/admin/keys']) {
    await expectGerman(await get(t, path, jar, none))
  }
  const users = await expectGerman(await get(t, '/admin/users', jar, none))
  expect(users).toContain('<h1>Benutzer</h1>')
  // A destructive action's confirmation names what happens, in German; nothing has changed yet.
  const confirm = await expectGerman(await post(t, '/admin/users/delete', { csrf_token: csrfFrom(users), user_id: carol.id }, jar, none))
  expect(confirm).toContain('carol@example.com löschen: 0 Apps verlieren den Zugriff, 0 Einstellungen werden gelöscht')
  // An action's notice is said on the next page in German.
  const groups = await (await get(t, '/admin/groups', jar, none)).text()
  const made = await post(t, '/admin/groups', { csrf_token: csrfFrom(groups), name: 'friends' }, jar, none)
  expect(made.status).toBe(303)
  const shown = await expectGerman(await get(t, '/admin/groups', cookiesFrom(made, { ...jar }), none))
  expect(shown).toContain('Die Gruppe friends wurde angelegt.')
  // The audit log: its words German; event kinds (passkey.added) are identifiers, as the CLI and the filter take them, and
  // an event's detail is the recorded JSON (machine values such as "method":"password"): neither is words.
  const audit = await get(t, '/admin/audit', jar, none)
  expect(audit.status).toBe(200)
  const html = await audit.text()
  expect(html).toStartWith('<!doctype html><html lang="de" dir="ltr">')
  expect(html).toContain('<h1>Audit-Protokoll</h1>')
  expect(html).toContain('{&quot;method&quot;:&quot;password&quot;}')
  const words = html
    .replace(/<select id="kind"[\s\S]*?<\/select>/, '')
    .replace(/<td data-label="Art">[^<]*<\/td>/g, '')
    .replace(/<td data-label="Details" class="long">[^<]*<\/td>/g, '')
  expect(words).toContain('<h1>Audit-Protokoll</h1>')
  expect(englishLeft(words)).toEqual([])
})
