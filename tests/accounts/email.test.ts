import { beforeEach, describe, expect, test } from 'bun:test'
import { CALLBACK, PASSWORD, addClient, addUser, authorizePath, bearer, mintToken, cookieHeader, cookiesFrom, createTestApp, csrfFrom, postForm, signIn, type TestApp } from '../helpers'
import { confirmVerify } from './mail-flows'
import { csrfOf, passwordStep, type Jar } from './mfa-flows'

const SMTP = { SMTP_URL: 'smtp://127.0.0.1:2525', LOGIN_ATTEMPTS_PER_MINUTE: '1000', SIGNUP: 'open', NEW_DEVICE_EMAIL: 'off' }

let t: TestApp
beforeEach(async () => {
  t = await createTestApp(SMTP)
})

/** The outbox as the sender would see it: recipient, subject and the link of each message. */
async function outbox(): Promise<Array<{ to: string; subject: string; link?: string; text: string; html: string }>> {
  const rows = (await t.rows('SELECT recipient, subject, text_body, html_body FROM mail_outbox ORDER BY id')) as Array<Record<string, string>>
  return rows.map((r) => ({ to: r.recipient!, subject: r.subject!, text: r.text_body!, html: r.html_body!, link: /https?:\/\/\S+/.exec(r.text_body!)?.[0] }))
}
/**
 * The outbox once it holds `count` messages: /forgot-password writes its link after answering (so
 * the answer's time says nothing), so a test waits for that write as the sender would.
 */
async function outboxOf(count: number) {
  const deadline = Date.now() + 5_000
  for (;;) {
    const messages = await outbox()
    if (messages.length >= count || Date.now() > deadline) return messages
    await Bun.sleep(5)
  }
}
/** The account whose reset link marks "everything asked before has been written". */
const MARKER = 'marker@example.com'
/**
 * The outbox once every reset link asked for so far is written, or is surely never: a marker's
 * link is asked for last and waited for, so a test that says "no message" or "only these" says it
 * after the write that would have broken it. Links are written in the order they are asked for:
 * SQLite has one writer, a queue; on PostgreSQL the marker's request makes several round trips
 * before its write begins. The marker's own message is left out.
 */
async function settledOutbox() {
  const before = (await outbox()).filter((m) => m.to === MARKER).length
  expect((await forgot(MARKER)).status).toBe(200)
  const deadline = Date.now() + 5_000
  for (;;) {
    const messages = await outbox()
    if (messages.filter((m) => m.to === MARKER).length > before) return messages.filter((m) => m.to !== MARKER)
    if (Date.now() > deadline) throw new Error(`no reset link for ${MARKER} within 5 s`)
    await Bun.sleep(5)
  }
}
const pathOf = (link: string) => link.slice(link.indexOf('/', 8))
const get = (path: string, jar: Jar = {}) => t.handle(path, { headers: { cookie: cookieHeader(jar) } })

async function signUp(email: string, name = 'Eve New', returnTo?: string) {
  const jar: Jar = {}
  const csrf = await csrfOf(t, '/signup', jar)
  const res = await postForm(t, '/signup', { full_name: name, email, password: PASSWORD, csrf_token: csrf, return_to: returnTo }, jar)
  cookiesFrom(res, jar)
  return { res, jar }
}

async function forgot(email: string, jar: Jar = {}) {
  const csrf = await csrfOf(t, '/forgot-password', jar)
  return postForm(t, '/forgot-password', { csrf_token: csrf, email }, jar)
}

async function reset(link: string, password: string) {
  const jar: Jar = {}
  const page = await get(pathOf(link), jar)
  if (page.status !== 200) return page
  cookiesFrom(page, jar)
  const csrf = csrfFrom(await page.text())
  return postForm(t, '/reset-password', { csrf_token: csrf, token: new URL(link).searchParams.get('token')!, password }, jar)
}

describe('verification', () => {
  test('sign-up queues "Verify your email" with a link from ISSUER; the link verifies once', async () => {
    const eve = await signUp('eve@example.com')
    expect(eve.res.status).toBe(303)
    const [message] = await outbox()
    expect(message).toMatchObject({ to: 'eve@example.com', subject: 'Verify your email' })
    expect(message!.link).toMatch(/^http:\/\/localhost:3000\/verify-email\?token=[A-Za-z0-9_-]{43}$/)
    expect(message!.html).toContain(`<a href="${message!.link}">Verify your email</a>`)
    const token = new URL(message!.link!).searchParams.get('token')!
    expect(await t.rows('SELECT token_hash FROM email_tokens WHERE token_hash = ?', token)).toEqual([]) // only its hash is stored
    expect((await t.store.users.findUserByEmail('eve@example.com'))!.emailVerified).toBe(false)
    const used = await confirmVerify(t, message!.link!, eve.jar)
    expect(used.status).toBe(200)
    expect(await used.text()).toContain('eve@example.com is verified.')
    expect((await t.store.users.findUserByEmail('eve@example.com'))!.emailVerified).toBe(true)
    const again = await get(pathOf(message!.link!), eve.jar)
    expect(again.status).toBe(410)
    expect(await again.text()).toContain('This verification link was already used, has expired, or is not one of ours.')
  })

  test('opening the link changes nothing: only "Confirm", posted by a session of the account, verifies', async () => {
    const eve = await signUp('eve@example.com')
    const [message] = await outbox()
    const path = pathOf(message!.link!)
    const token = new URL(message!.link!).searchParams.get('token')!
    const verified = async () => (await t.store.users.findUserByEmail('eve@example.com'))!.emailVerified
    // Signed out (a mail scanner, another browser): on to sign in, which says what to do.
    const signedOut = await get(path)
    expect(signedOut.status).toBe(303)
    expect(signedOut.headers.get('location')).toBe(`/login?return_to=${encodeURIComponent(path)}`)
    const login = await (await get(signedOut.headers.get('location')!)).text()
    expect(login).toContain('<p role="status">Sign in to the account to confirm this address. If you did not create this account, use Forgot password to take it over.</p>')
    expect(await (await get('/login')).text()).not.toContain('Sign in to the account to confirm this address.')
    // Signed in to the account: a page that asks, with a form.
    const page = await get(path, eve.jar)
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toContain('<h1>Confirm your email address</h1>')
    expect(html).toContain('<form method="post" action="/verify-email">')
    expect(html).toContain(`<input type="hidden" name="token" value="${token}"/>`)
    expect(html).toContain('>Confirm</button>')
    expect(await verified()).toBe(false)
    // Signed in to another account: refused, on GET and POST.
    await addUser(t)
    const ann = await signIn(t)
    const other = await get(path, ann)
    expect(other.status).toBe(403)
    expect(await other.text()).toContain('This link is for the account it was sent for.')
    expect((await postForm(t, '/verify-email', { csrf_token: await csrfOf(t, '/account', ann), token }, ann)).status).toBe(403)
    // No session, or no CSRF token: refused.
    expect((await postForm(t, '/verify-email', { csrf_token: csrfFrom(html), token })).status).toBe(403)
    expect((await postForm(t, '/verify-email', { token }, eve.jar)).status).toBe(403)
    expect(await verified()).toBe(false)
    // The account's own POST verifies.
    const done = await postForm(t, '/verify-email', { csrf_token: csrfFrom(html), token }, eve.jar)
    expect(done.status).toBe(200)
    expect(await verified()).toBe(true)
  })

  test('a verify link expires after 24 hours; an unknown or malformed one is 410', async () => {
    await signUp('eve@example.com')
    const [message] = await outbox()
    t.clock.advance(24 * 3600_000 + 1)
    expect((await get(pathOf(message!.link!))).status).toBe(410)
    expect((await get('/verify-email?token=' + 'x'.repeat(43))).status).toBe(410)
    expect((await get('/verify-email?token=%00')).status).toBe(410)
    expect((await t.store.users.findUserByEmail('eve@example.com'))!.emailVerified).toBe(false)
  })

  test('without SMTP_URL nothing is queued and the pages offer nothing that needs mail', async () => {
    t = await createTestApp({ SIGNUP: 'open' })
    await signUp('eve@example.com')
    expect(await outbox()).toEqual([])
    expect(await (await get('/login')).text()).not.toContain('Forgot password?')
    expect((await get('/forgot-password')).status).toBe(404)
    expect((await postForm(t, '/forgot-password', { email: 'eve@example.com' })).status).toBe(404)
  })

  test('a name with CR/LF is refused at sign-up: no account, no message', async () => {
    const { res } = await signUp('mallory@example.com', 'Mallory\r\nBcc: victim@example.com')
    expect(res.status).toBe(400)
    expect(await outbox()).toEqual([])
  })
})

describe('forgot and reset password', () => {
  beforeEach(async () => {
    await addUser(t)
    await addUser(t, MARKER, 'Marker')
  })

  test('/login links to /forgot-password; the answer is the same page whether or not the address has an account', async () => {
    expect(await (await get('/login')).text()).toContain('<a href="/forgot-password">Forgot password?</a>')
    const page = await (await get('/forgot-password')).text()
    expect(page).toContain('<label for="email">Email</label>')
    expect(page).toContain('>Send reset link</button>')
    const known = await forgot('ann@example.com')
    const unknown = await forgot('nobody@example.com')
    expect([known.status, unknown.status]).toEqual([200, 200])
    const strip = (html: string) => html.replace(/value="[^"]+"/g, '')
    expect(strip(await known.text())).toBe(strip(await unknown.text()))
    expect((await settledOutbox()).map((m) => [m.to, m.subject])).toEqual([['ann@example.com', 'Reset your password']])
  })

  test('the link sets a new password: the old one and every session stop working, apps keep their tokens, a notice is sent', async () => {
    // A verified account (an unverified one is recovered instead: recovery.test.ts).
    await t.rows('UPDATE users SET email_verified = ? WHERE email = ?', true, 'ann@example.com')
    const session = await signIn(t)
    const { client } = await addClient(t)
    const ann = (await t.store.users.findUserByEmail('ann@example.com'))!
    const appToken = await mintToken(t, client.id, ann.id, 'email')
    await forgot('ann@example.com')
    const [message] = await outboxOf(1)
    const form = await get(pathOf(message!.link!))
    expect(await form.text()).toContain('<label for="password">New password</label>')
    const done = await reset(message!.link!, 'a brand new password')
    expect(done.status).toBe(200)
    expect(await done.text()).toContain('Your password is set.')
    expect((await passwordStep(t, 'ann@example.com', PASSWORD)).res.status).toBe(401)
    expect((await passwordStep(t, 'ann@example.com', 'a brand new password')).res.status).toBe(303)
    expect((await get('/account', session)).status).toBe(303)
    expect((await t.handle('/api/oauth/userinfo', { headers: bearer(appToken) })).status).toBe(200)
    expect((await outbox()).map((m) => m.subject)).toEqual(['Reset your password', 'Your password was changed'])
    expect((await reset(message!.link!, 'yet another password')).status).toBe(410)
  })

  test('a reset link lasts 30 minutes; a verify link cannot reset a password, nor a reset link verify', async () => {
    await forgot('ann@example.com')
    const [resetMail] = await outboxOf(1)
    const eve = await signUp('eve@example.com')
    expect(eve.res.status).toBe(303)
    const verifyMail = (await outbox())[1]!
    const verifyToken = new URL(verifyMail.link!).searchParams.get('token')!
    expect((await get(`/reset-password?token=${verifyToken}`)).status).toBe(410)
    expect((await get(`/verify-email?token=${new URL(resetMail!.link!).searchParams.get('token')}`)).status).toBe(410)
    t.clock.advance(30 * 60_000 + 1)
    expect((await get(pathOf(resetMail!.link!))).status).toBe(410)
  })

  test('at most 3 messages per address per hour, and the client address is throttled too', async () => {
    for (let i = 0; i < 5; i++) expect((await forgot('ann@example.com')).status).toBe(200)
    expect((await settledOutbox()).map((m) => m.to)).toEqual(Array(3).fill('ann@example.com'))
    t.clock.advance(3600_000)
    await forgot('ann@example.com')
    expect((await settledOutbox()).map((m) => m.to)).toEqual(Array(4).fill('ann@example.com'))

    t = await createTestApp({ ...SMTP, LOGIN_ATTEMPTS_PER_MINUTE: '2' })
    await addUser(t)
    await addUser(t, MARKER, 'Marker')
    expect((await forgot('a@example.com')).status).toBe(200)
    expect((await forgot('b@example.com')).status).toBe(200)
    const limited = await forgot('ann@example.com')
    expect(limited.status).toBe(429)
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/)
    t.clock.advance(60_000) // the network's minute is over: the marker is let through
    expect(await settledOutbox()).toEqual([])
  })

  test('a short password is refused and the link still works', async () => {
    await forgot('ann@example.com')
    const [message] = await outboxOf(1)
    const short = await reset(message!.link!, 'short')
    expect(short.status).toBe(400)
    expect(await short.text()).toContain('The password must be 8 to 256 characters.')
    expect((await reset(message!.link!, 'long enough now')).status).toBe(200)
  })
})

describe('changing the email on /account (the rest: email-change.test.ts)', () => {
  let jar: Jar
  beforeEach(async () => {
    await addUser(t)
    jar = await signIn(t)
  })
  const change = async (email: string) => postForm(t, '/account/email', { csrf_token: await csrfOf(t, '/account', jar), email }, jar)

  test("another account's address gets the same answer as a free one, and nothing is sent to either", async () => {
    await addUser(t, 'bob@example.com', 'Bob')
    const res = await change('bob@example.com')
    expect(res.status).toBe(200)
    expect(await res.text()).toContain('We sent a link to bob@example.com. Your email changes when you open it and confirm.')
    expect(await outbox()).toEqual([])
  })
})

describe('EMAIL_VERIFICATION=required', () => {
  test('an unverified account sees "Check your email" with Resend, authorizes nothing until it verifies', async () => {
    t = await createTestApp({ ...SMTP, EMAIL_VERIFICATION: 'required' })
    const { client } = await addClient(t, { skipConsent: true })
    const { jar } = await signUp('eve@example.com')
    const request = authorizePath({ client_id: client.id, redirect_uri: CALLBACK, scope: 'openid email', state: 's' })
    const page = await get(request, jar)
    expect(page.status).toBe(403)
    const html = await page.text()
    expect(html).toContain('Check your email')
    expect(html).toContain('>Resend</button>')
    const silent = await get(authorizePath({ client_id: client.id, redirect_uri: CALLBACK, scope: 'openid', state: 's', prompt: 'none' }), jar)
    expect(new URL(silent.headers.get('location')!).searchParams.get('error')).toBe('interaction_required')
    const resent = await postForm(t, '/verify-email/resend', { csrf_token: csrfFrom(html) }, jar)
    expect(resent.status).toBe(200)
    expect(await resent.text()).toContain('We sent a new link.')
    const messages = await outbox()
    expect(messages).toHaveLength(2)
    // The newest link works; the first one was replaced.
    expect((await get(pathOf(messages[0]!.link!), jar)).status).toBe(410)
    expect((await confirmVerify(t, messages[1]!.link!, jar)).status).toBe(200)
    const code = new URL((await get(request, jar)).headers.get('location')!).searchParams.get('code')
    expect(code).toBeString()
  })

  test('a sign-up or sign-in lands on "Check your email" (not /account); a verified account lands on /account', async () => {
    t = await createTestApp({ ...SMTP, EMAIL_VERIFICATION: 'required' })
    const { res, jar } = await signUp('eve@example.com')
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/check-email')
    const page = await get('/check-email', jar)
    expect(page.status).toBe(403)
    const html = await page.text()
    expect(html).toContain('<h1>Check your email</h1>')
    expect(html).toContain('>Resend</button>')
    const again = await passwordStep(t, 'eve@example.com', PASSWORD)
    expect(again.res.headers.get('location')).toBe('/check-email')
    // Signed out, the page asks to sign in first.
    expect((await get('/check-email')).headers.get('location')).toBe('/login?return_to=%2Fcheck-email')

    await addUser(t)
    await t.rows('UPDATE users SET email_verified = ? WHERE email = ?', true, 'ann@example.com')
    const ann = await passwordStep(t, 'ann@example.com', PASSWORD)
    expect(ann.res.headers.get('location')).toBe('/account')
    expect((await get('/check-email', ann.jar)).headers.get('location')).toBe('/account')
  })

  test('after the link, on to where the user was going: the authorization continues', async () => {
    t = await createTestApp({ ...SMTP, EMAIL_VERIFICATION: 'required' })
    const { client } = await addClient(t, { skipConsent: true })
    const request = authorizePath({ client_id: client.id, redirect_uri: CALLBACK, scope: 'openid email', state: 's' })
    const { res, jar } = await signUp('eve@example.com', 'Eve New', request)
    expect(res.headers.get('location')).toBe(`/check-email?return_to=${encodeURIComponent(request)}`)
    const page = await (await get(res.headers.get('location')!, jar)).text()
    expect(page).toContain(`<input type="hidden" name="return_to" value="${Bun.escapeHTML(request)}"/>`)
    expect(page).toContain(`<a href="${Bun.escapeHTML(request)}">Continue</a>`)
    const [message] = await outbox()
    expect(message!.link).toBe(`${message!.link!.split('&')[0]}&return_to=${encodeURIComponent(request)}`)
    const page2 = await get(pathOf(message!.link!), jar)
    expect(await page2.text()).toContain(`<input type="hidden" name="return_to" value="${Bun.escapeHTML(request)}"/>`)
    const used = await confirmVerify(t, message!.link!, jar)
    expect(used.status).toBe(303)
    expect(used.headers.get('location')).toBe(request)
    const code = new URL((await get(request, jar)).headers.get('location')!).searchParams.get('code')
    expect(code).toBeString()
  })

  test('a sign-in from an app keeps where it was going through "Resend" and the new link', async () => {
    t = await createTestApp({ ...SMTP, EMAIL_VERIFICATION: 'required' })
    const { client } = await addClient(t, { skipConsent: true })
    await signUp('eve@example.com')
    const request = authorizePath({ client_id: client.id, redirect_uri: CALLBACK, scope: 'openid', state: 's' })
    const { res, jar } = await passwordStep(t, 'eve@example.com', PASSWORD, request)
    expect(res.headers.get('location')).toBe(`/check-email?return_to=${encodeURIComponent(request)}`)
    const html = await (await get(res.headers.get('location')!, jar)).text()
    const resent = await postForm(t, '/verify-email/resend', { csrf_token: csrfFrom(html), return_to: request }, jar)
    expect(resent.status).toBe(200)
    expect(await resent.text()).toContain('We sent a new link.')
    const link = (await outbox())[1]!.link!
    expect(new URL(link).searchParams.get('return_to')).toBe(request)
    expect((await confirmVerify(t, link, jar)).headers.get('location')).toBe(request)
    expect(new URL((await get(request, jar)).headers.get('location')!).searchParams.get('code')).toBeString()
  })

  test('the link opened in another browser: sign in, "Confirm", then on to where the user was going', async () => {
    t = await createTestApp({ ...SMTP, EMAIL_VERIFICATION: 'required' })
    const { client } = await addClient(t, { skipConsent: true })
    const request = authorizePath({ client_id: client.id, redirect_uri: CALLBACK, scope: 'openid email', state: 's' })
    await signUp('eve@example.com', 'Eve New', request)
    const link = (await outbox())[0]!.link!
    const opened = await get(pathOf(link))
    expect(opened.headers.get('location')).toBe(`/login?return_to=${encodeURIComponent(pathOf(link))}`)
    const { res, jar } = await passwordStep(t, 'eve@example.com', PASSWORD, pathOf(link))
    expect(res.headers.get('location')).toBe(`/check-email?return_to=${encodeURIComponent(pathOf(link))}`)
    expect((await get(res.headers.get('location')!, jar)).headers.get('location')).toBe(pathOf(link))
    const used = await confirmVerify(t, link, jar)
    expect(used.status).toBe(303)
    expect(used.headers.get('location')).toBe(request)
    expect(new URL((await get(request, jar)).headers.get('location')!).searchParams.get('code')).toBeString()
  })
})
