/**
 * Never stuck (issue 34): every page that asks for more has a way out — "Cancel" and "Sign in as
 * someone else" at the second factor, "Not you?" at consent — and two-step verification set up
 * because an app required it goes on to that app.
 */
import { beforeEach, describe, expect, test } from 'bun:test'
import { TOTP } from 'otpauth'
import { CALLBACK, PASSWORD, addUser, authorizePath, cookieHeader, cookiesFrom, createTestApp, csrfFrom, postForm, signIn, type TestApp } from '../helpers'
import { createClient } from '../../src/oauth/clients'
import { SoftAuthenticator } from '../soft-authenticator'
import { addPasskey, csrfOf, passwordStep, turnOnTotp, type Jar } from './mfa-flows'

let t: TestApp
let clientId: string

beforeEach(async () => {
  t = await createTestApp({ LOGIN_ATTEMPTS_PER_MINUTE: '1000' })
  await addUser(t)
  clientId = (await createClient(t.store, { name: 'Vault', redirectUris: [CALLBACK], public: false, skipConsent: false, requireMfa: true }, t.clock.now())).client.id
})

const get = (path: string, j: Jar) => t.handle(path, { headers: { cookie: cookieHeader(j) } })
const authorize = () => authorizePath({ client_id: clientId, redirect_uri: CALLBACK, scope: 'openid', state: 'st8', response_type: 'code' })
const sessionRows = async () => (await t.rows('SELECT pending FROM sessions')).length

/** A user with TOTP whose password was right: the browser waits at /login/two-step for `returnTo`. */
async function pendingAt(returnTo?: string): Promise<Jar> {
  await turnOnTotp(t, await signIn(t))
  const { res, jar } = await passwordStep(t, 'ann@example.com', PASSWORD, returnTo)
  expect(res.status).toBe(303)
  return jar
}

describe('/login/two-step has a way out', () => {
  test('Cancel from an authorization request: the pending sign-in ends, back to the app with access_denied and its state', async () => {
    const jar = await pendingAt(authorize())
    const page = await (await get(`/login/two-step?return_to=${encodeURIComponent(authorize())}`, jar)).text()
    expect(page).toContain('<form method="post" action="/login/two-step/cancel" class="inline">')
    expect(page).toContain('>Sign in as someone else</button>')
    const before = await sessionRows()
    const res = await postForm(t, '/login/two-step/cancel', { csrf_token: csrfFrom(page), return_to: authorize() }, jar)
    expect(res.status).toBe(303)
    const back = new URL(res.headers.get('location')!)
    expect(back.origin + back.pathname).toBe(CALLBACK)
    expect([back.searchParams.get('error'), back.searchParams.get('state'), back.searchParams.get('iss')]).toEqual(['access_denied', 'st8', 'http://localhost:3000'])
    expect(res.headers.getSetCookie().some((c) => c.startsWith('lk_session=;'))).toBe(true)
    expect(await sessionRows()).toBe(before - 1)
  })

  test('Cancel without an app goes to /login; without its CSRF token it is refused', async () => {
    const jar = await pendingAt()
    expect((await postForm(t, '/login/two-step/cancel', {}, jar)).status).toBe(403)
    const res = await postForm(t, '/login/two-step/cancel', { csrf_token: await csrfOf(t, '/login/two-step', jar) }, jar)
    expect([res.status, res.headers.get('location')]).toEqual([303, '/login'])
  })

  test('"Sign in as someone else" ends the pending sign-in and goes to /login keeping return_to', async () => {
    const jar = await pendingAt(authorize())
    const before = await sessionRows()
    const res = await postForm(t, '/login/switch', { csrf_token: await csrfOf(t, '/login/two-step', jar), return_to: authorize() }, jar)
    expect([res.status, res.headers.get('location')]).toEqual([303, `/login?return_to=${encodeURIComponent(authorize())}`])
    expect(await sessionRows()).toBe(before - 1)
  })

  test('the step-up for an app that requires two factors shows the code form without JavaScript, and Cancel declines the app but keeps the sign-in', async () => {
    const jar = await signIn(t)
    await turnOnTotp(t, jar)
    const step = await get(authorize(), jar)
    expect(step.headers.get('location')).toBe(`/login/two-step?return_to=${encodeURIComponent(authorize())}`)
    const page = await (await get(step.headers.get('location')!, jar)).text()
    expect(page).toContain('<strong>Vault</strong> requires two-step verification.')
    expect(page).toContain('<input id="code" name="code"')
    const res = await postForm(t, '/login/two-step/cancel', { csrf_token: csrfFrom(page), return_to: authorize() }, jar)
    expect(new URL(res.headers.get('location')!).searchParams.get('error')).toBe('access_denied')
    expect((await get('/account', jar)).status).toBe(200)
  })

  test('a passkey-only second factor says, without JavaScript, what to do instead of showing an empty card', async () => {
    const jar = await signIn(t)
    expect((await addPasskey(t, jar, await SoftAuthenticator.create())).status).toBe(303)
    const page = await (await get(`/login/two-step?return_to=${encodeURIComponent(authorize())}`, await signIn(t))).text()
    expect(page).toContain('<noscript><p class="error">Your passkey needs JavaScript, which is off in this browser. Turn it on, or cancel and sign in another way.</p></noscript>')
    expect(page).toContain('>Cancel</button>')
  })
})

describe('set up because an app required it', () => {
  test('"Set up two-step verification" carries the authorization request through set-up and on to the app, whose step-up takes the next code', async () => {
    const jar = await signIn(t)
    const required = await get(authorize(), jar)
    expect(required.status).toBe(200)
    const html = await required.text()
    expect(html).toContain('<form method="post" action="/account/two-step/setup">')
    const setup = await postForm(t, '/account/two-step/setup', { csrf_token: csrfFrom(html), return_to: authorize() }, jar)
    expect(setup.headers.get('location')).toBe(`/account/two-step?return_to=${encodeURIComponent(authorize())}`)
    const page = await (await get(setup.headers.get('location')!, jar)).text()
    const secret = /<code class="secret">([A-Z2-7 ]+)<\/code>/.exec(page)![1]!.replace(/ /g, '')
    const totp = new TOTP({ secret, algorithm: 'SHA1', digits: 6, period: 30 })
    const confirmed = await postForm(t, '/account/two-step/confirm', { csrf_token: csrfFrom(page), code: totp.generate({ timestamp: t.clock.now() }), return_to: authorize() }, jar)
    expect(confirmed.status).toBe(200)
    expect(await confirmed.text()).toContain(`<a href="${Bun.escapeHTML(authorize())}">Continue to the app</a>`)
    // On to the app: turning TOTP on does not upgrade the session (SPEC), so its step-up asks for the next code.
    const stepUp = await get(authorize(), jar)
    expect(stepUp.headers.get('location')).toBe(`/login/two-step?return_to=${encodeURIComponent(authorize())}`)
    t.clock.advance(30_000)
    const stepPage = await (await get(stepUp.headers.get('location')!, jar)).text()
    const verified = await postForm(t, '/login/two-step', { csrf_token: csrfFrom(stepPage), code: totp.generate({ timestamp: t.clock.now() }), return_to: authorize() }, jar)
    expect([verified.status, verified.headers.get('location')]).toEqual([303, authorize()])
    cookiesFrom(verified, jar)
    const consent = await get(authorize(), jar)
    expect(consent.status).toBe(200)
    expect(await consent.text()).toContain('<span>Vault</span> wants to access your account')
  })
})

describe('consent: "Not you?"', () => {
  test('signs out and returns to /login with return_to the authorization request', async () => {
    const client = await createClient(t.store, { name: 'Notes', redirectUris: [CALLBACK], public: false, skipConsent: false }, t.clock.now())
    const path = authorizePath({ client_id: client.client.id, redirect_uri: CALLBACK, scope: 'openid', state: 's', response_type: 'code' })
    const jar = await signIn(t)
    const page = await (await get(path, jar)).text()
    expect(page).toContain('>Not you?</button>')
    const res = await postForm(t, '/login/switch', { csrf_token: csrfFrom(page), return_to: path }, jar)
    expect([res.status, res.headers.get('location')]).toEqual([303, `/login?return_to=${encodeURIComponent(path)}`])
    cookiesFrom(res, jar)
    expect((await get('/account', jar)).status).toBe(303)
    const login = await (await get(res.headers.get('location')!, jar)).text()
    expect(login).toContain('to continue to <strong>Notes</strong>')
  })
})
