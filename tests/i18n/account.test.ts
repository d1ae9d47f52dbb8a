import { describe, expect, test } from 'bun:test'
import { addClient, addUser, authorizeAndAllow, CALLBACK, cookieHeader, createTestApp, csrfFrom, postForm, signIn, type TestApp } from '../helpers'
import { forgot, markVerified, outbox, outboxOf, SMTP } from '../accounts/mail-flows'
import { signInFrom } from '../sessions/flows'
import { englishLeft } from './english'

/** Issue 36: /account and its pages in the user's language, the "Language and time zone" choice, mails in the recipient's language and zone. */
type Jar = Record<string, string>
const page = (t: TestApp, path: string, jar: Jar) => t.handle(path, { headers: { cookie: cookieHeader(jar) } })

async function germanUser(t: TestApp, timeZone: string | null = null) {
  const user = await addUser(t)
  await t.store.users.setLanguage(user.id, { locale: 'de', timeZone })
  return user
}

async function expectGerman(res: Response, status = 200): Promise<string> {
  expect(res.status).toBe(status)
  const html = await res.text()
  expect(html).toStartWith('<!doctype html><html lang="de" dir="ltr">')
  expect(englishLeft(html)).toEqual([])
  return html
}

describe('/account in German (the user chose it)', () => {
  test('the page with an app, activity, sessions; a refusal; the delete pages', async () => {
    const t = await createTestApp({ SMTP_URL: SMTP.SMTP_URL })
    await germanUser(t, 'Europe/Berlin')
    await markVerified(t, 'ann@example.com')
    const { client } = await addClient(t)
    const jar = await signIn(t)
    await authorizeAndAllow(t, jar, { client_id: client.id, redirect_uri: CALLBACK, response_type: 'code', scope: 'openid profile settings:read', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' })
    const account = await expectGerman(await page(t, '/account', jar))
    expect(account).toContain('<h2>Sprache und Zeitzone</h2>')
    expect(account).toContain('<option value="de" lang="de" selected>Deutsch</option>')
    expect(account).toContain('<option value="Europe/Berlin" selected>Europe/Berlin</option>')
    // Times in the user's zone, naming it (2026-01-01 00:00 UTC is 01:00 in Berlin).
    expect(account).toMatch(/<time datetime="2026-01-01T00:00:00.000Z">1\. Jan\. 2026, 01:00 MEZ<\/time>/)
    const refused = await expectGerman(await postForm(t, '/account/passkeys/rename', { csrf_token: csrfFrom(account), credential_id: 'x', name: 'Laptop' }, jar), 404)
    expect(refused).toContain('Diesen Passkey gibt es nicht.')
    await expectGerman(await page(t, '/account/delete', jar))
    await expectGerman(await page(t, `/account/data/delete?client_id=${client.id}`, jar))
    const setup = await postForm(t, '/account/two-step/setup', { csrf_token: csrfFrom(account) }, jar)
    expect(setup.status).toBe(303)
    await expectGerman(await page(t, '/account/two-step', jar))
  })

  test('choosing a language and zone on /account: saved, the cookie follows; a value not offered is 400 and changes nothing', async () => {
    const t = await createTestApp()
    const user = await addUser(t)
    const jar = await signIn(t)
    const csrf = csrfFrom(await (await page(t, '/account', jar)).text())
    const saved = await postForm(t, '/account/language', { csrf_token: csrf, locale: 'ja', time_zone: 'Asia/Tokyo' }, jar)
    expect([saved.status, saved.headers.get('location'), saved.headers.get('set-cookie')]).toEqual([303, '/account', 'lk_lang=ja; Path=/; HttpOnly; SameSite=Lax; Max-Age=31536000'])
    expect(await t.store.users.findUser(user.id)).toMatchObject({ locale: 'ja', timeZone: 'Asia/Tokyo' })
    const japanese = await (await page(t, '/account', jar)).text()
    expect(japanese).toStartWith('<!doctype html><html lang="ja" dir="ltr">')
    for (const bad of [{ locale: 'klingon', time_zone: 'UTC' }, { locale: 'de', time_zone: 'Mars/Olympus' }]) {
      const res = await postForm(t, '/account/language', { csrf_token: csrf, ...bad }, jar)
      expect(res.status).toBe(400)
      expect(await t.store.users.findUser(user.id)).toMatchObject({ locale: 'ja', timeZone: 'Asia/Tokyo' })
    }
    const forged = await postForm(t, '/account/language', { csrf_token: 'forged', locale: 'de', time_zone: 'UTC' }, jar)
    expect(forged.status).toBe(403)
    // "Automatic" clears the choice: the browser decides again.
    await postForm(t, '/account/language', { csrf_token: csrf, locale: '', time_zone: 'UTC' }, jar)
    expect(await t.store.users.findUser(user.id)).toMatchObject({ locale: null, timeZone: null })
  })

  test('the footer menu, signed in, changes the user\'s choice (which ranks above the cookie)', async () => {
    const t = await createTestApp()
    const user = await germanUser(t)
    const jar = await signIn(t)
    const res = await t.handle('/language', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost:3000', cookie: cookieHeader(jar) }, body: 'locale=sv&return_to=%2Faccount' })
    expect(res.status).toBe(303)
    expect((await t.store.users.findUser(user.id))!.locale).toBe('sv')
    expect(await (await page(t, '/account', jar)).text()).toStartWith('<!doctype html><html lang="sv" dir="ltr">')
  })
})

describe('mails in the recipient\'s language and time zone', () => {
  test('a reset link to a German user is German; to an English one English; DEFAULT_LOCALE for one who chose nothing', async () => {
    const t = await createTestApp({ ...SMTP, DEFAULT_LOCALE: 'de' })
    const ann = await addUser(t)
    await t.store.users.setLanguage(ann.id, { locale: 'en', timeZone: null })
    await addUser(t, 'bo@example.com', 'Bo')
    await forgot(t, 'ann@example.com')
    await forgot(t, 'bo@example.com')
    // Each request writes its mail after answering: the two writes may commit in either order.
    const sent = await outboxOf(t, 2)
    expect(sent.map((m) => m.to).sort()).toEqual(['ann@example.com', 'bo@example.com'])
    const toAnn = sent.find((m) => m.to === 'ann@example.com')
    const toBo = sent.find((m) => m.to === 'bo@example.com')
    expect([toAnn!.to, toAnn!.subject]).toEqual(['ann@example.com', 'Reset your password'])
    expect([toBo!.to, toBo!.subject]).toEqual(['bo@example.com', 'Setzen Sie Ihr Passwort zurück'])
    expect(toBo!.text).toContain('Neues Passwort wählen: http://localhost:3000/reset-password?token=')
    expect(toBo!.html).toStartWith('<!doctype html><html lang="de" dir="ltr">')
    expect(englishLeft(toBo!.html)).toEqual([])
  })

  test('"New sign-in" names the time in the recipient\'s zone and language', async () => {
    const t = await createTestApp({ SMTP_URL: SMTP.SMTP_URL, LOGIN_ATTEMPTS_PER_MINUTE: '1000' })
    await germanUser(t, 'America/New_York')
    t.clock.advance(9 * 3600_000 + 30 * 60_000)
    await signInFrom(t, { address: '198.51.100.4' })
    const [notice] = await outbox(t)
    expect(notice!.subject).toBe('Neue Anmeldung bei Ihrem Konto')
    expect(notice!.text).toContain('Wann: 1. Jan. 2026, 04:30:00 GMT-5')
    expect(notice!.text).toContain('Gerät: Chrome unter Linux')
    expect(englishLeft(notice!.html)).toEqual([])
  })
})
