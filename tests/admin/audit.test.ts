import { describe, expect, test } from 'bun:test'
import { AuditLog } from '../../src/audit'
import { CALLBACK, PASSWORD, addClient, addUser, authorizeAndAllow, cookieHeader, createTestApp, csrfFrom, form, postForm, signIn, tokenRequest } from '../helpers'

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
    await t.ctx.audit.flush()
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

  test('events are written in batches, and the queue is bounded', async () => {
    const t = await createTestApp()
    const log = new AuditLog({ store: t.store, clock: t.clock, log: t.ctx.log, config: t.config }, 3, 60_000)
    for (let i = 0; i < 5; i++) log.record('test.event', { detail: { i } })
    expect(log.dropped).toBe(2)
    await log.flush()
    expect((await t.store.audit.list({ kind: 'test.event', limit: 10 })).map((e) => JSON.parse(e.detail!).i)).toEqual([4, 3, 2])
  })
})

describe('the audit writer never throws', () => {
  test('a batch written after its store closed is logged, not an unhandled rejection', async () => {
    const t = await createTestApp()
    const warnings: string[] = []
    const log = { ...t.ctx.log, warn: (msg: string) => void warnings.push(msg) }
    const writer = new AuditLog({ store: t.store, clock: t.clock, log, config: t.config }, 10, 60_000)
    writer.record('test.event')
    await t.store.close()
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
    const page = await (await t.handle('/account', { headers: { cookie: cookieHeader(jar) } })).text()
    const res = await t.handle('/account/password', { method: 'POST', headers: { cookie: cookieHeader(jar), 'content-type': 'application/x-www-form-urlencoded' }, body: form({ password: 'a brand new password', csrf_token: csrfFrom(page) }) })
    expect(res.status).toBe(303)
    await t.ctx.audit.flush()
    expect((await t.store.audit.list({ userId: user.id, limit: 10 })).map((e) => e.kind)).toEqual(['password.changed'])
    expect(await (await t.handle('/account', { headers: { cookie: cookieHeader(jar) } })).text()).toContain('— <span>Set or changed the password</span>')
  })
})
