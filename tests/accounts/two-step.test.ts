import { beforeEach, describe, expect, test } from 'bun:test'
import { decodeJwt } from 'jose'
import { CALLBACK, PASSWORD, addClient, addUser, authorizePath, cookieHeader, createTestApp, postForm, signIn, tokenRequest, type TestApp } from '../helpers'
import { openTotpSecret } from '../../src/accounts/totp'
import { SoftAuthenticator } from '../soft-authenticator'
import { addPasskey, csrfOf, passkeySignIn, passwordStep, turnOnTotp, twoStep, type Jar } from './mfa-flows'

let t: TestApp
let userId: string
let jar: Jar

beforeEach(async () => {
  t = await createTestApp({ LOGIN_ATTEMPTS_PER_MINUTE: '1000' })
  userId = (await addUser(t)).id
  jar = await signIn(t)
})

const signedIn = async (j: Jar) => (await t.handle('/account', { headers: { cookie: cookieHeader(j) } })).status === 200
const get = (path: string, j: Jar) => t.handle(path, { headers: { cookie: cookieHeader(j) } })

describe('turning TOTP on', () => {
  test('set-up shows a QR code (SVG) and the secret as text; a right code turns it on and shows ten recovery codes once', async () => {
    const csrf = await csrfOf(t, '/account', jar)
    expect(await (await get('/account', jar)).text()).toContain('Turn on two-step verification')
    expect((await postForm(t, '/account/two-step/setup', { csrf_token: csrf }, jar)).headers.get('location')).toBe('/account/two-step')
    const page = await get('/account/two-step', jar)
    const html = await page.text()
    expect(html).toMatch(/<div class="qr"><svg xmlns="http:\/\/www.w3.org\/2000\/svg" viewBox="[^"]+"><rect fill="white"/)
    expect(html).toMatch(/<code class="secret">([A-Z2-7]{4} ){7}[A-Z2-7]{4}<\/code>/)
    expect(html).toContain('<label for="code">Authentication code</label>')
    // Not on until confirmed.
    expect(await t.store.mfa.findTotp(userId)).toMatchObject({ confirmedAt: null })
    expect((await passwordStep(t, 'ann@example.com', PASSWORD)).res.headers.get('location')).toBe('/account')

    const wrong = await postForm(t, '/account/two-step/confirm', { csrf_token: csrf, code: '000000' }, jar)
    expect(wrong.status).toBe(400)
    expect(await wrong.text()).toContain('That code is not right.')
    const { codes } = await turnOnTotp(t, jar)
    expect(codes).toHaveLength(10)
    expect(new Set(codes).size).toBe(10)
    for (const code of codes) expect(code).toMatch(/^[a-z2-7]{4}(-[a-z2-7]{4}){3}$/)
    const shown = await get('/account', jar)
    expect(await shown.text()).toContain('10 recovery codes left.')
  })

  test('the secret is sealed at rest (AES-GCM, bound to its user) and the recovery codes are hashed', async () => {
    const { totp, codes } = await turnOnTotp(t, jar)
    const { sealed_secret: sealed } = (await t.row('SELECT sealed_secret FROM totp_secrets')) as { sealed_secret: string }
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/)
    expect(sealed).not.toContain(totp.secret.base32)
    expect(await openTotpSecret(t.ctx, userId, sealed)).toBe(totp.secret.base32)
    // Moved to another user's row, it does not open.
    expect(await openTotpSecret(t.ctx, 'someone-else', sealed)).toBeUndefined()
    const hashes = (await t.rows('SELECT code_hash FROM recovery_codes')) as Array<{ code_hash: string }>
    expect(hashes).toHaveLength(10)
    for (const { code_hash } of hashes) for (const code of codes) expect(code_hash).not.toContain(code.replace(/-/g, ''))
  })

  test('turning TOTP on ends the other sessions but does not upgrade this one', async () => {
    const other = await signIn(t)
    await turnOnTotp(t, jar)
    expect(await signedIn(other)).toBe(false)
    expect(await signedIn(jar)).toBe(true)
    const { client } = await addClient(t, { skipConsent: true })
    await t.store.clients.setRequireMfa(client.id, true)
    const res = await get(authorizePath({ client_id: client.id, redirect_uri: CALLBACK, scope: 'openid', state: 's' }), jar)
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toStartWith('/login/two-step?return_to=')
  })
})

describe('signing in with TOTP', () => {
  let totp: Awaited<ReturnType<typeof turnOnTotp>>['totp']
  let codes: string[]
  beforeEach(async () => {
    ;({ totp, codes } = await turnOnTotp(t, jar))
    t.clock.advance(60_000)
  })
  const code = (offsetMs = 0) => totp.generate({ timestamp: t.clock.now() + offsetMs })

  test('after the password, /login/two-step asks for the code; until then nothing is signed in', async () => {
    const { res, jar: browser } = await passwordStep(t, 'ann@example.com', PASSWORD, '/account')
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/login/two-step?return_to=%2Faccount')
    expect(await signedIn(browser)).toBe(false)
    const page = await (await get('/login/two-step?return_to=%2Faccount', browser)).text()
    expect(page).toContain('<label for="code">Authentication code</label>')
    expect(page).toContain('>Verify</button>')
    expect(page).toContain('Use a recovery code')
    const done = await twoStep(t, browser, { code: code(), return_to: '/account' })
    expect(done.status).toBe(303)
    expect(done.headers.get('location')).toBe('/account')
    expect(await signedIn(browser)).toBe(true)
  })

  test('one step of clock drift either way is accepted; two are not', async () => {
    expect((await twoStep(t, (await passwordStep(t, 'ann@example.com', PASSWORD)).jar, { code: code(-30_000) })).status).toBe(303)
    t.clock.advance(90_000)
    expect((await twoStep(t, (await passwordStep(t, 'ann@example.com', PASSWORD)).jar, { code: code(30_000) })).status).toBe(303)
    t.clock.advance(90_000)
    expect((await twoStep(t, (await passwordStep(t, 'ann@example.com', PASSWORD)).jar, { code: code(-60_000) })).status).toBe(401)
    expect((await twoStep(t, (await passwordStep(t, 'ann@example.com', PASSWORD)).jar, { code: code(60_000) })).status).toBe(401)
  })

  test('a code is accepted once, even by two sign-ins at the same moment', async () => {
    const a = (await passwordStep(t, 'ann@example.com', PASSWORD)).jar
    const b = (await passwordStep(t, 'ann@example.com', PASSWORD)).jar
    const [csrfA, csrfB] = [await csrfOf(t, '/login/two-step', a), await csrfOf(t, '/login/two-step', b)]
    const now = code()
    const [ra, rb] = await Promise.all([postForm(t, '/login/two-step', { csrf_token: csrfA, code: now }, a), postForm(t, '/login/two-step', { csrf_token: csrfB, code: now }, b)])
    expect([ra.status, rb.status].sort()).toEqual([303, 401])
    const again = await twoStep(t, (await passwordStep(t, 'ann@example.com', PASSWORD)).jar, { code: now })
    expect(again.status).toBe(401)
    expect(await again.text()).toContain('Invalid authentication code')
  })

  test('a recovery code works once, whatever its case or dashes', async () => {
    const recovery = (await get('/login/two-step?recovery=1', (await passwordStep(t, 'ann@example.com', PASSWORD)).jar)).text()
    expect(await recovery).toContain('<label for="recovery_code">Recovery code</label>')
    const typed = ` ${codes[3]!.replace(/-/g, '').toUpperCase()} `
    expect((await twoStep(t, (await passwordStep(t, 'ann@example.com', PASSWORD)).jar, { recovery_code: typed })).status).toBe(303)
    const reused = await twoStep(t, (await passwordStep(t, 'ann@example.com', PASSWORD)).jar, { recovery_code: codes[3] })
    expect(reused.status).toBe(401)
    expect(await reused.text()).toContain('Invalid recovery code')
    expect(await t.store.mfa.countRecoveryCodes(userId)).toBe(9)
  })

  test('"New recovery codes" replaces every old one', async () => {
    const res = await postForm(t, '/account/two-step/recovery-codes', { csrf_token: await csrfOf(t, '/account', jar) }, jar)
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const fresh = [...(await res.text()).matchAll(/<code>([a-z2-7-]{19})<\/code>/g)].map((m) => m[1]!)
    expect(fresh).toHaveLength(10)
    expect((await twoStep(t, (await passwordStep(t, 'ann@example.com', PASSWORD)).jar, { recovery_code: codes[0] })).status).toBe(401)
    expect((await twoStep(t, (await passwordStep(t, 'ann@example.com', PASSWORD)).jar, { recovery_code: fresh[0] })).status).toBe(303)
  })

  test('wrong codes count toward the per-account back-off like wrong passwords, parallel guesses included', async () => {
    const browser = (await passwordStep(t, 'ann@example.com', PASSWORD)).jar
    const csrf = await csrfOf(t, '/login/two-step', browser)
    const guesses = await Promise.all(Array.from({ length: 8 }, (_, i) => postForm(t, '/login/two-step', { csrf_token: csrf, code: String(100000 + i) }, browser)))
    const statuses = guesses.map((r) => r.status).sort()
    // Five free failures, the password's attempt the first of them (it stays counted until the
    // code is right), then a wait: parallel guesses get no more checks than sequential ones.
    expect(statuses.filter((s) => s === 401)).toHaveLength(4)
    expect(statuses.filter((s) => s === 429)).toHaveLength(4)
    const throttled = guesses.find((r) => r.status === 429)!
    expect(throttled.headers.get('retry-after')).toMatch(/^\d+$/)
    expect(await throttled.text()).toContain('Too many failed attempts for this account.')
    // Even the right code waits its turn; then it works.
    expect((await postForm(t, '/login/two-step', { csrf_token: csrf, code: code() }, browser)).status).toBe(429)
    t.clock.advance(2_000)
    expect((await postForm(t, '/login/two-step', { csrf_token: csrf, code: code() }, browser)).status).toBe(303)
  })

  test('wrong codes count toward LOGIN_ATTEMPTS_PER_MINUTE for the address', async () => {
    const strict = await createTestApp({ LOGIN_ATTEMPTS_PER_MINUTE: '3' })
    await addUser(strict)
    const { totp: strictTotp } = await turnOnTotp(strict, await signIn(strict))
    strict.clock.advance(60_000)
    const browser = (await passwordStep(strict, 'ann@example.com', PASSWORD)).jar
    const csrf = await csrfOf(strict, '/login/two-step', browser)
    // The password was the minute's first check; two wrong codes use the rest.
    expect((await postForm(strict, '/login/two-step', { csrf_token: csrf, code: '111111' }, browser)).status).toBe(401)
    expect((await postForm(strict, '/login/two-step', { csrf_token: csrf, code: '222222' }, browser)).status).toBe(401)
    const limited = await postForm(strict, '/login/two-step', { csrf_token: csrf, code: strictTotp.generate({ timestamp: strict.clock.now() }) }, browser)
    expect(limited.status).toBe(429)
    expect(await limited.text()).toContain('Too many attempts from your network.')
  })

  test('the pending sign-in lasts five minutes and needs its CSRF token', async () => {
    const browser = (await passwordStep(t, 'ann@example.com', PASSWORD)).jar
    expect((await postForm(t, '/login/two-step', { code: code() }, browser)).status).toBe(403)
    t.clock.advance(5 * 60_000 + 1)
    const expired = await get('/login/two-step', browser)
    expect(expired.status).toBe(303)
    expect(expired.headers.get('location')).toBe('/login?return_to=%2Faccount')
  })

  test('amr is ["pwd", "otp", "mfa"] and auth_time the time of the code, in the id_token and introspection', async () => {
    const browser = (await passwordStep(t, 'ann@example.com', PASSWORD)).jar
    t.clock.advance(20_000)
    const codeTime = Math.floor(t.clock.now() / 1000)
    await twoStep(t, browser, { code: code() })
    const { client, secret } = await addClient(t, { skipConsent: true })
    const callback = new URL((await get(authorizePath({ client_id: client.id, redirect_uri: CALLBACK, scope: 'openid', state: 's' }), browser)).headers.get('location')!)
    const tokens = (await (await tokenRequest(t, { grant_type: 'authorization_code', code: callback.searchParams.get('code')!, client_id: client.id, client_secret: secret, redirect_uri: CALLBACK })).json()) as Record<string, string>
    expect(decodeJwt(tokens.id_token!)).toMatchObject({ amr: ['pwd', 'otp', 'mfa'], auth_time: codeTime })
    const basic = { authorization: `Basic ${btoa(`${client.id}:${secret}`)}`, 'content-type': 'application/x-www-form-urlencoded' }
    for (const token of [tokens.access_token!, tokens.refresh_token!]) {
      const res = await t.handle('/api/oauth/introspect', { method: 'POST', headers: basic, body: new URLSearchParams({ token }) })
      expect(await res.json()).toMatchObject({ active: true, amr: ['pwd', 'otp', 'mfa'], auth_time: codeTime })
    }
    const refreshed = (await (await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: client.id, client_secret: secret })).json()) as Record<string, string>
    expect(decodeJwt(refreshed.id_token!)).toMatchObject({ amr: ['pwd', 'otp', 'mfa'], auth_time: codeTime })
  })

  test('"Turn off" needs a current code or the password; a wrong one changes nothing', async () => {
    const other = await signIn(t)
    const off = async (proof: string) => postForm(t, '/account/two-step/disable', { csrf_token: await csrfOf(t, '/account', jar), proof }, jar)
    const wrong = await off('not my password')
    expect(wrong.status).toBe(401)
    expect(await wrong.text()).toContain('That is not a current authentication code or your password.')
    expect((await off('123456')).status).toBe(401)
    expect((await t.store.mfa.findTotp(userId))!.confirmedAt).not.toBeNull()
    expect((await off(code())).status).toBe(303)
    expect(await t.store.mfa.findTotp(userId)).toBeUndefined()
    expect(await t.store.mfa.countRecoveryCodes(userId)).toBe(0)
    expect(await signedIn(other)).toBe(false)
    expect((await passwordStep(t, 'ann@example.com', PASSWORD)).res.headers.get('location')).toBe('/account')
    // Again, with the password this time.
    await turnOnTotp(t, jar)
    expect((await off(PASSWORD)).status).toBe(303)
  })
})

describe('apps that require two factors (--require-mfa)', () => {
  let client: Awaited<ReturnType<typeof addClient>>
  let request: string
  beforeEach(async () => {
    client = await addClient(t, { skipConsent: true })
    await t.store.clients.setRequireMfa(client.client.id, true)
    request = authorizePath({ client_id: client.client.id, redirect_uri: CALLBACK, scope: 'openid', state: 'xyz' })
  })

  test('a user with no second factor sees why, with a button to set it up (returning here), and "Cancel" → access_denied', async () => {
    const page = await get(request, jar)
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toContain('requires two-step verification')
    expect(html).toContain('<form method="post" action="/account/two-step/setup">')
    expect(html).toContain(`<input type="hidden" name="return_to" value="${Bun.escapeHTML(request)}"/><button type="submit">Set up two-step verification</button>`)
    expect(html).toContain('value="deny"')
    const cancel = await postForm(t, '/oauth/authorize', { csrf_token: await csrfOf(t, request, jar), client_id: client.client.id, redirect_uri: CALLBACK, scope: 'openid', state: 'xyz', decision: 'deny' }, jar)
    const back = new URL(cancel.headers.get('location')!)
    expect(back.searchParams.get('error')).toBe('access_denied')
    expect(back.searchParams.get('state')).toBe('xyz')
    // A forged "allow" from a one-factor session gets no code either.
    const forged = await postForm(t, '/oauth/authorize', { csrf_token: await csrfOf(t, request, jar), client_id: client.client.id, redirect_uri: CALLBACK, scope: 'openid', state: 'xyz', decision: 'allow' }, jar)
    expect(new URL(forged.headers.get('location')!).searchParams.get('error')).toBe('access_denied')
  })

  test('prompt=none with one factor → interaction_required', async () => {
    const res = await get(authorizePath({ client_id: client.client.id, redirect_uri: CALLBACK, scope: 'openid', state: 'xyz', prompt: 'none' }), jar)
    const back = new URL(res.headers.get('location')!)
    expect(back.searchParams.get('error')).toBe('interaction_required')
  })

  test('a one-factor session of a TOTP user steps up at /login/two-step and comes back with a code', async () => {
    const { totp } = await turnOnTotp(t, jar)
    t.clock.advance(30_000)
    const res = await get(request, jar)
    expect(res.headers.get('location')).toBe(`/login/two-step?return_to=${encodeURIComponent(request)}`)
    const page = await (await get(res.headers.get('location')!, jar)).text()
    expect(page).toContain(`<strong>${client.client.name}</strong> requires two-step verification.`)
    const done = await twoStep(t, jar, { code: totp.generate({ timestamp: t.clock.now() }), return_to: request })
    expect(done.headers.get('location')).toBe(request)
    const callback = new URL((await get(request, jar)).headers.get('location')!)
    expect(callback.searchParams.get('code')).toBeString()
  })

  test('a user-verified passkey is enough; a passkey-only user without verification is offered the passkey again', async () => {
    const key = await SoftAuthenticator.create()
    await addPasskey(t, jar, key)
    const stepUp = await get(request, jar)
    expect(stepUp.headers.get('location')).toStartWith('/login/two-step?return_to=')
    const page = await (await get(stepUp.headers.get('location')!, jar)).text()
    expect(page).toContain('Use a passkey')
    expect(page).not.toContain('Authentication code')
    const { res } = await passkeySignIn(t, key, { jar, page: stepUp.headers.get('location')!, returnTo: request })
    expect(res.headers.get('location')).toBe(request)
    expect(new URL((await get(request, jar)).headers.get('location')!).searchParams.get('code')).toBeString()
  })
})
