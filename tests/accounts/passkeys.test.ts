import { beforeEach, describe, expect, test } from 'bun:test'
import { decodeJwt } from 'jose'
import { createLogger } from '../../src/lib/log'
import { CALLBACK, PASSWORD, addClient, addUser, authorizeAndAllow, cookieHeader, createTestApp, postForm, signIn, tokenRequest, type TestApp } from '../helpers'
import { SoftAuthenticator } from '../soft-authenticator'
import { LOCAL, addPasskey, csrfOf, passkeyConfirmation, passkeySignIn, passwordStep, turnOnTotp, twoStep, type Jar } from './mfa-flows'

let t: TestApp
let lines: string[]
let userId: string
let jar: Jar

beforeEach(async () => {
  lines = []
  t = await createTestApp({}, { log: createLogger('info', (s) => lines.push(s)) })
  userId = (await addUser(t)).id
  jar = await signIn(t)
})

const events = (msg: string) => {
  t.ctx.log.flush()
  return lines.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((e) => e.msg === msg)
}
const account = async (j: Jar) => t.handle('/account', { headers: { cookie: cookieHeader(j) } })
const signedIn = async (j: Jar) => (await account(j)).status === 200

/** The sign-in through an app: its id_token's amr. */
async function amrAfter(j: Jar): Promise<unknown> {
  const { client, secret } = await addClient(t, { skipConsent: true })
  const callback = await authorizeAndAllow(t, j, { client_id: client.id, redirect_uri: CALLBACK, scope: 'openid', state: 's' })
  const res = await tokenRequest(t, { grant_type: 'authorization_code', code: callback.searchParams.get('code')!, client_id: client.id, client_secret: secret, redirect_uri: CALLBACK })
  return decodeJwt(((await res.json()) as { id_token: string }).id_token).amr
}

describe('passkeys on /account and /login', () => {
  test('add a passkey; it is listed with its name and dates; sign in with it without typing anything', async () => {
    const key = await SoftAuthenticator.create()
    const added = await addPasskey(t, jar, key, { name: 'Work laptop' })
    expect(added.status).toBe(303)
    expect(added.headers.get('location')).toBe('/account')
    const page = await (await account(jar)).text()
    expect(page).toContain('<h2>Passkeys</h2>')
    expect(page).toContain('<strong>Work laptop</strong>')
    expect(page).toContain('not used yet')
    const [stored] = await t.store.mfa.listPasskeys(userId)
    expect(stored).toMatchObject({ credentialId: key.id, name: 'Work laptop', signCount: 0, transports: ['internal'], lastUsedAt: null })

    t.clock.advance(60_000)
    const { res, jar: fresh } = await passkeySignIn(t, key)
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/account')
    expect(await signedIn(fresh)).toBe(true)
    expect((await t.store.mfa.findPasskey(key.id))!).toMatchObject({ signCount: 1, lastUsedAt: t.clock.now() })
    expect(await (await account(fresh)).text()).toContain('last used')
  })

  test('the login page offers a passkey: autofill on the email field, a form, same-origin scripts only', async () => {
    const res = await t.handle('/login')
    const html = await res.text()
    expect(html).toContain('autocomplete="username webauthn"')
    expect(html).toContain('<form method="post" action="/login/passkey" id="passkey-sign-in" class="passkey" hidden>')
    expect(html).toContain('<script src="/assets/webauthn.js" defer></script><script src="/assets/passkeys.js" defer></script>')
    expect(html).not.toMatch(/<script>|<script [^>]*>[^<]/)
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'; connect-src 'self'")
    for (const path of ['/assets/webauthn.js', '/assets/passkeys.js']) {
      const script = await t.handle(path)
      expect(script.status).toBe(200)
      expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    }
  })

  test('a passkey with user verification is two factors: amr ["hwk", "user", "mfa"]; without, ["hwk", "user"]', async () => {
    const verified = await SoftAuthenticator.create()
    await addPasskey(t, jar, verified)
    expect(await amrAfter((await passkeySignIn(t, verified)).jar)).toEqual(['hwk', 'user', 'mfa'])
    const presence = await SoftAuthenticator.create()
    await addPasskey(t, await signIn(t), presence, { ceremony: { ...LOCAL, uv: false } })
    expect(await amrAfter((await passkeySignIn(t, presence, { ceremony: { ...LOCAL, uv: false } })).jar)).toEqual(['hwk', 'user'])
  })

  test('adding or removing a passkey ends the user\'s other sessions, not this one', async () => {
    const other = await signIn(t)
    const key = await SoftAuthenticator.create()
    await addPasskey(t, jar, key)
    expect(await signedIn(jar)).toBe(true)
    expect(await signedIn(other)).toBe(false)
    const again = await signIn(t)
    const removed = await postForm(t, '/account/passkeys/remove', { csrf_token: await csrfOf(t, '/account', jar), credential_id: key.id }, jar)
    expect(removed.status).toBe(303)
    expect(await signedIn(again)).toBe(false)
    expect(await t.store.mfa.listPasskeys(userId)).toEqual([])
  })

  test('rename; a name empty, too long or with control characters is refused and changes nothing', async () => {
    const key = await SoftAuthenticator.create()
    await addPasskey(t, jar, key, { name: 'Phone' })
    const rename = async (name: string) => postForm(t, '/account/passkeys/rename', { csrf_token: await csrfOf(t, '/account', jar), credential_id: key.id, name }, jar)
    expect((await rename('  Pixel 9  ')).status).toBe(303)
    expect((await t.store.mfa.findPasskey(key.id))!.name).toBe('Pixel 9')
    for (const bad of ['', ' ', 'x'.repeat(65), 'a\u0000b', 'a\u202eb']) {
      const res = await rename(bad)
      expect(res.status).toBe(400)
      expect(await res.text()).toContain('Give the passkey a name of 1 to 64 characters.')
    }
    expect((await t.store.mfa.findPasskey(key.id))!.name).toBe('Pixel 9')
    const unknown = await postForm(t, '/account/passkeys/rename', { csrf_token: await csrfOf(t, '/account', jar), credential_id: 'nope', name: 'x' }, jar)
    expect(unknown.status).toBe(404)
  })

  test('remove the password once a passkey exists, then set one again; removing the last way to sign in is refused', async () => {
    const removePassword = async () => postForm(t, '/account/password/remove', { csrf_token: await csrfOf(t, '/account', jar), }, jar)
    const refused = await removePassword()
    expect(refused.status).toBe(409)
    expect(await refused.text()).toContain('Add a passkey before you remove your password')
    const key = await SoftAuthenticator.create()
    await addPasskey(t, jar, key)
    expect((await removePassword()).status).toBe(303)
    expect((await passwordStep(t, 'ann@example.com', PASSWORD)).res.status).toBe(401)
    const last = await postForm(t, '/account/passkeys/remove', { csrf_token: await csrfOf(t, '/account', jar), credential_id: key.id }, jar)
    expect(last.status).toBe(409)
    expect(await last.text()).toContain('This passkey is your only way to sign in. Set a password first.')
    expect(await t.store.mfa.listPasskeys(userId)).toHaveLength(1)

    const short = await postForm(t, '/account/password', { csrf_token: await csrfOf(t, '/account', jar), password: 'short' }, jar)
    expect(short.status).toBe(400)
    // Setting one takes a fresh passkey (tests/accounts/passkey-confirm.test.ts).
    const fresh = await passkeyConfirmation(t, jar, key)
    expect((await postForm(t, '/account/password', { csrf_token: fresh.csrf, password: 'a new long password', credential: fresh.credential }, jar)).status).toBe(303)
    expect((await passwordStep(t, 'ann@example.com', 'a new long password')).res.status).toBe(303)
    const twice = await postForm(t, '/account/password', { csrf_token: await csrfOf(t, '/account', jar), password: 'another password' }, jar)
    expect(twice.status).toBe(409)
  })

  test('removing the password and the last passkey at the same moment leaves one of them', async () => {
    const key = await SoftAuthenticator.create()
    await addPasskey(t, jar, key)
    const csrf = await csrfOf(t, '/account', jar)
    const [a, b] = await Promise.all([
      postForm(t, '/account/password/remove', { csrf_token: csrf }, jar),
      postForm(t, '/account/passkeys/remove', { csrf_token: csrf, credential_id: key.id }, jar),
    ])
    expect([a.status, b.status].sort()).toEqual([303, 409])
    const user = await t.store.users.findUserByEmail('ann@example.com')
    expect(!!user!.passwordHash || (await t.store.mfa.listPasskeys(userId)).length === 1).toBe(true)
  })

  test('without a passkey the browser sent, or with garbage, the sign-in is refused with a clear message', async () => {
    for (const credential of [undefined, '', 'not json', '{}', '{"id":5}', JSON.stringify({ id: 'x', response: null }), JSON.stringify({ id: 'x'.repeat(5000), response: {} })]) {
      const fresh: Jar = {}
      const csrf = await csrfOf(t, '/login', fresh)
      await postForm(t, '/login/passkey/options', { csrf_token: csrf }, fresh)
      const res = await postForm(t, '/login/passkey', { csrf_token: csrf, credential }, fresh)
      expect(res.status).toBe(401)
      expect(await res.text()).toContain('Your browser did not send a passkey. Try again, or use your password.')
      expect(res.headers.getSetCookie().some((c) => c.startsWith('lk_session='))).toBe(false)
    }
  })

  test('an IP-address ISSUER turns passkeys off: the pages say nothing of them and the options are refused', async () => {
    const ip = await createTestApp({ ISSUER: 'http://127.0.0.1:3000' })
    expect(ip.config.passkeys).toBeNull()
    await addUser(ip)
    const html = await (await ip.handle('/login')).text()
    expect(html).not.toContain('passkey')
    expect(html).not.toContain('webauthn')
    const ipJar = await signIn(ip)
    const page = await (await ip.handle('/account', { headers: { cookie: cookieHeader(ipJar) } })).text()
    expect(page).not.toContain('Passkeys')
    expect(page).not.toContain('<script')
    const options = await postForm(ip, '/account/passkeys/options', { csrf_token: await csrfOf(ip, '/account', ipJar) }, ipJar)
    expect(options.status).toBe(403)
  })
})

describe('passkey ceremonies refuse what they must (software authenticator)', () => {
  let key: SoftAuthenticator
  beforeEach(async () => {
    key = await SoftAuthenticator.create()
    expect((await addPasskey(t, jar, key)).status).toBe(303)
  })

  const refusedSignIn = async (res: Response, message = 'The passkey could not be verified. Try again.') => {
    expect(res.status).toBe(401)
    expect(await res.text()).toContain(message)
    expect(res.headers.getSetCookie().some((c) => c.startsWith('lk_session='))).toBe(false)
  }

  test('registration from another origin or for another RP ID stores nothing', async () => {
    for (const ceremony of [{ origin: 'https://evil.example', rpId: 'localhost' }, { origin: 'http://localhost:3000', rpId: 'evil.example' }]) {
      const other = await SoftAuthenticator.create()
      const res = await addPasskey(t, jar, other, { ceremony })
      expect(res.status).toBe(400)
      expect(await res.text()).toContain('The passkey could not be verified. Try again.')
      expect(await t.store.mfa.findPasskey(other.id)).toBeUndefined()
    }
  })

  test('a sign-in from another origin or for another RP ID is refused', async () => {
    await refusedSignIn((await passkeySignIn(t, key, { ceremony: { origin: 'https://evil.example', rpId: 'localhost' } })).res)
    await refusedSignIn((await passkeySignIn(t, key, { ceremony: { origin: 'http://localhost:3000', rpId: 'evil.example' } })).res)
  })

  test('a replayed assertion is refused: the challenge was used', async () => {
    const first = await passkeySignIn(t, key)
    expect(first.res.status).toBe(303)
    const replay = await postForm(t, '/login/passkey', { csrf_token: first.csrf, credential: JSON.stringify(first.credential) }, first.jar)
    await refusedSignIn(replay, 'This passkey request expired or was already used. Try again.')
  })

  test('a failed answer uses the challenge up too: no second try with it', async () => {
    const browser: Jar = {}
    const csrf = await csrfOf(t, '/login', browser)
    const options = await (await postForm(t, '/login/passkey/options', { csrf_token: csrf }, browser)).json()
    const wrong = await key.assert(options, { origin: 'https://evil.example', rpId: 'localhost' })
    await refusedSignIn(await postForm(t, '/login/passkey', { csrf_token: csrf, credential: JSON.stringify(wrong) }, browser))
    const right = await key.assert(options, LOCAL)
    await refusedSignIn(await postForm(t, '/login/passkey', { csrf_token: csrf, credential: JSON.stringify(right) }, browser), 'This passkey request expired or was already used. Try again.')
  })

  test("another browser's challenge is refused", async () => {
    const asker: Jar = {}
    const askerCsrf = await csrfOf(t, '/login', asker)
    const options = await (await postForm(t, '/login/passkey/options', { csrf_token: askerCsrf }, asker)).json()
    const answer = await key.assert(options, LOCAL)
    const thief: Jar = {}
    const thiefCsrf = await csrfOf(t, '/login', thief)
    await refusedSignIn(await postForm(t, '/login/passkey', { csrf_token: thiefCsrf, credential: JSON.stringify(answer) }, thief), 'This passkey request expired or was already used. Try again.')
  })

  test('a challenge expires after five minutes', async () => {
    const browser: Jar = {}
    const csrf = await csrfOf(t, '/login', browser)
    const options = await (await postForm(t, '/login/passkey/options', { csrf_token: csrf }, browser)).json()
    t.clock.advance(5 * 60_000 + 1)
    const answer = await key.assert(options, LOCAL)
    await refusedSignIn(await postForm(t, '/login/passkey', { csrf_token: csrf, credential: JSON.stringify(answer) }, browser), 'This passkey request expired or was already used. Try again.')
  })

  test('a signature counter going backwards refuses the sign-in and logs a warn event', async () => {
    expect((await passkeySignIn(t, key, { ceremony: { ...LOCAL, counter: 7 } })).res.status).toBe(303)
    await refusedSignIn((await passkeySignIn(t, key, { ceremony: { ...LOCAL, counter: 7 } })).res)
    await refusedSignIn((await passkeySignIn(t, key, { ceremony: { ...LOCAL, counter: 3 } })).res)
    const warned = events('passkey counter went backwards')
    expect(warned).toHaveLength(2)
    expect(warned[1]).toMatchObject({ level: 'warn', user: userId, stored: 7, asserted: 3 })
    expect((await t.store.mfa.findPasskey(key.id))!.signCount).toBe(7)
    // A forged assertion with a low counter is no clone: refused, and nothing logged.
    const browser: Jar = {}
    const csrf = await csrfOf(t, '/login', browser)
    const options = await (await postForm(t, '/login/passkey/options', { csrf_token: csrf }, browser)).json()
    const forged = await key.assert(options, { ...LOCAL, counter: 1 })
    forged.response.signature = forged.response.signature.slice(0, -4) + 'AAAA'
    await refusedSignIn(await postForm(t, '/login/passkey', { csrf_token: csrf, credential: JSON.stringify(forged) }, browser))
    expect(events('passkey counter went backwards')).toHaveLength(2)
  })

  test('a credential registered to one user cannot be registered again, by anyone', async () => {
    await addUser(t, 'bob@example.com', 'Bob')
    const bob = await signIn(t, 'bob@example.com')
    const res = await addPasskey(t, bob, key)
    expect(res.status).toBe(400)
    expect(await res.text()).toContain('This passkey is already registered.')
    expect((await t.store.mfa.findPasskey(key.id))!.userId).toBe(userId)
    expect((await addPasskey(t, jar, key)).status).toBe(400)
  })

  test('an assertion naming another user handle is refused', async () => {
    const browser: Jar = {}
    const csrf = await csrfOf(t, '/login', browser)
    const options = await (await postForm(t, '/login/passkey/options', { csrf_token: csrf }, browser)).json()
    const answer = await key.assert(options, LOCAL)
    answer.response.userHandle = Buffer.from('someone-else').toString('base64url')
    await refusedSignIn(await postForm(t, '/login/passkey', { csrf_token: csrf, credential: JSON.stringify(answer) }, browser))
  })

  test('options and answers need the CSRF token of the page', async () => {
    const browser: Jar = {}
    await csrfOf(t, '/login', browser)
    expect((await postForm(t, '/login/passkey/options', { csrf_token: 'forged' }, browser)).status).toBe(403)
    expect((await postForm(t, '/login/passkey', { csrf_token: 'forged', credential: '{}' }, browser)).status).toBe(403)
    expect((await postForm(t, '/account/passkeys/options', {}, jar)).status).toBe(403)
    expect((await postForm(t, '/account/passkeys/remove', { credential_id: key.id }, jar)).status).toBe(403)
    expect(await t.store.mfa.listPasskeys(userId)).toHaveLength(1)
  })

  test('prompt=login re-authentication accepts a passkey: auth_time is the new sign-in', async () => {
    const { client, secret } = await addClient(t, { skipConsent: true })
    t.clock.advance(60_000)
    const request = `/oauth/authorize?client_id=${client.id}&redirect_uri=${encodeURIComponent(CALLBACK)}&scope=openid&state=s&prompt=login`
    const reauth = (await t.handle(request, { headers: { cookie: cookieHeader(jar) } })).headers.get('location')!
    expect(reauth).toStartWith('/login?return_to=')
    const returnTo = new URL(reauth, 'http://x').searchParams.get('return_to')!
    const { res } = await passkeySignIn(t, key, { jar, page: reauth, returnTo })
    expect(res.headers.get('location')).toBe(returnTo)
    const callback = new URL((await t.handle(returnTo, { headers: { cookie: cookieHeader(jar) } })).headers.get('location')!)
    const tokens = await tokenRequest(t, { grant_type: 'authorization_code', code: callback.searchParams.get('code')!, client_id: client.id, client_secret: secret, redirect_uri: CALLBACK })
    expect(decodeJwt(((await tokens.json()) as { id_token: string }).id_token)).toMatchObject({ amr: ['hwk', 'user', 'mfa'], auth_time: Math.floor(t.clock.now() / 1000) })
  })

  test('a TOTP user signing in with a passkey that did not verify them still gives a code', async () => {
    const { totp } = await turnOnTotp(t, jar)
    const presence = await SoftAuthenticator.create()
    await addPasskey(t, jar, presence, { ceremony: { ...LOCAL, uv: false } })
    const { res, jar: browser } = await passkeySignIn(t, presence, { ceremony: { ...LOCAL, uv: false } })
    expect(res.headers.get('location')).toBe('/login/two-step')
    expect(await signedIn(browser)).toBe(false)
    t.clock.advance(30_000)
    expect((await twoStep(t, browser, { code: totp.generate({ timestamp: t.clock.now() }) })).status).toBe(303)
    expect(await amrAfter(browser)).toEqual(['hwk', 'user', 'otp', 'mfa'])
  })
})
