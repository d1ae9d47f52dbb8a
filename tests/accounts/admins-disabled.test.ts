import { describe, expect, test } from 'bun:test'
import { setUserDisabled } from '../../src/accounts/users'
import { createSession } from '../../src/accounts/sessions'
import { addClient, addUser, bearer, cookieHeader, createTestApp, csrfFrom, mintToken, postForm, signIn } from '../helpers'

describe('admins and disabled accounts', () => {
  test('listUsers says who is an admin and who is disabled; setAdmin flips it', async () => {
    const t = await createTestApp()
    const ann = await addUser(t, 'ann@example.com', 'Ann')
    expect(await t.store.users.setAdmin(ann.id, true)).toBe(true)
    expect(await t.store.users.setAdmin('00000000-0000-0000-0000-000000000000', true)).toBe(false)
    expect((await t.store.users.listUsers()).map((u) => [u.email, u.admin, u.disabled])).toEqual([['ann@example.com', true, false]])
    await t.store.users.setAdmin(ann.id, false)
    expect((await t.store.users.listUsers())[0]!.admin).toBe(false)
  })

  test('disabling ends every session and token at once and refuses sign-in; enabling lets them back', async () => {
    const t = await createTestApp()
    const app = await addClient(t)
    const ann = await addUser(t, 'ann@example.com', 'Ann')
    const jar = await signIn(t, 'ann@example.com')
    const token = await mintToken(t, app.client.id, ann.id, 'profile settings:read')
    expect((await t.handle('/api/oauth/userinfo', { headers: bearer(token) })).status).toBe(200) // cached now
    expect(await setUserDisabled(t.ctx, ann.id, true)).toBe(true)
    expect((await t.handle('/api/oauth/userinfo', { headers: bearer(token) })).status).toBe(401)
    expect((await t.handle('/account', { headers: { cookie: cookieHeader(jar) } })).status).toBe(303)
    for (const table of ['sessions', 'access_tokens', 'refresh_tokens', 'refresh_families', 'auth_codes']) expect(await t.rows(`SELECT user_id FROM ${table}`)).toEqual([])
    expect((await t.store.users.listUsers())[0]!.disabled).toBe(true)

    const page = await t.handle('/login')
    const res = await postForm(t, '/login', { email: 'ann@example.com', password: 'correct horse battery', csrf_token: csrfFrom(await page.text()) }, { lk_csrf: page.headers.getSetCookie()[0]!.split(';')[0]!.split('=')[1]! })
    expect(res.status).toBe(403)
    expect(await res.text()).toContain('This account is disabled. Ask your administrator.')
    expect(await createSession(t.store, ann.id, t.clock.now(), { amr: ['pwd'] })).toBeUndefined()

    await setUserDisabled(t.ctx, ann.id, false)
    expect((await signIn(t, 'ann@example.com')).lk_session).toBeString()
  })

  test('a sign-in racing the disabling never leaves a session behind', async () => {
    const t = await createTestApp()
    const ann = await addUser(t, 'ann@example.com', 'Ann')
    for (let round = 0; round < 20; round++) {
      await setUserDisabled(t.ctx, ann.id, false)
      const sessions = Array.from({ length: 5 }, () => createSession(t.store, ann.id, t.clock.now(), { amr: ['pwd'] }))
      await Promise.all([...sessions, setUserDisabled(t.ctx, ann.id, true)])
      expect(await t.rows('SELECT user_id FROM sessions')).toEqual([])
    }
  })
})
