/**
 * A fresh passkey instead of the password (SPEC "Your account and your sessions": "Change
 * password" asks the current password or a fresh passkey; "Delete my account" the password or a
 * passkey again): an assertion of THIS account over a challenge this browser asked for in the
 * last five minutes, used once. An account without a password sets one, or deletes itself, so.
 */
import { beforeEach, describe, expect, test } from 'bun:test'
import { PASSWORD, addUser, cookieHeader, createTestApp, postForm, signIn, type TestApp } from '../helpers'
import { SoftAuthenticator } from '../soft-authenticator'
import { SMTP, get, outbox } from './mail-flows'
import { LOCAL, addPasskey, csrfOf, passkeyConfirmation, passkeySignIn, passwordStep, type Jar } from './mfa-flows'

const NEW_PASSWORD = 'a brand new passphrase'

let t: TestApp
let userId: string
let jar: Jar
let key: SoftAuthenticator

beforeEach(async () => {
  t = await createTestApp(SMTP)
  userId = (await addUser(t)).id
  // Verified, so that passkeys may be added while mail is set up (SPEC "Recovery").
  await t.rows('UPDATE users SET email_verified = ? WHERE id = ?', true, userId)
  jar = await signIn(t)
  key = await SoftAuthenticator.create()
  expect((await addPasskey(t, jar, key)).status).toBe(303)
})

const kinds = async (kind: string) => {
  await t.ctx.audit.flush()
  return (await t.rows('SELECT user_id FROM audit_events WHERE kind = ?', kind)).length
}
const passwordWorks = async (password: string) => (await passwordStep(t, 'ann@example.com', password)).res.status === 303

/** Ann without a password: she signs in with her passkey only. */
async function passkeyOnly() {
  expect((await postForm(t, '/account/password/remove', { csrf_token: await csrfOf(t, '/account', jar) }, jar)).status).toBe(303)
  expect(await passwordWorks(PASSWORD)).toBe(false)
}

describe('"Change password" with a fresh passkey', () => {
  test('the passkey instead of the current password: changed, other browsers signed out, a notice, audited', async () => {
    const other = await signIn(t)
    const page = await (await get(t, '/account', jar)).text()
    expect(page).toContain('<button type="button" class="secondary" data-passkey-confirm="" hidden>Use a passkey instead</button>')
    const { csrf, options, credential } = await passkeyConfirmation(t, jar, key)
    // Only this account's passkeys are offered.
    expect(options.allowCredentials?.map((c) => c.id)).toEqual([key.id])
    const res = await postForm(t, '/account/password/change', { csrf_token: csrf, credential, new_password: NEW_PASSWORD }, jar)
    expect(res.status).toBe(200)
    expect(await res.text()).toContain('Your password was changed. Your other browsers were signed out.')
    expect((await get(t, '/account', other)).status).toBe(303)
    expect((await get(t, '/account', jar)).status).toBe(200)
    expect(await passwordWorks(NEW_PASSWORD)).toBe(true)
    expect((await outbox(t)).map((m) => m.subject)).toContain('Your password was changed')
    expect(await kinds('password.changed')).toBe(1)
  })

  test('a passkey that did not verify its user (no PIN, fingerprint or face: presence only) does not stand in for the password', async () => {
    const { csrf, options, credential } = await passkeyConfirmation(t, jar, key, { ceremony: { ...LOCAL, uv: false } })
    // Asked for: the browser tells the authenticator that verification is needed.
    expect((options as { userVerification?: string }).userVerification).toBe('required')
    const res = await postForm(t, '/account/password/change', { csrf_token: csrf, credential, new_password: NEW_PASSWORD }, jar)
    expect(res.status).toBe(401)
    expect((/<p class="error" role="alert">([^<]*)</.exec(await res.text()) ?? [])[1]).toBe('The passkey could not be verified. Try again. Nothing was changed.')
    expect(await passwordWorks(PASSWORD)).toBe(true)
    expect(await kinds('password.changed')).toBe(0)
  })

  test('a stale, replayed, other browser\'s, sign-in or other account\'s assertion is refused (401) and changes nothing', async () => {
    await addUser(t, 'bob@example.com', 'Bob')
    await t.rows('UPDATE users SET email_verified = ? WHERE email = ?', true, 'bob@example.com')
    const bob = await signIn(t, 'bob@example.com')
    const bobKey = await SoftAuthenticator.create()
    expect((await addPasskey(t, bob, bobKey)).status).toBe(303)
    const change = async (fields: Record<string, string>) => {
      const res = await postForm(t, '/account/password/change', { csrf_token: await csrfOf(t, '/account', jar), new_password: NEW_PASSWORD, ...fields }, jar)
      return [res.status, (/<p class="error" role="alert">([^<]*)</.exec(await res.text()) ?? [])[1]]
    }
    const expired = 'This passkey request expired or was already used. Try again. Nothing was changed.'

    // Stale: the challenge lives five minutes.
    const stale = await passkeyConfirmation(t, jar, key)
    t.clock.advance(5 * 60_000 + 1)
    expect(await change({ credential: stale.credential })).toEqual([401, expired])
    // Replayed: a challenge is used once.
    const used = await passkeyConfirmation(t, jar, key)
    const first = await postForm(t, '/account/password/change', { csrf_token: used.csrf, credential: used.credential, new_password: 'short' }, jar)
    expect(first.status).toBe(400) // refused before the passkey is looked at: the challenge stays
    expect(await change({ credential: used.credential, current_password: 'wrong' })).toEqual([200, undefined])
    expect(await passwordWorks(NEW_PASSWORD)).toBe(true)
    expect(await change({ credential: used.credential })).toEqual([401, expired])
    // Another browser of Ann asked for the challenge: this browser has none.
    const elsewhere = await signIn(t, 'ann@example.com', NEW_PASSWORD)
    const theirs = await passkeyConfirmation(t, elsewhere, key)
    expect(await change({ credential: theirs.credential })).toEqual([401, expired])
    // A sign-in's challenge (/login/passkey/options) is not a confirmation's.
    const csrf = await csrfOf(t, '/account', jar)
    const signInOptions = (await (await postForm(t, '/login/passkey/options', { csrf_token: csrf }, jar)).json()) as { challenge: string }
    expect(await change({ credential: JSON.stringify(await key.assert(signInOptions, { origin: 'http://localhost:3000', rpId: 'localhost' })) })).toEqual([401, expired])
    // Bob's passkey over Ann's challenge proves nothing about Ann.
    const ann = await passkeyConfirmation(t, jar, key)
    const bobs = JSON.stringify(await bobKey.assert(ann.options, { origin: 'http://localhost:3000', rpId: 'localhost' }))
    expect(await change({ credential: bobs })).toEqual([401, 'That is not a passkey of your account. Try again with one of yours. Nothing was changed.'])
    // Not JSON at all.
    await passkeyConfirmation(t, jar, key)
    expect((await change({ credential: 'nonsense' }))[0]).toBe(401)
    expect(await passwordWorks(NEW_PASSWORD)).toBe(true)
    expect(await kinds('password.changed')).toBe(1)
  })

  test('confirm-options: 403 without the CSRF token; 409 for an account without a passkey', async () => {
    expect((await postForm(t, '/account/passkeys/confirm-options', {}, jar)).status).toBe(403)
    await addUser(t, 'bob@example.com', 'Bob')
    const bob = await signIn(t, 'bob@example.com')
    const res = await postForm(t, '/account/passkeys/confirm-options', { csrf_token: await csrfOf(t, '/account', bob) }, bob)
    expect([res.status, await res.json()]).toEqual([409, { error: 'no_passkey', error_description: 'You have no passkey. Use your password.' }])
    expect(res.headers.get('cache-control')).toBe('no-store')
  })
})

describe('an account without a password', () => {
  test('sets a password only after a fresh passkey', async () => {
    await passkeyOnly()
    const page = await (await get(t, '/account', jar)).text()
    expect(page).toContain('You sign in with a passkey only: confirm with it to set a password.')
    expect(page).toContain('<button type="submit" data-passkey-confirm="">Confirm with your passkey and set password</button>')
    const bare = await postForm(t, '/account/password', { csrf_token: await csrfOf(t, '/account', jar), password: NEW_PASSWORD }, jar)
    expect(bare.status).toBe(401)
    expect(await bare.text()).toContain('Confirm with your passkey first. Nothing was changed.')
    // "Change password" without a current password is the same.
    const change = await postForm(t, '/account/password/change', { csrf_token: await csrfOf(t, '/account', jar), new_password: NEW_PASSWORD }, jar)
    expect(change.status).toBe(401)
    expect(await passwordWorks(NEW_PASSWORD)).toBe(false)
    const { csrf, credential } = await passkeyConfirmation(t, jar, key)
    expect((await postForm(t, '/account/password', { csrf_token: csrf, password: NEW_PASSWORD, credential }, jar)).status).toBe(303)
    expect(await passwordWorks(NEW_PASSWORD)).toBe(true)
  })

  test('deletes the account with a fresh passkey; without one nothing is deleted', async () => {
    await passkeyOnly()
    // Signed in with the passkey, long ago: a recent sign-in is not what counts, the fresh passkey is.
    const { jar: pkJar } = await passkeySignIn(t, key)
    t.clock.advance(60 * 60_000)
    const page = await (await get(t, '/account/delete', pkJar)).text()
    expect(page).not.toContain('name="password"')
    expect(page).toContain('<button type="submit" class="danger" data-passkey-confirm="">Confirm with your passkey and delete</button>')
    expect(page).toContain('<script src="/assets/passkeys.js" defer></script>')
    const bare = await postForm(t, '/account/delete', { csrf_token: await csrfOf(t, '/account/delete', pkJar) }, pkJar)
    expect(bare.status).toBe(401)
    expect(await bare.text()).toContain('Confirm with your passkey first. Nothing was deleted.')
    expect(await t.store.users.findUser(userId)).toBeDefined()
    const { csrf, credential } = await passkeyConfirmation(t, pkJar, key, { page: '/account/delete' })
    const res = await postForm(t, '/account/delete', { csrf_token: csrf, credential }, pkJar)
    expect(res.status).toBe(200)
    expect(await res.text()).toContain('Your account and everything in it were deleted.')
    expect(await t.store.users.findUser(userId)).toBeUndefined()
    expect(await t.rows('SELECT credential_id FROM passkeys')).toEqual([])
  })

  test('an account with a password may delete itself with a passkey instead', async () => {
    const page = await (await get(t, '/account/delete', jar)).text()
    expect(page).toContain('name="password"')
    expect(page).toContain('<button type="button" class="danger" data-passkey-confirm="" hidden>Delete with a passkey instead</button>')
    const { csrf, credential } = await passkeyConfirmation(t, jar, key, { page: '/account/delete' })
    expect((await postForm(t, '/account/delete', { csrf_token: csrf, credential }, jar)).status).toBe(200)
    expect(await t.store.users.findUser(userId)).toBeUndefined()
    expect((await t.handle('/account', { headers: { cookie: cookieHeader(jar) } })).status).toBe(303)
  })
})
