/**
 * /account's profile (SPEC "Your account and your sessions", Profile): the name and picture,
 * "Change password", "Delete my account", and "Delete data" asked first.
 */
import { describe, expect, test } from 'bun:test'
import { PASSWORD, addClient, addUser, bearer, cookieHeader, createTestApp, mintToken, postForm, signIn, tokenThroughFlow, type TestApp } from '../helpers'
import { SMTP, get, outbox } from './mail-flows'
import { csrfOf, type Jar } from './mfa-flows'

async function signedIn(env: Record<string, string> = SMTP) {
  const t = await createTestApp(env)
  const user = await addUser(t)
  return { t, user, jar: await signIn(t) }
}

const NEW_PASSWORD = 'a brand new passphrase'

async function post(t: TestApp, jar: Jar, path: string, fields: Record<string, string>, page = '/account') {
  return postForm(t, path, { csrf_token: await csrfOf(t, page, jar), ...fields }, jar)
}

/** An app the user authorized through consent, with `keys` saved by it. */
async function appWithSettings(t: TestApp, keys: string[]) {
  const app = await addClient(t, { name: 'Notes App' })
  const token = await tokenThroughFlow(t, app, 'openid profile settings:read settings:write')
  for (const key of keys) {
    const saved = await t.handle('/api/settings', { method: 'POST', headers: { ...bearer(token), 'content-type': 'application/json' }, body: JSON.stringify({ client_id: app.client.id, key, value: 1 }) })
    expect(saved.status).toBe(200)
  }
  return { app, token }
}

const kinds = async (t: TestApp, kind: string) => {
  await t.ctx.audit.flush()
  return (await t.rows('SELECT user_id FROM audit_events WHERE kind = ?', kind)) as Array<{ user_id: string }>
}

describe('profile', () => {
  test('a new name and an https:// picture are saved, shown, audited and answered by userinfo at once', async () => {
    const { t, user, jar } = await signedIn()
    const app = await addClient(t)
    const token = await mintToken(t, app.client.id, user.id, 'openid profile')
    expect(((await (await t.handle('/api/oauth/userinfo', { headers: bearer(token) })).json()) as { full_name: string }).full_name).toBe('Ann Lee')
    const res = await post(t, jar, '/account/profile', { full_name: '  Ann  Lee-Smith ', avatar_url: 'https://img.example/ann.png' })
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/account')
    expect(await t.store.users.findUser(user.id)).toMatchObject({ fullName: 'Ann  Lee-Smith', avatarUrl: 'https://img.example/ann.png' })
    const page = await (await get(t, '/account', jar)).text()
    expect(page).toContain('<img src="https://img.example/ann.png"')
    expect(page).toContain('value="Ann  Lee-Smith"')
    const info = (await (await t.handle('/api/oauth/userinfo', { headers: bearer(token) })).json()) as Record<string, string>
    expect([info.full_name, info.avatar_url]).toEqual(['Ann  Lee-Smith', 'https://img.example/ann.png'])
    expect(await kinds(t, 'user.updated')).toEqual([{ user_id: user.id }])
    // Empty: back to the generated initials.
    expect((await post(t, jar, '/account/profile', { full_name: 'Ann', avatar_url: '' })).status).toBe(303)
    expect((await t.store.users.findUser(user.id))?.avatarUrl).toBeNull()
  })

  test('a picture that is not https://, or a name with control characters, is refused with a clear message and changes nothing', async () => {
    const { t, user, jar } = await signedIn()
    expect((await post(t, jar, '/account/profile', { full_name: 'Ann', avatar_url: 'https://img.example/a.png' })).status).toBe(303)
    const cases: Array<[Record<string, string>, string]> = [
      [{ full_name: 'New Name', avatar_url: 'http://img.example/a.png' }, 'The picture&#x27;s address must be a full https:// URL.'],
      [{ full_name: 'New Name', avatar_url: 'javascript:alert(1)' }, 'The picture&#x27;s address must be a full https:// URL.'],
      [{ full_name: 'New Name', avatar_url: 'data:image/png;base64,AAAA' }, 'The picture&#x27;s address must be a full https:// URL.'],
      [{ full_name: 'New Name', avatar_url: 'https://user:pw@img.example/a.png' }, 'The picture&#x27;s address must not contain a user name or password.'],
      [{ full_name: 'New Name', avatar_url: `https://img.example/${'a'.repeat(2100)}` }, 'The picture&#x27;s address must be at most 2048 characters.'],
      [{ full_name: 'Ann\u202eevil', avatar_url: '' }, 'Full name contains control or invisible characters.'],
      [{ full_name: '   ', avatar_url: '' }, 'Full name must be 1 to 200 characters.'],
      [{ full_name: 'x'.repeat(201), avatar_url: '' }, 'Full name must be 1 to 200 characters.'],
    ]
    for (const [fields, message] of cases) {
      const res = await post(t, jar, '/account/profile', fields)
      const text = await res.text()
      expect([res.status, text.includes(message)]).toEqual([400, true])
    }
    expect(await t.store.users.findUser(user.id)).toMatchObject({ fullName: 'Ann', avatarUrl: 'https://img.example/a.png' })
  })

  test('without the CSRF token: 403, nothing changed', async () => {
    const { t, user, jar } = await signedIn()
    expect((await postForm(t, '/account/profile', { full_name: 'Mallory', avatar_url: '' }, jar)).status).toBe(403)
    expect((await t.store.users.findUser(user.id))?.fullName).toBe('Ann Lee')
  })
})

describe('change password', () => {
  test('the current password and a new one: other sessions end, this one stays, a notice is sent, audited; the old password stops working', async () => {
    const { t, user, jar } = await signedIn()
    const other = await signIn(t)
    expect((await get(t, '/account', jar)).status).toBe(200)
    expect(await (await get(t, '/account', jar)).text()).toContain('Change password')
    const res = await post(t, jar, '/account/password/change', { current_password: PASSWORD, new_password: NEW_PASSWORD })
    expect(res.status).toBe(200)
    expect(await res.text()).toContain('Your password was changed. Your other browsers were signed out.')
    expect((await get(t, '/account', jar)).status).toBe(200)
    expect((await get(t, '/account', other)).status).toBe(303)
    expect((await outbox(t)).map((m) => [m.to, m.subject])).toEqual([['ann@example.com', 'Your password was changed']])
    expect(await kinds(t, 'password.changed')).toEqual([{ user_id: user.id }])
    await expect(signIn(t, 'ann@example.com', PASSWORD)).rejects.toThrow('sign-in failed: 401')
    expect(await signIn(t, 'ann@example.com', NEW_PASSWORD)).toBeDefined()
  })

  test('a wrong current password is refused (401), counted by the sign-in throttle, and changes nothing', async () => {
    const { t, jar } = await signedIn({ ...SMTP, LOGIN_ATTEMPTS_PER_MINUTE: '2' })
    const other = await signIn(t)
    // The address's budget (2 a minute, spent by the two sign-ins above) is taken by guesses here as at /login.
    t.clock.advance(61_000)
    const first = await post(t, jar, '/account/password/change', { current_password: 'not my password', new_password: NEW_PASSWORD })
    expect(first.status).toBe(401)
    expect(await first.text()).toContain('That is not your current password. Nothing was changed.')
    expect((await post(t, jar, '/account/password/change', { current_password: 'nope nope', new_password: NEW_PASSWORD })).status).toBe(401)
    const throttled = await post(t, jar, '/account/password/change', { current_password: PASSWORD, new_password: NEW_PASSWORD })
    expect(throttled.status).toBe(429)
    expect(await throttled.text()).toContain('Too many attempts. Try again in')
    expect((await get(t, '/account', other)).status).toBe(200)
    expect(await outbox(t)).toEqual([])
    expect(await kinds(t, 'password.changed')).toEqual([])
    expect((await kinds(t, 'sign_in.failed')).length).toBe(2)
  })

  test('a new password shorter than 8 or longer than 256 characters is refused before the current one is checked', async () => {
    const { t, jar } = await signedIn()
    for (const bad of ['short', 'x'.repeat(257)]) {
      const res = await post(t, jar, '/account/password/change', { current_password: PASSWORD, new_password: bad })
      expect([res.status, (await res.text()).includes('The new password must be 8 to 256 characters.')]).toEqual([400, true])
    }
    expect(await signIn(t, 'ann@example.com', PASSWORD)).toBeDefined()
  })

  test('without the CSRF token: 403', async () => {
    const { t, jar } = await signedIn()
    expect((await postForm(t, '/account/password/change', { current_password: PASSWORD, new_password: NEW_PASSWORD }, jar)).status).toBe(403)
    expect(await signIn(t, 'ann@example.com', PASSWORD)).toBeDefined()
  })
})

describe('delete my account', () => {
  async function withData() {
    const s = await signedIn()
    return { ...s, ...(await appWithSettings(s.t, ['theme', 'font'])) }
  }

  test('the confirmation page names what goes; the password deletes everything at once, tokens refused, a last notice, audited', async () => {
    const { t, user, jar, token } = await withData()
    const page = await (await get(t, '/account/delete', jar)).text()
    expect(page).toContain('the access of 1 app you authorized: Notes App;')
    expect(page).toContain('2 settings saved by apps;')
    expect(page).toContain('0 passkeys, and two-step verification;')
    // A wrong password: nothing goes.
    const wrong = await post(t, jar, '/account/delete', { password: 'not my password' }, '/account/delete')
    expect([wrong.status, (await wrong.text()).includes('That is not your password. Nothing was deleted.')]).toEqual([401, true])
    expect((await t.handle('/api/oauth/userinfo', { headers: bearer(token) })).status).toBe(200)
    const res = await post(t, jar, '/account/delete', { password: PASSWORD }, '/account/delete')
    expect(res.status).toBe(200)
    expect(await res.text()).toContain('Your account and everything in it were deleted.')
    expect(res.headers.getSetCookie().some((c) => c.startsWith('lk_session=;'))).toBe(true)
    expect(await t.store.users.findUser(user.id)).toBeUndefined()
    expect((await t.handle('/api/oauth/userinfo', { headers: bearer(token) })).status).toBe(401)
    expect((await get(t, '/account', jar)).status).toBe(303)
    expect(await t.rows('SELECT user_id FROM settings WHERE user_id = ?', user.id)).toEqual([])
    expect((await outbox(t)).map((m) => [m.to, m.subject])).toEqual([['ann@example.com', 'Your account was deleted']])
    expect(await kinds(t, 'user.deleted')).toEqual([{ user_id: user.id }])
    await expect(signIn(t)).rejects.toThrow('sign-in failed: 401')
  })

  test('the last admin cannot delete themselves; another admin first, then they can', async () => {
    const { t, user, jar } = await signedIn()
    await t.store.users.setAdmin(user.id, true)
    const res = await post(t, jar, '/account/delete', { password: PASSWORD }, '/account/delete')
    expect(res.status).toBe(409)
    expect(await res.text()).toContain('You are the last admin of this server: make someone else an admin first. Nothing was deleted.')
    expect(await t.store.users.findUser(user.id)).toBeDefined()
    expect(await outbox(t)).toEqual([])
    await t.store.users.setAdmin((await addUser(t, 'bob@example.com', 'Bob')).id, true)
    expect((await post(t, jar, '/account/delete', { password: PASSWORD }, '/account/delete')).status).toBe(200)
    expect(await t.store.users.findUser(user.id)).toBeUndefined()
  })

  test('an account without a password is asked for a fresh passkey, however recent its sign-in (tests/accounts/passkey-confirm.test.ts)', async () => {
    const { t, user, jar } = await signedIn()
    await t.rows('UPDATE users SET password_hash = ? WHERE id = ?', '', user.id)
    await t.store.mfa.addPasskey({ credentialId: 'c1', userId: user.id, name: 'Laptop', publicKey: 'pk', signCount: 0, transports: [], createdAt: t.clock.now(), lastUsedAt: null })
    const page = await (await get(t, '/account/delete', jar)).text()
    expect(page).not.toContain('name="password"')
    expect(page).toContain('>Confirm with your passkey and delete</button>')
    const bare = await postForm(t, '/account/delete', { csrf_token: await csrfOf(t, '/account', jar) }, jar)
    expect(bare.status).toBe(401)
    expect(await bare.text()).toContain('Confirm with your passkey first. Nothing was deleted.')
    expect(await t.store.users.findUser(user.id)).toBeDefined()
  })

  test('an account with a connected account only (no password, no passkey) confirms with a sign-in of the last five minutes; an older one is sent to sign in again, nothing deleted', async () => {
    const { t, user, jar, again } = await connectedOnly()
    const stale = await (await get(t, '/account/delete', jar)).text()
    expect(stale).toContain('You sign in with a connected account only. To confirm, <a href="/login?reauth=1&amp;return_to=%2Faccount%2Fdelete">sign in again</a>, then come back to this page.')
    expect(stale).not.toContain('name="password"')
    expect(stale).not.toContain('>Delete my account</button>')
    expect(stale).not.toContain('data-passkey-confirm')
    const refused = await postForm(t, '/account/delete', { csrf_token: await csrfOf(t, '/account', jar) }, jar)
    expect(refused.status).toBe(401)
    expect(await refused.text()).toContain('Sign in again first: a sign-in of the last five minutes confirms it is you. Nothing was deleted.')
    expect(await t.store.users.findUser(user.id)).toBeDefined()

    // The browser that signed in again: the button, and it deletes.
    const fresh = await (await get(t, '/account/delete', again)).text()
    expect(fresh).toContain('You signed in a moment ago: that confirms it is you.')
    expect(fresh).toContain('>Delete my account</button>')
    const done = await postForm(t, '/account/delete', { csrf_token: await csrfOf(t, '/account', again) }, again)
    expect(done.status).toBe(200)
    expect(await t.store.users.findUser(user.id)).toBeUndefined()
  })

  test('a refusal speaks the reader’s language whole: a German account’s is German to its last sentence', async () => {
    const { t, user, jar } = await signedIn()
    await t.rows("UPDATE users SET password_hash = ?, locale = 'de' WHERE id = ?", '', user.id)
    t.clock.advance(5 * 60_000 + 1)
    const refused = await postForm(t, '/account/delete', { csrf_token: await csrfOf(t, '/account', jar) }, jar)
    expect(refused.status).toBe(401)
    const text = await refused.text()
    expect(text).toContain('Melden Sie sich zuerst erneut an: Eine Anmeldung aus den letzten fünf Minuten bestätigt, dass Sie es sind. Es wurde nichts gelöscht.')
    expect(text).not.toContain('Nothing was')
    // A passkey refused: the passkey's reason too.
    await t.store.mfa.addPasskey({ credentialId: 'c1', userId: user.id, name: 'Laptop', publicKey: 'pk', signCount: 0, transports: [], createdAt: t.clock.now(), lastUsedAt: null })
    const passkey = await postForm(t, '/account/delete', { csrf_token: await csrfOf(t, '/account', jar), credential: JSON.stringify({ id: 'c1', rawId: 'c1', type: 'public-key', response: {} }) }, jar)
    expect(passkey.status).toBe(401)
    expect(await passkey.text()).toContain('Diese Passkey-Anfrage ist abgelaufen oder wurde bereits verwendet. Versuchen Sie es erneut. Es wurde nichts gelöscht.')
  })

  test('without the CSRF token: 403, nothing deleted', async () => {
    const { t, user, jar } = await signedIn()
    expect((await postForm(t, '/account/delete', { password: PASSWORD }, jar)).status).toBe(403)
    expect(await t.store.users.findUser(user.id)).toBeDefined()
  })
})

/**
 * An account that signs in with a connected account only (no password, no passkey): `jar` signed
 * in more than five minutes ago, `again` a second browser signed in just now (a connected
 * account's sign-in ends as any other: a new session).
 */
async function connectedOnly() {
  const { t, user, jar } = await signedIn()
  t.clock.advance(5 * 60_000 + 1)
  const again = await signIn(t)
  await t.rows('UPDATE users SET password_hash = ? WHERE id = ?', '', user.id)
  return { t, user, jar, again }
}

describe('setting a password, for an account with a connected account only (no password, no passkey)', () => {
  test('a sign-in of the last five minutes confirms it; an older one is sent to sign in again, back to /account, and nothing is set', async () => {
    const { t, user, jar, again } = await connectedOnly()
    const stale = await (await get(t, '/account', jar)).text()
    expect(stale).toContain('You sign in with a connected account only. To set a password, <a href="/login?reauth=1&amp;return_to=%2Faccount">sign in again</a>, then come back to this page.')
    expect(stale).not.toContain('action="/account/password"')
    const refused = await post(t, jar, '/account/password', { password: NEW_PASSWORD })
    expect(refused.status).toBe(401)
    expect(await refused.text()).toContain('Sign in again first: a sign-in of the last five minutes confirms it is you. Nothing was changed.')
    expect((await t.row('SELECT password_hash FROM users WHERE id = ?', user.id))!.password_hash).toBe('')

    const fresh = await (await get(t, '/account', again)).text()
    expect(fresh).toContain('You signed in a moment ago: that confirms it is you.')
    expect(fresh).toContain('<label for="new-password">New password</label>')
    expect(fresh).toContain('<button type="submit">Set password</button>')
    expect((await post(t, again, '/account/password', { password: NEW_PASSWORD })).status).toBe(303)
    // The new password signs in.
    await signIn(t, 'ann@example.com', NEW_PASSWORD)
  })
})

describe('"Delete data" asks first', () => {
  test('/account links to a confirmation naming the app and its number of settings; afterwards a notice says what was done', async () => {
    const { t, user, jar } = await signedIn()
    const { app } = await appWithSettings(t, ['a', 'b', 'c'])
    const confirm = await get(t, `/account/data/delete?client_id=${encodeURIComponent(app.client.id)}`, jar)
    expect(confirm.status).toBe(200)
    const text = await confirm.text()
    expect(text).toContain('Delete your data in <span>Notes App</span>?')
    expect(text).toContain('3 settings that Notes App saved for you will be deleted, on every device.')
    expect(await t.rows('SELECT key FROM settings WHERE user_id = ?', user.id)).toHaveLength(3)
    const done = await post(t, jar, '/account/data/delete', { client_id: app.client.id }, `/account/data/delete?client_id=${encodeURIComponent(app.client.id)}`)
    expect(done.status).toBe(200)
    expect(await done.text()).toContain('Deleted 3 settings of Notes App.')
    expect(await t.rows('SELECT key FROM settings WHERE user_id = ?', user.id)).toEqual([])
    expect((await get(t, '/account/data/delete?client_id=nope', jar)).status).toBe(404)
    expect((await get(t, `/account/data/delete?client_id=${app.client.id}`)).status).toBe(303)
  })
})

describe('the new forms are page forms', () => {
  test('urlencoded only (415), at most 64 KiB (413), the CSRF token checked (403) — nothing changed', async () => {
    const { t, user, jar } = await signedIn()
    const csrf = await csrfOf(t, '/account', jar)
    for (const path of ['/account/profile', '/account/password/change', '/account/delete', '/login/two-step/cancel', '/login/switch']) {
      const json = await t.handle(path, { method: 'POST', headers: { cookie: cookieHeader(jar), 'content-type': 'application/json' }, body: JSON.stringify({ csrf_token: csrf, full_name: 'X', password: PASSWORD }) })
      const big = await postForm(t, path, { csrf_token: csrf, full_name: 'x'.repeat(70 * 1024), password: PASSWORD }, jar)
      const forged = await postForm(t, path, { csrf_token: 'forged', full_name: 'X', password: PASSWORD }, jar)
      expect([path, json.status, big.status, forged.status]).toEqual([path, 415, 413, 403])
    }
    expect(await t.store.users.findUser(user.id)).toMatchObject({ fullName: 'Ann Lee' })
    expect((await get(t, '/account', jar)).status).toBe(200)
  })
})
