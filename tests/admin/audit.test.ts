import { describe, expect, test } from 'bun:test'
import { AuditLog } from '../../src/audit'
import { peerAddresses } from '../../src/web/client-address'
import { addPasskey, csrfOf, passkeyConfirmation, passwordStep, turnOnTotp, twoStep } from '../accounts/mfa-flows'
import { SoftAuthenticator } from '../soft-authenticator'
import { CALLBACK, ORIGIN, PASSWORD, type TestApp, addClient, addUser, authorizeAndAllow, cookieHeader, cookiesFrom, createTestApp, csrfFrom, form, handleFrom, postForm, signIn, tokenRequest } from '../helpers'

describe('the audit log', () => {
  test('sign-ins, consent, tokens and revocation are recorded with their time, user and app — never a secret', async () => {
    const t = await createTestApp()
    const app = await addClient(t, { name: 'Photos' })
    const ann = await addUser(t)
    const page = await t.handle('/login')
    const csrfCookie = page.headers.getSetCookie()[0]!.split(';')[0]!.split('=')
    await postForm(t, '/login', { email: 'ann@example.com', password: 'wrong password!', csrf_token: csrfFrom(await page.text()) }, { [csrfCookie[0]!]: csrfCookie[1]! })
    const jar = await signIn(t)
    const callback = await authorizeAndAllow(t, jar, { client_id: app.client.id, redirect_uri: CALLBACK, scope: 'email', state: 's' })
    const code = callback.searchParams.get('code')!
    const tokens = (await (await tokenRequest(t, { grant_type: 'authorization_code', code, client_id: app.client.id, client_secret: app.secret!, redirect_uri: CALLBACK })).json()) as { access_token: string; refresh_token: string }
    await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: app.client.id, client_secret: app.secret! })
    const accountPage = await (await t.handle('/account', { headers: { cookie: cookieHeader(jar) } })).text()
    await t.handle('/account/revoke', { method: 'POST', headers: { cookie: cookieHeader(jar), 'content-type': 'application/x-www-form-urlencoded' }, body: form({ client_id: app.client.id, csrf_token: csrfFrom(accountPage) }) })
    const events = (await t.store.audit.list({ limit: 100 })).reverse()
    expect(events.map((e) => [e.kind, e.userId, e.clientId])).toEqual([
      ['sign_in.failed', ann.id, null],
      ['sign_in.succeeded', ann.id, null],
      ['consent.granted', ann.id, app.client.id],
      ['token.issued', ann.id, app.client.id],
      ['token.refreshed', ann.id, app.client.id],
      ['consent.revoked', ann.id, app.client.id],
    ])
    expect(JSON.parse(events[0]!.detail!)).toEqual({ method: 'password', reason: 'credentials' })
    expect(events.every((e) => e.at === t.clock.now())).toBe(true)
    const all = JSON.stringify(await t.store.audit.list({ limit: 100 }))
    for (const secret of [PASSWORD, 'wrong password!', tokens.access_token, tokens.refresh_token, code, app.secret!]) expect(all).not.toContain(secret)
    expect(await t.store.audit.list({ userId: ann.id, kind: 'token.issued', limit: 10 })).toHaveLength(1)
    expect(await t.store.audit.list({ clientId: app.client.id, limit: 10 })).toHaveLength(4)
  })

  test('/account shows the user’s recent activity; AUDIT_DAYS bounds what is kept', async () => {
    const t = await createTestApp({ AUDIT_DAYS: '30' })
    expect(t.config.auditDays).toBe(30)
    const ann = await addUser(t)
    const jar = await signIn(t)
    const html = await (await t.handle('/account', { headers: { cookie: cookieHeader(jar) } })).text()
    expect(html).toContain('<h2>Recent activity</h2>')
    expect(html).toMatch(/Signed in<\/span><span class="muted"> \(password\)<\/span>/)
    // A second sign-in 20 days later; 11 days after it, the first is 31 days old, the second 11.
    t.clock.advance(20 * 86_400_000)
    await signIn(t)
    await t.ctx.audit.flush()
    t.clock.advance(11 * 86_400_000)
    const windows = { usedCodes: 0, throttle: 0, refreshGrace: 0, retiredKeys: 0, mail: 0, settingChanges: 0, audit: t.config.auditDays * 86_400_000 }
    expect(await t.store.purgeExpired(t.clock.now(), windows)).toBeGreaterThan(0)
    const kept = await t.store.audit.list({ limit: 10 })
    expect(kept.map((e) => [e.kind, e.userId, t.clock.now() - e.at])).toEqual([['sign_in.succeeded', ann.id, 11 * 86_400_000]])
  })

  test('events recorded in the same turn are written together, in order', async () => {
    const t = await createTestApp()
    const log = new AuditLog({ store: t.store, clock: t.clock, log: t.ctx.log, config: t.config })
    const written = [0, 1, 2].map((i) => log.record('test.event', { detail: { i } }))
    expect(written[1]).toBe(written[0]!)
    await written[2]
    expect((await t.store.audit.list({ kind: 'test.event', limit: 10 })).map((e) => JSON.parse(e.detail!).i)).toEqual([2, 1, 0])
  })
})

describe('the audit writer never throws', () => {
  test('a batch written after its store closed is logged, not an unhandled rejection', async () => {
    const t = await createTestApp()
    const warnings: string[] = []
    const log = { ...t.ctx.log, warn: (msg: string) => void warnings.push(msg) }
    const writer = new AuditLog({ store: t.store, clock: t.clock, log, config: t.config })
    await t.store.close()
    // Its caller hears of it (its answer is an error, not a change without its event); flush() never throws.
    expect(writer.record('test.event')).rejects.toThrow()
    await writer.flush()
    expect(warnings).toEqual(['audit write failed'])
  })
})

describe('account changes are in the audit log', () => {
  test('setting a password on /account is recorded, and shown in the user’s recent activity', async () => {
    const t = await createTestApp()
    const { insertUser } = await import('../../src/accounts/users')
    const { createSession } = await import('../../src/accounts/sessions')
    const user = await insertUser(t.store, { email: 'pk@example.com', fullName: 'Passkey Only', avatarUrl: null, passwordHash: '' }, t.clock.now())
    const jar = { lk_session: (await createSession(t.store, user.id, t.clock.now(), { amr: ['hwk', 'user'] }))! }
    // Setting a password takes a fresh passkey.
    const key = await SoftAuthenticator.create()
    expect((await addPasskey(t, jar, key)).status).toBe(303)
    const { csrf, credential } = await passkeyConfirmation(t, jar, key)
    const res = await t.handle('/account/password', { method: 'POST', headers: { cookie: cookieHeader(jar), 'content-type': 'application/x-www-form-urlencoded' }, body: form({ password: 'a brand new password', csrf_token: csrf, credential }) })
    expect(res.status).toBe(303)
    expect((await t.store.audit.list({ userId: user.id, limit: 10 })).map((e) => e.kind)).toEqual(['password.changed', 'passkey.added'])
    expect(await (await t.handle('/account', { headers: { cookie: cookieHeader(jar) } })).text()).toContain('— <span>Set or changed the password</span>')
  })
})

/** A failed sign-in event counts one, or the failures it folds. */
const failures = (events: Array<{ detail: string | null }>) => events.reduce((sum, e) => sum + (JSON.parse(e.detail!).folded ?? 1), 0)

describe('failed sign-ins cannot flood the log (issue 33)', () => {
  test('200 malformed sign-ins from one address: ten events, then one with the count of the rest', async () => {
    const t = await createTestApp()
    const page = await handleFrom(t, '203.0.113.7', '/login')
    const jar = cookiesFrom(page)
    const fields = { email: 'not an email', password: 'x', csrf_token: csrfFrom(await page.text()) }
    const post = (peer: string) => handleFrom(t, peer, '/login', { method: 'POST', headers: { cookie: cookieHeader(jar), 'content-type': 'application/x-www-form-urlencoded' }, body: form(fields) })
    for (let i = 0; i < 200; i++) expect((await post('203.0.113.7')).status).toBe(401)
    expect((await post('198.51.100.1')).status).toBe(401)
    await t.ctx.audit.flush()
    const events = (await t.store.audit.list({ kind: 'sign_in.failed', limit: 1000 })).reverse()
    const flood = events.filter((e) => e.address === '203.0.113.7')
    expect(flood).toHaveLength(11)
    expect(failures(flood)).toBe(200)
    expect(flood.slice(0, 10).every((e) => JSON.parse(e.detail!).reason === 'malformed')).toBe(true)
    expect(JSON.parse(flood[10]!.detail!)).toEqual({ folded: 190 })
    // Another address has its own ten a minute.
    expect(events.filter((e) => e.address === '198.51.100.1').map((e) => JSON.parse(e.detail!))).toEqual([{ method: 'password', reason: 'malformed' }])
  })

  test('the count is written when the address’s minute is over; the addresses kept are bounded', async () => {
    const t = await createTestApp()
    const log = new AuditLog({ store: t.store, clock: t.clock, log: t.ctx.log, config: t.config }, 2)
    const from = (peer: string) => {
      const request = new Request(ORIGIN + '/login', { method: 'POST' })
      peerAddresses.set(request, peer)
      return log.record('sign_in.failed', { request, detail: { method: 'password' } })
    }
    const of = async (address: string) => (await t.store.audit.list({ kind: 'sign_in.failed', limit: 1000 })).filter((e) => e.address === address)
    for (let i = 0; i < 15; i++) await from('192.0.2.1')
    expect(await of('192.0.2.1')).toHaveLength(10)
    t.clock.advance(60_000)
    // The next minute's first failure writes the last minute's five, no flush needed.
    await from('192.0.2.1')
    expect((await of('192.0.2.1')).map((e) => JSON.parse(e.detail!))).toContainEqual({ folded: 5 })
    expect(failures(await of('192.0.2.1'))).toBe(16)
    for (let i = 0; i < 12; i++) await from('192.0.2.2')
    expect(failures(await of('192.0.2.2'))).toBe(10)
    // Two addresses kept at most: a third pushes out the oldest (192.0.2.1), then 192.0.2.2, whose two folded are written.
    await from('192.0.2.3')
    await from('192.0.2.4')
    expect(failures(await of('192.0.2.2'))).toBe(12)
  })
})

describe('an event is committed before its change is answered (issue 33)', () => {
  const newest = async (t: TestApp) => (await t.store.audit.list({ limit: 1 }))[0]
  const kindOf = async (t: TestApp) => (await newest(t))?.kind

  test('sign-ins, consent, tokens, account and admin changes: in the store as soon as they are answered', async () => {
    const t = await createTestApp()
    const app = await addClient(t, { name: 'Photos' })
    const ann = await addUser(t)
    expect((await passwordStep(t, 'ann@example.com', 'wrong password!')).res.status).toBe(401)
    expect(await kindOf(t)).toBe('sign_in.failed')
    const jar = await signIn(t)
    expect(await kindOf(t)).toBe('sign_in.succeeded')
    const callback = await authorizeAndAllow(t, jar, { client_id: app.client.id, redirect_uri: CALLBACK, scope: 'email', state: 's' })
    expect(await kindOf(t)).toBe('consent.granted')
    const exchanged = await tokenRequest(t, { grant_type: 'authorization_code', code: callback.searchParams.get('code')!, client_id: app.client.id, client_secret: app.secret!, redirect_uri: CALLBACK })
    expect(exchanged.status).toBe(200)
    // Written in the exchange's own transaction, with the code's user and scope.
    const issued = (await newest(t))!
    expect([issued.kind, issued.userId, issued.clientId, JSON.parse(issued.detail!)]).toEqual(['token.issued', ann.id, app.client.id, { grant: 'authorization_code', scope: 'email' }])
    const { refresh_token } = (await exchanged.json()) as { refresh_token: string }
    expect((await tokenRequest(t, { grant_type: 'refresh_token', refresh_token, client_id: app.client.id, client_secret: app.secret! })).status).toBe(200)
    expect(await newest(t)).toMatchObject({ kind: 'token.refreshed', userId: ann.id, clientId: app.client.id, detail: null })
    const revoked = await postForm(t, '/account/revoke', { client_id: app.client.id, csrf_token: await csrfOf(t, '/account', jar) }, jar)
    expect(revoked.status).toBe(303)
    expect(await kindOf(t)).toBe('consent.revoked')
  })

  test('an admin’s change', async () => {
    const t = await createTestApp()
    const admin = await addUser(t, 'root@example.com', 'Root')
    await t.store.users.setAdmin(admin.id, true)
    const jar = await signIn(t, 'root@example.com')
    const res = await postForm(t, '/admin/groups', { name: 'family', csrf_token: await csrfOf(t, '/admin/groups', jar) }, jar)
    expect(res.status).toBe(303)
    expect(await newest(t)).toMatchObject({ kind: 'group.created', detail: JSON.stringify({ actor: admin.id, group: 'family' }) })
  })
})

describe('what the audit log missed (issue 33)', () => {
  test('a password accepted before a wrong code is no sign-in; the code decides', async () => {
    const t = await createTestApp()
    const ann = await addUser(t)
    const { totp } = await turnOnTotp(t, await signIn(t))
    t.clock.advance(30_000) // the confirming code is used up
    const before = (await t.store.audit.list({ limit: 100 })).length
    const { res, jar } = await passwordStep(t, 'ann@example.com', PASSWORD)
    expect(res.status).toBe(303)
    expect((await twoStep(t, jar, { code: '000000' === totp.generate({ timestamp: t.clock.now() }) ? '111111' : '000000' })).status).toBe(401)
    const kinds = async () => (await t.store.audit.list({ limit: 100 })).slice(0, -before).map((e) => [e.kind, e.userId, JSON.parse(e.detail!).method])
    expect(await kinds()).toEqual([['sign_in.failed', ann.id, 'two_step']])
    expect((await twoStep(t, jar, { code: totp.generate({ timestamp: t.clock.now() }) })).status).toBe(303)
    expect((await kinds())[0]).toEqual(['sign_in.succeeded', ann.id, 'two_step'])
  })

  test('new recovery codes are recorded (never the codes)', async () => {
    const t = await createTestApp()
    const ann = await addUser(t)
    const jar = await signIn(t)
    await turnOnTotp(t, jar)
    const res = await postForm(t, '/account/two-step/recovery-codes', { csrf_token: await csrfOf(t, '/account', jar) }, jar)
    expect(res.status).toBe(200)
    const codes = [...(await res.text()).matchAll(/<code>([a-z2-7-]{19})<\/code>/g)].map((m) => m[1]!)
    const [event] = await t.store.audit.list({ limit: 1 })
    expect(event).toMatchObject({ kind: 'recovery_codes.regenerated', userId: ann.id })
    expect(JSON.stringify(await t.store.audit.list({ limit: 100 }))).not.toContain(codes[0]!)
    expect(await (await t.handle('/account', { headers: { cookie: cookieHeader(jar) } })).text()).toContain('Made new recovery codes')
  })
})
