/**
 * SPEC "Sign in with another account", Linking — each rule against a real OpenID Connect provider
 * (oidc-provider, started here), in process, on SQLite and (LATCHKEY_TEST_DATABASE_URL) PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { addUser } from '../helpers'
import { outbox, SMTP } from '../accounts/mail-flows'
import { addProvider, appWith, browserFor, continueWith, failures, identitiesOf, passwordSignIn, sessionsOf, upstreamFor, verifyEmail } from './flow'
import type { Upstream } from './upstream'

setDefaultTimeout(30_000)

let upstream: Upstream
beforeAll(async () => {
  upstream = await upstreamFor()
})
afterAll(() => upstream.close())

const NOT_LINKED = 'No account here is connected to this Acme account. Sign in with your password or passkey, then choose &quot;Connect Acme&quot; under Connected accounts on your account page.'

describe('a linked identity', () => {
  test('signs in with amr ["fed"] and returns where the sign-in was going; a changed email claim never moves it to another account', async () => {
    const t = await appWith([upstream], SMTP)
    const ann = await addUser(t)
    const bob = await addUser(t, 'bob@example.com', 'Bob')
    await verifyEmail(t, 'ann@example.com')
    await verifyEmail(t, 'bob@example.com')
    await addProvider(t, upstream, { linkVerifiedEmail: true })
    upstream.accounts.set('u-mover', { email: 'ann@example.com', email_verified: true })

    const first = await continueWith(browserFor(t, [upstream]), upstream, 'u-mover', { returnTo: '/account?tab=1' })
    expect([first.response.status, new URL(first.at).pathname + new URL(first.at).search]).toEqual([200, '/account?tab=1'])
    expect(await identitiesOf(t)).toEqual([{ provider: 'acme', subject: 'u-mover', user: ann.id, email: 'ann@example.com' }])
    expect(await sessionsOf(t)).toEqual([{ user: ann.id, amr: 'fed', pending: false }])

    // The provider now names Bob's verified address for the same subject: it still signs in Ann.
    upstream.accounts.set('u-mover', { email: 'bob@example.com', email_verified: true })
    const again = await continueWith(browserFor(t, [upstream]), upstream, 'u-mover')
    expect(new URL(again.at).pathname).toBe('/account')
    expect((await sessionsOf(t)).map((s) => s.user)).toEqual([ann.id, ann.id])
    expect(await identitiesOf(t)).toEqual([{ provider: 'acme', subject: 'u-mover', user: ann.id, email: 'bob@example.com' }])
    expect((await sessionsOf(t)).some((s) => s.user === bob.id)).toBe(false)
  })
})

describe('--link-verified-email', () => {
  test('a provider-verified address matching a local verified address links, and the user is told by mail', async () => {
    const t = await appWith([upstream], SMTP)
    const ann = await addUser(t)
    await verifyEmail(t, 'ann@example.com')
    await addProvider(t, upstream, { linkVerifiedEmail: true })
    const done = await continueWith(browserFor(t, [upstream]), upstream, 'u-ann')
    expect(new URL(done.at).pathname).toBe('/account')
    expect(await identitiesOf(t)).toEqual([{ provider: 'acme', subject: 'u-ann', user: ann.id, email: 'ann@example.com' }])
    const [mail] = await outbox(t)
    expect([mail!.to, mail!.subject, mail!.link]).toEqual(['ann@example.com', 'A new way to sign in was added', 'http://localhost:3000/account#connected'])
    expect(mail!.text).toContain('Your account can now be signed in to with ann@example.com from Acme.')
    expect((await t.rows("SELECT detail FROM audit_events WHERE kind = 'identity.linked'")).map((r) => JSON.parse(r.detail as string))).toEqual([{ provider: 'acme', how: 'verified-email' }])
  })

  test('an address the provider did not verify never links (pre-account takeover); nor does one the local account has not verified', async () => {
    const t = await appWith([upstream], SMTP)
    await addUser(t)
    await addUser(t, 'new@example.com', 'New')
    await verifyEmail(t, 'ann@example.com')
    await addProvider(t, upstream, { linkVerifiedEmail: true })
    for (const account of ['u-unverified', 'u-new']) {
      const refused = await continueWith(browserFor(t, [upstream]), upstream, account)
      expect(refused.response.status).toBe(403)
      expect(await refused.response.text()).toContain(NOT_LINKED)
      expect(refused.response.headers.getSetCookie()).toEqual(['lk_provider=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0'])
    }
    expect(await identitiesOf(t)).toEqual([])
    expect(await sessionsOf(t)).toEqual([])
    expect(await outbox(t)).toEqual([])
    expect(await failures(t)).toEqual([
      { method: 'provider', provider: 'acme', reason: 'not-linked' },
      { method: 'provider', provider: 'acme', reason: 'not-linked' },
    ])
  })
})

describe('--allow-create', () => {
  test('a new person gets an account, email_verified as the provider says, no password; an unverified address makes an unverified account', async () => {
    const t = await appWith([upstream])
    await addProvider(t, upstream, { allowCreate: true })
    upstream.accounts.set('u-fresh', { email: 'Fresh@Example.com', email_verified: false, name: 'Fresh Face' })
    expect(new URL((await continueWith(browserFor(t, [upstream]), upstream, 'u-new')).at).pathname).toBe('/account')
    expect(new URL((await continueWith(browserFor(t, [upstream]), upstream, 'u-fresh')).at).pathname).toBe('/account')
    const users = await t.rows('SELECT email, full_name, email_verified, password_hash FROM users ORDER BY email')
    expect(users.map((u) => [u.email, u.full_name, Boolean(u.email_verified), u.password_hash])).toEqual([
      ['fresh@example.com', 'Fresh Face', false, ''],
      ['new@example.com', 'New Person', true, ''],
    ])
    expect((await identitiesOf(t)).map((i) => i.subject)).toEqual(['u-fresh', 'u-new'])
    expect((await sessionsOf(t)).map((s) => s.amr)).toEqual(['fed', 'fed'])
  })

  test('an address a local account already has is not taken over: the page explains connecting from /account', async () => {
    const t = await appWith([upstream])
    await addUser(t)
    await addProvider(t, upstream, { allowCreate: true })
    for (const account of ['u-ann', 'u-unverified']) {
      const refused = await continueWith(browserFor(t, [upstream]), upstream, account)
      expect(refused.response.status).toBe(403)
      expect(await refused.response.text()).toContain(NOT_LINKED)
    }
    expect((await t.rows('SELECT email FROM users')).map((u) => u.email)).toEqual(['ann@example.com'])
    expect(await identitiesOf(t)).toEqual([])
  })

  test('--allowed-domain: an address of another domain is refused before anything is made', async () => {
    const t = await appWith([upstream])
    await addProvider(t, upstream, { allowCreate: true, allowedDomains: ['example.com'] })
    const refused = await continueWith(browserFor(t, [upstream]), upstream, 'u-other')
    expect(refused.response.status).toBe(403)
    expect(await refused.response.text()).toContain('This Acme account is not in a domain allowed to sign in here. Use an account of example.com.')
    // An unverified address of the right domain proves nothing about the domain either.
    upstream.accounts.set('u-claims', { email: 'claims@example.com', email_verified: false })
    expect((await continueWith(browserFor(t, [upstream]), upstream, 'u-claims')).response.status).toBe(403)
    expect(await t.rows('SELECT email FROM users')).toEqual([])
    expect((await failures(t)).map((f) => f.reason)).toEqual(['domain', 'domain'])
    expect(new URL((await continueWith(browserFor(t, [upstream]), upstream, 'u-new')).at).pathname).toBe('/account')
    expect((await t.rows('SELECT email FROM users')).map((u) => u.email)).toEqual(['new@example.com'])
  })
})

test('without --allow-create or a link, the page explains how to connect from /account; nothing is made', async () => {
  const t = await appWith([upstream])
  await addProvider(t, upstream)
  const refused = await continueWith(browserFor(t, [upstream]), upstream, 'u-new')
  expect(refused.response.status).toBe(403)
  const html = await refused.response.text()
  expect(html).toContain('<title>Connect Acme first · Latchkey</title>')
  expect(html).toContain(NOT_LINKED)
  expect(await t.rows('SELECT id FROM users')).toEqual([])
  expect(await sessionsOf(t)).toEqual([])
})

describe('/account → Connected accounts', () => {
  test('Connect links the provider account to the signed-in user (whatever its address), tells them by mail; Disconnect unlinks it', async () => {
    const t = await appWith([upstream], SMTP)
    const ann = await addUser(t)
    await addProvider(t, upstream)
    const b = browserFor(t, [upstream])
    await passwordSignIn(b)
    const page = await (await b.request('/account')).text()
    expect(page).toContain('<h2>Connected accounts</h2>')
    expect(page).toContain('Connect Acme</button>')
    upstream.next.account = 'u-other'
    const connected = await b.submit('/account', '/account/providers/acme/connect')
    expect(new URL(connected.at).pathname).toBe('/account')
    expect(await identitiesOf(t)).toEqual([{ provider: 'acme', subject: 'u-other', user: ann.id, email: 'zed@elsewhere.example' }])
    const [mail] = await outbox(t)
    expect([mail!.to, mail!.subject]).toEqual(['ann@example.com', 'A new way to sign in was added'])
    const after = await connected.response.text()
    expect(after).toContain('aria-label="Disconnect Acme"')
    expect(after).toContain('zed@elsewhere.example')
    expect(after).toContain('Connected a sign-in provider')

    // It signs in now, as Ann.
    const other = await continueWith(browserFor(t, [upstream]), upstream, 'u-other')
    expect(new URL(other.at).pathname).toBe('/account')
    expect((await sessionsOf(t)).map((s) => [s.user, s.amr])).toEqual([
      [ann.id, 'pwd'],
      [ann.id, 'fed'],
    ])

    const gone = await b.submit('/account', '/account/providers/acme/disconnect')
    expect(new URL(gone.at).pathname).toBe('/account')
    expect(await identitiesOf(t)).toEqual([])
    expect((await t.rows("SELECT kind, detail FROM audit_events WHERE kind LIKE 'identity.%' ORDER BY id")).map((r) => [r.kind, JSON.parse(r.detail as string)])).toEqual([
      ['identity.linked', { provider: 'acme', how: 'connect' }],
      ['identity.unlinked', { provider: 'acme' }],
    ])
  })

  test('a session older than 15 minutes signs in again before it connects', async () => {
    const t = await appWith([upstream])
    await addUser(t)
    await addProvider(t, upstream)
    const b = browserFor(t, [upstream])
    await passwordSignIn(b)
    const html = await (await b.request('/account')).text()
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(html)![1]!
    t.clock.advance(15 * 60_000 + 1000)
    const stale = await b.request('/account/providers/acme/connect', { method: 'POST', body: new URLSearchParams({ csrf_token: csrf }) })
    expect([stale.status, stale.headers.get('location')]).toEqual([303, '/login?reauth=1&return_to=%2Faccount'])
    expect(await t.rows('SELECT state_hash FROM provider_states')).toEqual([])
    // Without the form's CSRF token: refused, nothing started.
    const forged = await b.request('/account/providers/acme/connect', { method: 'POST', body: new URLSearchParams({}) })
    expect(forged.status).toBe(403)
  })

  test('the last way to sign in is never disconnected', async () => {
    const t = await appWith([upstream])
    await addProvider(t, upstream, { allowCreate: true })
    const b = browserFor(t, [upstream])
    await continueWith(b, upstream, 'u-new')
    const refused = await b.submit('/account', '/account/providers/acme/disconnect')
    expect(refused.response.status).toBe(409)
    expect(await refused.response.text()).toContain('This is your only way to sign in. Set a password or add a passkey before you disconnect it.')
    expect((await identitiesOf(t)).map((i) => i.subject)).toEqual(['u-new'])
  })

  test('a connected account signs in but confirms nothing: the last passkey of an account without a password stays (its owner could no longer delete the account or set a password); disconnecting counts the passkey; a deleted provider counts no more', async () => {
    const t = await appWith([upstream])
    await addProvider(t, upstream, { allowCreate: true })
    const b = browserFor(t, [upstream])
    await continueWith(b, upstream, 'u-new') // an account made by Acme: no password
    const user = (await identitiesOf(t))[0]!.user as string
    const passkey = (credentialId: string) => t.store.mfa.addPasskey({ credentialId, userId: user, name: credentialId, publicKey: 'pk', signCount: 0, transports: [], createdAt: t.clock.now(), lastUsedAt: null })
    const remove = (credentialId: string) => b.submit('/account', '/account/passkeys/remove', { credential_id: credentialId })
    const passkeysLeft = async () => (await t.store.mfa.listPasskeys(user)).map((p) => p.credentialId)

    // A passkey and Acme: the passkey is the one way to confirm "Delete my account" or a new password, so it stays.
    await passkey('one')
    const kept = await remove('one')
    expect(kept.response.status).toBe(409)
    expect(await kept.response.text()).toContain('This passkey is your only way to sign in. Set a password first.')
    expect(await passkeysLeft()).toEqual(['one'])

    // Acme may go (the passkey still signs in); then the passkey is the last way and stays.
    const gone = await b.submit('/account', '/account/providers/acme/disconnect')
    expect([gone.response.status, new URL(gone.at).pathname]).toEqual([200, '/account'])
    expect(await identitiesOf(t)).toEqual([])
    const last = await remove('one')
    expect(last.response.status).toBe(409)
    expect(await passkeysLeft()).toEqual(['one'])

    // With a second passkey one may go, Acme connected or not; an identity goes with its provider.
    await passkey('two')
    await t.store.providers.linkIdentity({ providerId: 'acme', subject: 'u-new', userId: user, email: null, origin: { kind: 'oidc', issuer: upstream.issuer, apiUrl: null } }, t.clock.now())
    expect(await t.store.providers.deleteProvider('acme')).toEqual({ connected: 1, stranded: 0, deleted: true })
    const one = await remove('two')
    expect([one.response.status, new URL(one.at).pathname]).toEqual([200, '/account'])
    expect(await passkeysLeft()).toEqual(['one'])
  })

  test('with a connected account but no passkey, the password stays: /account offers no "Remove password", and the POST is refused (409), nothing changed', async () => {
    const t = await appWith([upstream])
    const ann = await addUser(t)
    await addProvider(t, upstream)
    const b = browserFor(t, [upstream])
    await passwordSignIn(b)
    upstream.next.account = 'u-ann'
    await b.submit('/account', '/account/providers/acme/connect')
    expect((await identitiesOf(t)).map((i) => i.user)).toEqual([ann.id])
    expect(await (await b.request('/account')).text()).not.toContain('action="/account/password/remove"')
    const refused = await b.submit('/account', '/account/password/remove')
    expect(refused.response.status).toBe(409)
    expect((await t.store.users.findUserByEmail(ann.email))?.passwordHash).not.toBe('')
  })

  test('a provider account connected to someone else is not moved; the connecting browser must still be signed in as the user who started', async () => {
    const t = await appWith([upstream])
    const ann = await addUser(t)
    await addUser(t, 'bob@example.com', 'Bob')
    await addProvider(t, upstream)
    const annBrowser = browserFor(t, [upstream])
    await passwordSignIn(annBrowser)
    upstream.next.account = 'u-other'
    await annBrowser.submit('/account', '/account/providers/acme/connect')
    const bobBrowser = browserFor(t, [upstream])
    await passwordSignIn(bobBrowser, 'bob@example.com')
    const refused = await bobBrowser.submit('/account', '/account/providers/acme/connect')
    expect(refused.response.status).toBe(409)
    expect(await refused.response.text()).toContain('This Acme account is connected to another account here.')
    expect((await identitiesOf(t)).map((i) => i.user)).toEqual([ann.id])
  })
})

describe('every sign-in page leads to the providers', () => {
  test('/device: a TV\'s user code survives the round trip through the provider, to the device consent page', async () => {
    const { createClient, DEVICE_CODE } = await import('../../src/oauth/clients')
    const t = await appWith([upstream])
    await addProvider(t, upstream, { allowCreate: true })
    const tv = (await createClient(t.store, { name: 'Living-room TV', redirectUris: [], public: true, skipConsent: false, grantTypes: [DEVICE_CODE] }, t.clock.now())).client.id
    const started = await t.handle('/api/oauth/device_authorization', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ client_id: tv, scope: 'openid email' }) })
    const { user_code } = (await started.json()) as { user_code: string }
    const b = browserFor(t, [upstream])
    const toLogin = await b.request(`/device?user_code=${user_code}`)
    const login = toLogin.headers.get('location')!
    const page = await (await b.request(login)).text()
    const link = /href="(\/login\/provider\/acme\?return_to=[^"]+)"/.exec(page)![1]!.replaceAll('&amp;', '&')
    upstream.next.account = 'u-new'
    const done = await b.go(link)
    expect(new URL(done.at).pathname + new URL(done.at).search).toBe(`/device?user_code=${user_code}`)
    expect(await done.response.text()).toContain('Living-room TV')
  })
})

test("forward-auth's sign-in (/authz/start): back through the provider to the site's callback", async () => {
  const { createSite } = await import('../../src/authz/sites')
  const { PROXIES, startPath } = await import('../authz/flow')
  const t = await appWith([upstream], PROXIES)
  await addProvider(t, upstream, { allowCreate: true })
  await createSite(t.store, { host: 'photos.example.com', name: 'Photos' }, t.clock.now())
  const b = browserFor(t, [upstream])
  const rd = 'https://photos.example.com/albums'
  const login = (await b.request(startPath(rd))).headers.get('location')!
  const link = /href="(\/login\/provider\/acme\?return_to=[^"]+)"/.exec(await (await b.request(login)).text())![1]!.replaceAll('&amp;', '&')
  upstream.next.account = 'u-new'
  const done = await b.go(link)
  const site = new URL(done.left!)
  expect(site.origin + site.pathname).toBe('https://photos.example.com/.latchkey/callback')
  expect(site.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/)
})

describe('an account with a connected account only (no password, no passkey)', () => {
  test('deletes itself: past five minutes its page sends it to sign in again at Acme, which brings it back to a page that deletes', async () => {
    const t = await appWith([upstream])
    await addProvider(t, upstream, { allowCreate: true })
    const b = browserFor(t, [upstream])
    expect(new URL((await continueWith(b, upstream, 'u-new')).at).pathname).toBe('/account')
    t.clock.advance(5 * 60_000 + 1)
    const stale = await (await b.request('/account/delete')).text()
    expect(stale).not.toContain('>Delete my account</button>')
    const again = /href="(\/login\?reauth=1&amp;return_to=%2Faccount%2Fdelete)"/.exec(stale)![1]!.replaceAll('&amp;', '&')
    const signInPage = await (await b.request(again)).text()
    const acme = /href="(\/login\/provider\/acme\?return_to=[^"]+)"/.exec(signInPage)![1]!
    upstream.next.account = 'u-new'
    upstream.next.amr = ['pwd']
    const back = await b.go(acme)
    expect(new URL(back.at).pathname).toBe('/account/delete')
    expect(await back.response.text()).toContain('You signed in a moment ago: that confirms it is you.')
    const done = await b.submit('/account/delete', '/account/delete')
    expect(done.response.status).toBe(200)
    expect(await done.response.text()).toContain('Account deleted')
    expect(await t.rows("SELECT id FROM users WHERE email = 'new@example.com'")).toEqual([])
  })
})
