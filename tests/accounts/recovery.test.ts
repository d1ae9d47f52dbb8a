import { beforeEach, describe, expect, test } from 'bun:test'
import { CALLBACK, PASSWORD, addClient, addUser, authorizeAndAllow, bearer, createTestApp, postForm, signIn, tokenRequest, type TestApp } from '../helpers'
import { SoftAuthenticator } from '../soft-authenticator'
import { SMTP, confirmVerify, forgot, get, markVerified, outbox, outboxOf, pathOf, reset, restartedWith, signUp } from './mail-flows'
import { addPasskey, csrfOf, passkeySignIn, passwordStep, turnOnTotp, type Jar } from './mfa-flows'

/** A consent and a token pair through the real flow: the access and refresh token. */
async function authorizeApp(t: TestApp, jar: Jar, client: Awaited<ReturnType<typeof addClient>>) {
  const callback = await authorizeAndAllow(t, jar, { client_id: client.client.id, redirect_uri: CALLBACK, scope: 'openid email offline_access', state: 's' })
  const res = await tokenRequest(t, {
    grant_type: 'authorization_code',
    code: callback.searchParams.get('code')!,
    client_id: client.client.id,
    client_secret: client.secret,
    redirect_uri: CALLBACK,
  })
  expect(res.status).toBe(200)
  return (await res.json()) as { access_token: string; refresh_token: string }
}

const refresh = (t: TestApp, client: Awaited<ReturnType<typeof addClient>>, refreshToken: string) =>
  tokenRequest(t, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: client.client.id, client_secret: client.secret })

describe('a reset link on an unverified account is account recovery (pre-account takeover)', () => {
  test('every passkey, TOTP secret, recovery code, consent, token and session set up before goes, and the page lists them', async () => {
    // An intruder signs up with Ann's address on a server without mail (no proof asked), adds a
    // passkey and TOTP, and lets an app in; the server is later given mail.
    const quiet = await createTestApp({ LOGIN_ATTEMPTS_PER_MINUTE: '1000', SIGNUP: 'open' })
    const client = await addClient(quiet, { name: 'Photo Backup' })
    const { res: signedUp, jar: intruder } = await signUp(quiet, 'ann@example.com')
    expect(signedUp.status).toBe(303)
    const key = await SoftAuthenticator.create()
    expect((await addPasskey(quiet, intruder, key, { name: 'Intruder key' })).status).toBe(303)
    const { codes } = await turnOnTotp(quiet, intruder)
    const tokens = await authorizeApp(quiet, intruder, client)
    const { jar: second } = await passkeySignIn(quiet, key)
    expect((await get(quiet, '/account', second)).status).toBe(200)
    const ann = (await quiet.store.users.findUserByEmail('ann@example.com'))!
    const sessionsBefore = Number((await quiet.row('SELECT count(*) AS n FROM sessions WHERE user_id = ?', ann.id))!.n)

    // Ann, the address's owner, uses "Forgot password".
    const t = await restartedWith(quiet, SMTP)
    await forgot(t, 'ann@example.com')
    const [resetMail] = await outboxOf(t, 1)
    expect(resetMail).toMatchObject({ to: 'ann@example.com', subject: 'Reset your password' })
    const done = await reset(t, resetMail!.link!, 'the owner is back now')
    expect(done.status).toBe(200)
    const html = await done.text()
    expect(html).toContain('Your password is set and your email is verified.')
    expect(html).toContain('Everything set up on it before was removed:')
    expect(html).toContain('<li>The passkey &quot;Intruder key&quot;</li>')
    expect(html).toContain('<li>Two-step verification (its authenticator app secret)</li>')
    expect(html).toContain(`<li>${codes.length} recovery codes</li>`)
    expect(html).toContain('<li>The access of the app &quot;Photo Backup&quot; (its consent and tokens)</li>')
    expect(html).toContain(`<li>${sessionsBefore} signed-in browsers</li>`)

    // Nothing of it works any more.
    expect(await t.store.mfa.listPasskeys(ann.id)).toEqual([])
    expect(await t.store.mfa.findTotp(ann.id)).toBeUndefined()
    expect(await t.store.mfa.countRecoveryCodes(ann.id)).toBe(0)
    expect(await t.store.grants.listAuthorizedApps(ann.id)).toEqual([])
    const refused = await refresh(t, client, tokens.refresh_token)
    expect(refused.status).toBe(400)
    expect(((await refused.json()) as { error: string }).error).toBe('invalid_grant')
    expect((await t.handle('/api/oauth/userinfo', { headers: bearer(tokens.access_token) })).status).toBe(401)
    expect((await get(t, '/account', intruder)).status).toBe(303)
    expect((await get(t, '/account', second)).status).toBe(303)
    const again = await passkeySignIn(t, key)
    expect(again.res.status).toBe(401)
    expect((await get(t, '/account', again.jar)).status).toBe(303)
    expect(Number((await t.row('SELECT count(*) AS n FROM sessions WHERE user_id = ?', ann.id))!.n)).toBe(0)

    // Ann's address is verified; her new password signs in with no second step.
    expect((await t.store.users.findUser(ann.id))!.emailVerified).toBe(true)
    expect((await outbox(t)).map((m) => [m.to, m.subject])).toEqual([
      ['ann@example.com', 'Reset your password'],
      ['ann@example.com', 'Your password was changed'],
    ])
    const owner = await passwordStep(t, 'ann@example.com', 'the owner is back now')
    expect(owner.res.status).toBe(303)
    expect(owner.res.headers.get('location')).toBe('/account')
    await t.ctx.audit.flush()
    expect((await t.store.audit.list({ userId: ann.id, limit: 10 })).find((e) => e.kind === 'password.reset')?.detail).toBe(JSON.stringify({ via: 'reset', recovered: true }))
  })

  test('an invitation link recovers too: the page lists nothing when there was nothing', async () => {
    const t = await createTestApp(SMTP)
    const { inviteUser } = await import('../../src/accounts/email-links')
    const { url } = await inviteUser(t.store, t.config, { email: 'ivy@example.com', fullName: 'Ivy' }, t.clock.now(), true)
    const done = await reset(t, url, 'ivy chose this one')
    expect(done.status).toBe(200)
    const html = await done.text()
    expect(html).toContain('Your password is set and your email is verified.')
    expect(html).not.toContain('was removed')
    expect((await t.store.users.findUserByEmail('ivy@example.com'))!.emailVerified).toBe(true)
  })
})

describe('the verify link cannot undo a recovery (a mail scanner or the owner opens it)', () => {
  test('an intruder signs up with the address; a cookie-less GET of the link verifies nothing; the owner\'s reset then recovers', async () => {
    const t = await createTestApp(SMTP)
    const client = await addClient(t, { name: 'Photo Backup' })
    const { jar: intruder } = await signUp(t, 'ann@example.com')
    const tokens = await authorizeApp(t, intruder, client)
    const [verify] = await outbox(t)
    expect(verify).toMatchObject({ to: 'ann@example.com', subject: 'Verify your email' })

    // Ann's mail gateway (or Ann) opens the link, with no session: it only asks to sign in.
    const opened = await get(t, pathOf(verify!.link!))
    expect(opened.status).toBe(303)
    expect(opened.headers.get('location')).toBe(`/login?return_to=${encodeURIComponent(pathOf(verify!.link!))}`)
    const login = await (await get(t, opened.headers.get('location')!)).text()
    expect(login).toContain('Sign in to the account to confirm this address. If you did not create this account, use Forgot password to take it over.')
    const ann = (await t.store.users.findUserByEmail('ann@example.com'))!
    expect((await t.store.users.findUser(ann.id))!.emailVerified).toBe(false)
    // So the intruder still cannot add a passkey.
    const options = await postForm(t, '/account/passkeys/options', { csrf_token: await csrfOf(t, '/account', intruder) }, intruder)
    expect(options.status).toBe(403)

    // Ann uses "Forgot password", as the sign-in page told her: a recovery.
    await forgot(t, 'ann@example.com')
    const resetMail = (await outboxOf(t, 2))[1]!
    expect(resetMail).toMatchObject({ to: 'ann@example.com', subject: 'Reset your password' })
    const done = await reset(t, resetMail.link!, 'the owner is back now')
    expect(done.status).toBe(200)
    const html = await done.text()
    expect(html).toContain('Everything set up on it before was removed:')
    expect(html).toContain('<li>The access of the app &quot;Photo Backup&quot; (its consent and tokens)</li>')
    expect(await t.store.grants.listAuthorizedApps(ann.id)).toEqual([])
    expect((await refresh(t, client, tokens.refresh_token)).status).toBe(400)
    expect((await t.handle('/api/oauth/userinfo', { headers: bearer(tokens.access_token) })).status).toBe(401)
    expect((await get(t, '/account', intruder)).status).toBe(303)
    // The verify link went with the recovery.
    expect((await get(t, pathOf(verify!.link!))).status).toBe(410)
  })
})

describe('a reset on a verified account', () => {
  test('keeps passkeys and TOTP, ends every session, and "Your password was changed" lists them with a link to /account', async () => {
    const t = await createTestApp(SMTP)
    const ann = await addUser(t)
    await markVerified(t, 'ann@example.com')
    const jar = await signIn(t)
    const key = await SoftAuthenticator.create()
    expect((await addPasskey(t, jar, key, { name: 'Work laptop' })).status).toBe(303)
    await turnOnTotp(t, jar)
    await forgot(t, 'ann@example.com')
    const [, resetMail] = await outboxOf(t, 2)
    expect(resetMail!.subject).toBe('Reset your password')
    const done = await reset(t, resetMail!.link!, 'a brand new password')
    expect(done.status).toBe(200)
    const html = await done.text()
    expect(html).toContain('Your password is set. Sign in with it.')
    expect(html).not.toContain('removed')
    expect((await t.store.mfa.listPasskeys(ann.id)).map((p) => p.name)).toEqual(['Work laptop'])
    expect((await t.store.mfa.findTotp(ann.id))?.confirmedAt).toBeNumber()
    expect((await get(t, '/account', jar)).status).toBe(303)
    const notice = (await outbox(t)).at(-1)!
    expect(notice).toMatchObject({ to: 'ann@example.com', subject: 'Your password was changed' })
    expect(notice.text).toContain('Passkeys that can still sign in to it: Work laptop.')
    expect(notice.text).toContain('Two-step verification is on.')
    expect(notice.text).toContain('Your account: http://localhost:3000/account')
    expect(notice.html).toContain('<a href="http://localhost:3000/account">Your account</a>')
    // The passkey still signs in.
    expect((await passkeySignIn(t, key)).res.status).toBe(303)
  })
})

describe('while mail is set up, an unverified account adds no passkey and turns on no two-step verification', () => {
  let t: TestApp
  let jar: Jar
  beforeEach(async () => {
    t = await createTestApp(SMTP)
    jar = (await signUp(t, 'eve@example.com')).jar
  })

  test('the page says "Verify your email first" and offers neither', async () => {
    const page = await (await get(t, '/account', jar)).text()
    expect(page).toContain('Verify your email first: then you can add a passkey.')
    expect(page).toContain('Verify your email first: then you can turn on two-step verification.')
    expect(page).not.toContain('id="add-passkey"')
    expect(page).not.toContain('action="/account/two-step/setup"')
  })

  test('the options, the add, the set-up, the set-up page and the confirm are refused; nothing is stored', async () => {
    const csrf = await csrfOf(t, '/account', jar)
    const options = await postForm(t, '/account/passkeys/options', { csrf_token: csrf }, jar)
    expect(options.status).toBe(403)
    expect(await options.json()).toEqual({ error: 'verify_email_first', error_description: 'Verify your email first.' })
    // A credential made for another account's options changes nothing either.
    const added = await postForm(t, '/account/passkeys', { csrf_token: csrf, name: 'Laptop', credential: '{}' }, jar)
    expect(added.status).toBe(403)
    expect(await added.text()).toContain('Verify your email first: then you can add a passkey.')
    const setup = await postForm(t, '/account/two-step/setup', { csrf_token: csrf }, jar)
    expect(setup.status).toBe(403)
    expect(await setup.text()).toContain('Verify your email first: then you can turn on two-step verification.')
    expect((await get(t, '/account/two-step', jar)).status).toBe(403)
    expect((await postForm(t, '/account/two-step/confirm', { csrf_token: csrf, code: '123456' }, jar)).status).toBe(403)
    const eve = (await t.store.users.findUserByEmail('eve@example.com'))!
    expect(await t.store.mfa.listPasskeys(eve.id)).toEqual([])
    expect(await t.store.mfa.findTotp(eve.id)).toBeUndefined()
  })

  test('once the email is verified both work', async () => {
    const [verify] = await outbox(t)
    expect((await confirmVerify(t, verify!.link!, jar)).status).toBe(200)
    expect((await addPasskey(t, jar, await SoftAuthenticator.create())).status).toBe(303)
    await turnOnTotp(t, jar)
  })

  test('without mail (nothing could verify the address) both are offered as before', async () => {
    t = await createTestApp({ SIGNUP: 'open' })
    jar = (await signUp(t, 'eve@example.com')).jar
    expect((await addPasskey(t, jar, await SoftAuthenticator.create())).status).toBe(303)
    await turnOnTotp(t, jar)
  })
})
