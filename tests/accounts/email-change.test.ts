import { beforeEach, describe, expect, test } from 'bun:test'
import { addUser, cookieHeader, createTestApp, csrfFrom, form, handleFrom, postForm, signIn, type TestApp } from '../helpers'
import { SMTP, forgot, get, outbox, outboxOf, pathOf, reset } from './mail-flows'
import { csrfOf, passwordStep, type Jar } from './mfa-flows'

/** SPEC "Change email": the new address confirms, and only the account's own session may say yes. */
let t: TestApp
let ann: Jar
let annId: string
beforeEach(async () => {
  t = await createTestApp(SMTP)
  annId = (await addUser(t)).id
  ann = await signIn(t)
})

/** "Change email" on /account, from the client address `peer`. */
async function requestChange(jar: Jar, email: string, peer = '198.51.100.1') {
  const csrf = await csrfOf(t, '/account', jar)
  return handleFrom(t, peer, '/account/email', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader(jar) },
    body: form({ csrf_token: csrf, email }),
  })
}

const emailOf = async (id: string) => (await t.store.users.findUser(id))!

/** The confirmation link's path and its token, from the newest message. */
async function changeLink() {
  const link = (await outbox(t)).at(-1)!.link!
  return { path: pathOf(link), token: new URL(link).searchParams.get('token')! }
}

test('the new address gets "Confirm your new email address", naming the current one; the link opens a page that changes nothing', async () => {
  const res = await requestChange(ann, 'ann.new@example.com')
  expect(res.status).toBe(200)
  expect(await res.text()).toContain('We sent a link to ann.new@example.com. Your email changes when you open it and confirm.')
  const [message] = await outbox(t)
  expect(message).toMatchObject({ to: 'ann.new@example.com', subject: 'Confirm your new email address' })
  expect(message!.text).toContain('Someone signed in to the account ann@example.com asked to change its email address to this one.')
  expect(message!.html).toContain('Someone signed in to the account ann@example.com asked to change its email address to this one.')
  expect(message!.link).toMatch(/^http:\/\/localhost:3000\/confirm-email\?token=[A-Za-z0-9_-]{43}$/)

  const { path, token } = await changeLink()
  const page = await get(t, path, ann)
  expect(page.status).toBe(200)
  const html = await page.text()
  expect(html).toContain('Change the email address of your account from <strong>ann@example.com</strong> to <strong>ann.new@example.com</strong>?')
  expect(html).toContain('<form method="post" action="/confirm-email">')
  expect(html).toContain(`<input type="hidden" name="token" value="${token}"/>`)
  // Opening it (as often as anyone likes) changes nothing, and tells nobody anything.
  expect((await get(t, path, ann)).status).toBe(200)
  expect(await emailOf(annId)).toMatchObject({ email: 'ann@example.com', emailVerified: false })
  expect(await outbox(t)).toHaveLength(1)

  const done = await postForm(t, '/confirm-email', { csrf_token: csrfFrom(html), token }, ann)
  expect(done.status).toBe(200)
  expect(await done.text()).toContain('Your email is now ann.new@example.com.')
  expect(await emailOf(annId)).toMatchObject({ email: 'ann.new@example.com', emailVerified: true })
  const told = (await outbox(t)).at(-1)!
  expect(told).toMatchObject({ to: 'ann@example.com', subject: 'Your email was changed' })
  expect(told.text).toContain("Your account's email address was changed from this address to ann.new@example.com.")
  // Once only.
  expect((await get(t, path, ann)).status).toBe(410)
  expect((await postForm(t, '/confirm-email', { csrf_token: csrfFrom(html), token }, ann)).status).toBe(410)
  await t.ctx.audit.flush()
  const kinds = (await t.store.audit.list({ userId: annId, limit: 10 })).map((e) => e.kind)
  expect(kinds.filter((k) => k.startsWith('email.'))).toEqual(['email.changed', 'email.change_requested'])
})

test('signed out, the link asks to sign in first and comes back to the confirm page', async () => {
  await requestChange(ann, 'ann.new@example.com')
  const { path } = await changeLink()
  const res = await get(t, path)
  expect(res.status).toBe(303)
  expect(res.headers.get('location')).toBe(`/login?return_to=${encodeURIComponent(path)}`)
  const { res: signedIn, jar } = await passwordStep(t, 'ann@example.com', 'correct horse battery', path)
  expect(signedIn.headers.get('location')).toBe(path)
  expect((await get(t, path, jar)).status).toBe(200)
  expect((await emailOf(annId)).email).toBe('ann@example.com')
})

test("another account's session can neither see the confirm form nor confirm: the attacker's change link clicked by the victim changes nothing", async () => {
  // Mallory asks to move her account to Bob's address; Bob, signed in to his own account, clicks.
  const mallory = await addUser(t, 'mallory@example.com', 'Mallory')
  const malloryJar = await signIn(t, 'mallory@example.com')
  await addUser(t, 'bob.work@example.com', 'Bob')
  const bob = await signIn(t, 'bob.work@example.com')
  await requestChange(malloryJar, 'bob@example.com')
  const { path, token } = await changeLink()
  const page = await get(t, path, bob)
  expect(page.status).toBe(403)
  expect(await page.text()).toContain('This link is for the account that asked for the change.')
  const posted = await postForm(t, '/confirm-email', { csrf_token: await csrfOf(t, '/account', bob), token }, bob)
  expect(posted.status).toBe(403)
  // Signed out: no change either.
  expect((await get(t, path)).status).toBe(303)
  expect((await postForm(t, '/confirm-email', { token })).status).toBe(403)
  expect(await emailOf(mallory.id)).toMatchObject({ email: 'mallory@example.com', emailVerified: false })
  expect(await t.store.users.findUserByEmail('bob@example.com')).toBeUndefined()
  // Without the CSRF token of the page, Mallory's own session is refused too.
  expect((await postForm(t, '/confirm-email', { token }, malloryJar)).status).toBe(403)
  expect((await emailOf(mallory.id)).email).toBe('mallory@example.com')
})

test('a verify link for another address than the account\'s (how changes were mailed before) changes nothing', async () => {
  const { newLink } = await import('../../src/accounts/email-links')
  const link = newLink(t.config, 'verify', annId, 'victim@example.com', t.clock.now())
  await t.store.mail.issueToken(link.token, null, t.clock.now())
  const res = await get(t, pathOf(link.url))
  expect(res.status).toBe(410)
  expect(await emailOf(annId)).toMatchObject({ email: 'ann@example.com', emailVerified: false })
  expect(await t.store.users.findUserByEmail('victim@example.com')).toBeUndefined()
})

test('a sign-up verify link is no change link, nor a change link a verify link', async () => {
  await requestChange(ann, 'ann.new@example.com')
  const { token } = await changeLink()
  expect((await get(t, `/verify-email?token=${token}`)).status).toBe(410)
  expect((await get(t, `/reset-password?token=${token}`)).status).toBe(410)
  expect((await emailOf(annId)).email).toBe('ann@example.com')
})

test('an address taken between the request and the confirmation: 409, nothing changes', async () => {
  await requestChange(ann, 'taken@example.com')
  const { path, token } = await changeLink()
  const csrf = csrfFrom(await (await get(t, path, ann)).text())
  await addUser(t, 'taken@example.com', 'Someone')
  const res = await postForm(t, '/confirm-email', { csrf_token: csrf, token }, ann)
  expect(res.status).toBe(409)
  expect((await emailOf(annId)).email).toBe('ann@example.com')
})

describe('the links sent to the old address stop working once the change is confirmed', () => {
  /** Confirms a change of Ann's email to `email` with her own session. */
  async function confirmChange(email: string) {
    expect((await requestChange(ann, email)).status).toBe(200)
    const { path, token } = await changeLink()
    const csrf = csrfFrom(await (await get(t, path, ann)).text())
    expect((await postForm(t, '/confirm-email', { csrf_token: csrf, token }, ann)).status).toBe(200)
  }

  test('a reset link asked for before the change is 410 afterwards, and sets no password', async () => {
    expect((await forgot(t, 'ann@example.com')).status).toBe(200)
    const resetLink = (await outboxOf(t, 1))[0]!.link!
    expect(resetLink).toContain('/reset-password?token=')
    await confirmChange('ann.new@example.com')
    expect(await t.rows('SELECT purpose FROM email_tokens WHERE user_id = ?', annId)).toEqual([])
    expect((await get(t, pathOf(resetLink))).status).toBe(410)
    expect((await reset(t, resetLink, 'the old mailbox takes over')).status).toBe(410)
    expect((await passwordStep(t, 'ann.new@example.com', 'the old mailbox takes over')).res.status).toBe(401)
    expect((await passwordStep(t, 'ann.new@example.com', 'correct horse battery')).res.status).toBe(303)
  })

  test('an invitation link sent to an address the account no longer has is 410 (the address changed another way)', async () => {
    const { inviteUser } = await import('../../src/accounts/email-links')
    const { user, url } = await inviteUser(t.store, t.config, { email: 'ivy@example.com', fullName: 'Ivy' }, t.clock.now(), false)
    // An operator moves the account to another address (apply, a database edit): the link stays, its address does not match.
    await t.rows('UPDATE users SET email = ? WHERE id = ?', 'ivy.new@example.com', user.id)
    expect((await get(t, pathOf(url))).status).toBe(410)
    const done = await reset(t, url, 'the old mailbox takes over')
    expect(done.status).toBe(410)
    expect(await done.text()).toContain('This password link was already used, has expired, or is not one of ours.')
    expect(await t.store.users.findUserByEmail('ivy.new@example.com')).toMatchObject({ id: user.id, passwordHash: '', emailVerified: false })
  })
})

describe('a change to an address another account has', () => {
  test('answers as any other (no 409 to probe with), sends nothing, and counts toward the hourly limit', async () => {
    await addUser(t, 'bob@example.com', 'Bob')
    // The page's note (the rest of /account lists recent events, one more each time).
    const note = async (res: Response) => /<p class="notice" role="status">([^<]*)<\/p>/.exec(await res.text())?.[1]
    const taken = await requestChange(ann, 'bob@example.com')
    const free = await requestChange(ann, 'nobody@example.com')
    expect([taken.status, free.status]).toEqual([200, 200])
    expect(await note(taken)).toBe('We sent a link to bob@example.com. Your email changes when you open it and confirm.')
    expect(await note(free)).toBe('We sent a link to nobody@example.com. Your email changes when you open it and confirm.')
    expect((await outbox(t)).map((m) => m.to)).toEqual(['nobody@example.com'])
    expect((await requestChange(ann, 'bob@example.com')).status).toBe(200)
    const fourth = await requestChange(ann, 'bob@example.com', '203.0.113.9')
    expect(fourth.status).toBe(429)
    expect(await fourth.text()).toContain('Too many email changes were asked for in the last hour.')
    expect((await outbox(t)).map((m) => m.to)).toEqual(['nobody@example.com'])
  })
})

describe('at most 3 change requests per hour, per account and per client address', () => {
  test('the 4th from the same account is refused, from another address too; an hour later it works', async () => {
    for (const n of [1, 2, 3]) expect((await requestChange(ann, `ann${n}@example.com`)).status).toBe(200)
    const fourth = await requestChange(ann, 'ann4@example.com', '203.0.113.9')
    expect(fourth.status).toBe(429)
    expect(await fourth.text()).toContain('Too many email changes were asked for in the last hour.')
    expect((await outbox(t)).map((m) => m.to)).toEqual(['ann1@example.com', 'ann2@example.com', 'ann3@example.com'])
    t.clock.advance(3600_000)
    expect((await requestChange(ann, 'ann4@example.com', '203.0.113.9')).status).toBe(200)
  })

  test('the 4th from the same client address is refused, whichever account asks', async () => {
    await addUser(t, 'bob@example.com', 'Bob')
    const bob = await signIn(t, 'bob@example.com')
    for (const n of [1, 2, 3]) expect((await requestChange(ann, `ann${n}@example.com`)).status).toBe(200)
    expect((await requestChange(bob, 'bob.new@example.com')).status).toBe(429)
    expect((await requestChange(bob, 'bob.new@example.com', '203.0.113.9')).status).toBe(200)
    expect(await outbox(t)).toHaveLength(4)
  })
})
