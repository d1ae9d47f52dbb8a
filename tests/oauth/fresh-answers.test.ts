import { beforeEach, describe, expect, test } from 'bun:test'
import { planApply } from '../../src/admin/declarative'
import type { Change } from '../../src/db/store'
import { randomToken, sha256 } from '../../src/lib/crypto'
import { testEngine } from '../store'
import { SMTP } from '../accounts/mail-flows'
import { CALLBACK, addClient, addUser, authorizeAndAllow, bearer, cookieHeader, createTestApp, csrfFrom, form, signIn, tokenRequest, tokenThroughFlow, type TestApp } from '../helpers'

// SPEC "Bearer-protected API": answers describe the user as they are now — whatever tokens were
// cached before (issue 33, "stale answers"). Every change goes through the store, which tells the
// caches through the change feed once it committed.

let t: TestApp
let client: Awaited<ReturnType<typeof addClient>>
let userId: string

beforeEach(async () => {
  t = await createTestApp()
  client = await addClient(t)
  userId = (await addUser(t)).id
})

async function userinfo(token: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await t.handle('/api/oauth/userinfo', { headers: bearer(token) })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

async function introspect(token: string): Promise<Record<string, unknown>> {
  const res = await t.handle('/api/oauth/introspect', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${btoa(`${client.client.id}:${client.secret}`)}` },
    body: new URLSearchParams({ token }),
  })
  expect(res.status).toBe(200)
  return (await res.json()) as Record<string, unknown>
}

/** A token validated once, so it sits in the token cache with the user as they were. */
async function cachedToken(): Promise<string> {
  const token = await tokenThroughFlow(t, client, 'openid profile email')
  expect((await userinfo(token)).body).toMatchObject({ full_name: 'Ann Lee', email: 'ann@example.com', email_verified: false })
  expect(t.ctx.tokens.cachedCount).toBeGreaterThan(0)
  return token
}

/** A verify link for `email`, as the account pages mail it. */
async function verifyLink(email: string): Promise<string> {
  const raw = randomToken()
  await t.store.mail.issueToken({ tokenHash: sha256(raw), userId, purpose: 'verify', email, expiresAt: t.clock.now() + 3600_000 }, null, t.clock.now())
  return `/verify-email?token=${raw}`
}

describe('userinfo answers the user as they are now, for tokens cached before the change and issued after it', () => {
  test('a name change through the store (what apply and /admin call)', async () => {
    const before = await cachedToken()
    expect(await t.store.users.setFullName(userId, 'Ann Changed')).toBe(true)
    expect((await userinfo(before)).body).toMatchObject({ full_name: 'Ann Changed', name: 'Ann Changed' })
    const after = await tokenThroughFlow(t, client, 'openid profile email')
    expect((await userinfo(after)).body).toMatchObject({ full_name: 'Ann Changed', name: 'Ann Changed' })
    expect((await userinfo(before)).body).toMatchObject({ full_name: 'Ann Changed' })
  })

  test('a name change through apply', async () => {
    const before = await cachedToken()
    const plan = await planApply(t.store, t.config, { users: [{ email: 'ann@example.com', full_name: 'Ann Applied', admin: false }] }, { prune: false, baseDir: '/tmp', now: t.clock.now() })
    expect(plan.lines).toEqual(['~ user ann@example.com: full_name'])
    await plan.apply()
    expect((await userinfo(before)).body).toMatchObject({ full_name: 'Ann Applied' })
  })

  test('an email verified through its link', async () => {
    const before = await cachedToken()
    // The link's page asks; "Confirm", posted by the account's own session, verifies (SPEC "Verify").
    const link = await verifyLink('ann@example.com')
    const jar = await signIn(t)
    const page = await (await t.handle(link, { headers: { cookie: cookieHeader(jar) } })).text()
    const confirmed = await t.handle('/verify-email', {
      method: 'POST',
      headers: { cookie: cookieHeader(jar), 'content-type': 'application/x-www-form-urlencoded' },
      body: form({ csrf_token: csrfFrom(page), token: new URLSearchParams(link.split('?')[1]).get('token')! }),
    })
    expect(confirmed.status).toBe(200)
    expect((await userinfo(before)).body).toEqual(expect.objectContaining({ email: 'ann@example.com', email_verified: true }))
    const after = await tokenThroughFlow(t, client, 'openid profile email')
    expect((await userinfo(after)).body).toEqual(expect.objectContaining({ email_verified: true }))
  })

  test('an email changed through its link', async () => {
    // Changing an email needs mail set up (the link goes to the new address).
    t = await createTestApp(SMTP)
    client = await addClient(t)
    userId = (await addUser(t)).id
    const before = await cachedToken()
    // A change link is confirmed by a POST from the account's own session (SPEC "Change email").
    const raw = randomToken()
    await t.store.mail.issueToken({ tokenHash: sha256(raw), userId, purpose: 'change', email: 'ann.new@example.com', expiresAt: t.clock.now() + 3600_000 }, null, t.clock.now())
    const jar = await signIn(t)
    const page = await (await t.handle(`/confirm-email?token=${raw}`, { headers: { cookie: cookieHeader(jar) } })).text()
    const confirmed = await t.handle('/confirm-email', {
      method: 'POST',
      headers: { cookie: cookieHeader(jar), 'content-type': 'application/x-www-form-urlencoded' },
      body: form({ csrf_token: csrfFrom(page), token: raw }),
    })
    expect(confirmed.status).toBe(200)
    expect((await userinfo(before)).body).toEqual(expect.objectContaining({ email: 'ann.new@example.com', email_verified: true }))
    const after = await tokenThroughFlow(t, client, 'openid profile email', 'ann.new@example.com')
    expect((await userinfo(after)).body).toEqual(expect.objectContaining({ email: 'ann.new@example.com' }))
  })

  test('the next id_token (a refresh) names the user as they are now', async () => {
    const callback = await authorizeAndAllow(t, await signIn(t), { client_id: client.client.id, redirect_uri: CALLBACK, scope: 'openid profile', state: 's' })
    const exchange = { grant_type: 'authorization_code', code: callback.searchParams.get('code')!, client_id: client.client.id, client_secret: client.secret, redirect_uri: CALLBACK }
    const first = (await (await tokenRequest(t, exchange)).json()) as { access_token: string; refresh_token: string }
    expect((await userinfo(first.access_token)).body).toMatchObject({ name: 'Ann Lee' })
    await t.store.users.setFullName(userId, 'Ann Renamed')
    const refreshed = (await (await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: client.client.id, client_secret: client.secret })).json()) as { id_token: string }
    expect(JSON.parse(Buffer.from(refreshed.id_token.split('.')[1]!, 'base64url').toString()).name).toBe('Ann Renamed')
    expect((await userinfo(first.access_token)).body).toMatchObject({ name: 'Ann Renamed' })
  })

  test('disabling the user on /admin ends userinfo and introspection for a token cached before', async () => {
    const admin = await addUser(t, 'root@example.com', 'Root')
    await t.store.users.setAdmin(admin.id, true)
    const before = await cachedToken()
    expect(await introspect(before)).toMatchObject({ active: true, sub: userId })
    const jar = await signIn(t, 'root@example.com')
    const page = await t.handle('/admin/users', { headers: { cookie: cookieHeader(jar) } })
    const res = await t.handle('/admin/users/disable', {
      method: 'POST',
      headers: { cookie: cookieHeader(jar), 'content-type': 'application/x-www-form-urlencoded' },
      body: form({ user_id: userId, csrf_token: csrfFrom(await page.text()) }),
    })
    expect(res.status).toBe(303)
    expect((await userinfo(before)).status).toBe(401)
    expect(await introspect(before)).toEqual({ active: false })
  })
})

describe('the store tells the change feed what each write changed, once it committed', () => {
  /**
   * What this process's caches are told while `write` runs: exactly `expected` (nothing for
   * undefined). On PostgreSQL the triggers' NOTIFY of this write and of earlier ones also comes
   * back, in its own time (the cluster e2e test covers it): there, what the store emits is recorded.
   */
  async function expectTold(write: () => Promise<unknown>, expected: Change | undefined): Promise<void> {
    const seen: Array<Change | undefined> = []
    const store = t.store as unknown as { emit(change: Change): void }
    const emit = store.emit
    if (testEngine === 'postgres')
      store.emit = (change) => {
        seen.push(change)
        emit.call(store, change)
      }
    let on = testEngine === 'sqlite'
    t.store.changes.onChange((change) => {
      if (on) seen.push(change)
    })
    try {
      await write()
    } finally {
      on = false
      store.emit = emit
    }
    expect(seen).toEqual(expected ? [expected] : [])
  }

  test('name, admin flag, enabling: the user, and nothing else', async () => {
    await expectTold(() => t.store.users.setFullName(userId, 'B'), { users: [userId] })
    await expectTold(() => t.store.users.setAdmin(userId, true), { users: [userId] })
    await expectTold(() => t.store.users.setDisabled(userId, false, t.clock.now()), { users: [userId] })
    // Nothing changed, nothing told.
    await expectTold(() => t.store.users.setFullName('no-such-user', 'B'), undefined)
  })

  test('disabling: the user and the tokens it deleted; one revocation: that token', async () => {
    const token = await tokenThroughFlow(t, client, 'email')
    const id = parseInt(token.slice('lk_at_'.length).split('.')[0]!, 36)
    const other = await tokenThroughFlow(t, client, 'email')
    const otherId = parseInt(other.slice('lk_at_'.length).split('.')[0]!, 36)
    await expectTold(() => t.store.tokens.deleteToken(otherId), { tokens: [otherId] })
    await expectTold(() => t.store.users.setDisabled(userId, true, t.clock.now()), { users: [userId], tokens: [id] })
  })

  test('a write that rolls back tells nothing', async () => {
    await addUser(t, 'bob@example.com', 'Bob')
    const raw = randomToken()
    await t.store.mail.issueToken({ tokenHash: sha256(raw), userId, purpose: 'verify', email: 'bob@example.com', expiresAt: t.clock.now() + 3600_000 }, null, t.clock.now())
    // The address is taken: the change is refused and rolled back.
    await expectTold(() => t.store.mail.useToken(sha256(raw), ['verify'], t.clock.now(), (token) => ({ email: token.email, emailVerified: true })), undefined)
  })
})
