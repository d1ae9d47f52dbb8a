import { describe, expect, test } from 'bun:test'
import { verifyClientSecret } from '../../src/oauth/clients'
import { createResource } from '../../src/oauth/resources'
import { REAUTH_AFTER_MS } from '../../src/admin/web'
import { turnOnTotp } from '../accounts/mfa-flows'
import { CALLBACK, addClient, addUser, bearer, cookieHeader, createTestApp, csrfFrom, mintToken, postForm, signIn, type TestApp } from '../helpers'

type Jar = Record<string, string>

/** An app with an admin (Ann) signed in and a second user (Bob). */
async function adminApp(env: Record<string, string> = {}) {
  const t = await createTestApp(env)
  const ann = await addUser(t, 'ann@example.com', 'Ann Admin')
  const bob = await addUser(t, 'bob@example.com', 'Bob Member')
  await t.store.users.setAdmin(ann.id, true)
  const jar = await signIn(t, 'ann@example.com')
  return { t, ann, bob, jar }
}

const get = (t: TestApp, path: string, jar?: Jar) => t.handle(path, { headers: jar ? { cookie: cookieHeader(jar) } : {} })

/** The actions that show a confirmation page first (tests/admin/confirm.test.ts); `submit` confirms them at once. */
const CONFIRMED = ['/admin/users/delete', '/admin/users/sign-out', '/admin/users/reset-two-step', '/admin/apps/delete', '/admin/apps/rotate-secret', '/admin/groups/delete', '/admin/resources/delete', '/admin/keys/rotate']

/** Posts an admin form with the CSRF token of the page it comes from (as confirmed, for an action that asks). */
async function submit(t: TestApp, jar: Jar, page: string, action: string, fields: Record<string, string | undefined>) {
  const csrf = csrfFrom(await (await get(t, page, jar)).text())
  return postForm(t, action, { csrf_token: csrf, ...(CONFIRMED.includes(action) ? { confirmed: 'yes' } : {}), ...fields }, jar)
}

async function auditKinds(t: TestApp) {
  await t.ctx.audit.flush()
  return (await t.store.audit.list({ limit: 100 })).map((e) => ({ kind: e.kind, userId: e.userId, clientId: e.clientId, detail: e.detail && JSON.parse(e.detail) }))
}

const notFound = (method: string, path: string) => ({ error: 'not_found', error_description: `no route for ${method} ${path}` })

describe('/admin: who may see it', () => {
  test('strangers and non-admins get exactly the 404 of a path no route serves — for every method and body', async () => {
    const { t, bob } = await adminApp()
    const bobJar = await signIn(t, 'bob@example.com')
    for (const jar of [undefined, bobJar]) {
      for (const path of ['/admin', '/admin/users', '/admin/apps', '/admin/audit', '/admin/nothing-here']) {
        const res = await get(t, path, jar)
        expect(res.status).toBe(404)
        expect(await res.json()).toEqual(notFound('GET', path))
      }
      for (const [method, type, body] of [
        ['POST', 'application/x-www-form-urlencoded', 'csrf_token=x&user_id=' + bob.id],
        ['POST', 'application/json', '{}'],
        ['POST', 'text/plain', 'x'.repeat(70_000)],
        ['PUT', 'application/x-www-form-urlencoded', ''],
        ['DELETE', 'application/x-www-form-urlencoded', ''],
      ] as const) {
        const res = await t.handle('/admin/users/delete', { method, headers: { 'content-type': type, ...(jar ? { cookie: cookieHeader(jar) } : {}) }, body })
        expect(res.status).toBe(404)
        expect(res.headers.get('allow')).toBeNull()
        expect(await res.json()).toEqual(notFound(method, '/admin/users/delete'))
      }
    }
    expect((await t.store.users.listUsers()).length).toBe(2)
  })

  test('an admin whose sign-in still waits for the second factor is not signed in; a demoted admin loses /admin at once', async () => {
    const { t, ann, jar } = await adminApp()
    await turnOnTotp(t, jar)
    const page = await get(t, '/login')
    const pending = await postForm(t, '/login', { email: 'ann@example.com', password: 'correct horse battery', csrf_token: csrfFrom(await page.text()) }, { lk_csrf: page.headers.getSetCookie()[0]!.split(';')[0]!.split('=')[1]! })
    expect(pending.headers.get('location')).toStartWith('/login/two-step')
    const pendingJar = { lk_session: pending.headers.getSetCookie().find((c) => c.startsWith('lk_session='))!.split(';')[0]!.split('=')[1]! }
    expect((await get(t, '/admin/users', pendingJar)).status).toBe(404)

    const admin = await signIn(t, 'bob@example.com')
    await t.store.users.setAdmin((await t.store.users.findUserByEmail('bob@example.com'))!.id, true)
    expect((await get(t, '/admin/users', admin)).status).toBe(200)
    await t.store.users.setAdmin(ann.id, false)
    await t.store.users.setAdmin((await t.store.users.findUserByEmail('bob@example.com'))!.id, false)
    expect((await get(t, '/admin/users', admin)).status).toBe(404)
  })

  test('every form needs its CSRF token, urlencoded, at most 64 KiB; nothing changes otherwise', async () => {
    const { t, bob, jar } = await adminApp()
    const cookie = cookieHeader(jar)
    const noToken = await postForm(t, '/admin/users/disable', { user_id: bob.id }, jar)
    expect(noToken.status).toBe(403)
    const wrong = await postForm(t, '/admin/users/disable', { user_id: bob.id, csrf_token: 'x'.repeat(43) }, jar)
    expect(wrong.status).toBe(403)
    const json = await t.handle('/admin/users/disable', { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body: JSON.stringify({ user_id: bob.id }) })
    expect(json.status).toBe(415)
    const big = await t.handle('/admin/users/disable', { method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=' + 'x'.repeat(70_000) })
    expect(big.status).toBe(413)
    // A token from another session does not do either.
    const bobJar = await signIn(t, 'bob@example.com')
    const other = csrfFrom(await (await get(t, '/account', bobJar)).text())
    expect((await postForm(t, '/admin/users/disable', { user_id: bob.id, csrf_token: other }, jar)).status).toBe(403)
    expect((await t.store.users.listUsers()).find((u) => u.id === bob.id)!.disabled).toBe(false)
  })

  test('pages carry the CSP and no script; output is escaped', async () => {
    const { t, jar } = await adminApp()
    await addUser(t, 'eve@example.com', '<script>alert(1)</script>')
    for (const path of ['/admin/users', '/admin/apps', '/admin/groups', '/admin/resources', '/admin/sites', '/admin/keys', '/admin/audit']) {
      const res = await get(t, path, jar)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-security-policy')).toContain("default-src 'none'")
      expect(res.headers.get('cache-control')).toBe('no-store')
      const html = await res.text()
      expect(html).not.toContain('<script')
    }
    expect(await (await get(t, '/admin/users', jar)).text()).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
  })
})

describe('/admin/users', () => {
  test('search, create, invite (link shown once when there is no mail), make admin', async () => {
    const { t, ann, jar } = await adminApp()
    const found = await (await get(t, '/admin/users?q=BOB', jar)).text()
    expect(found).toContain('bob@example.com')
    expect(found).not.toContain('ann@example.com')
    expect(await (await get(t, '/admin/users?q=%25', jar)).text()).toContain('No users match.')

    const made = await submit(t, jar, '/admin/users', '/admin/users', { email: ' Cy@Example.com ', full_name: 'Cy', password: 'a long password', admin: 'true' })
    expect(made.status).toBe(303)
    expect(made.headers.get('location')).toBe('/admin/users')
    const cy = (await t.store.users.listUsers()).find((u) => u.email === 'cy@example.com')!
    expect([cy.fullName, cy.admin, cy.emailVerified]).toEqual(['Cy', true, true])
    expect((await signIn(t, 'cy@example.com', 'a long password')).lk_session).toBeString()

    const taken = await submit(t, jar, '/admin/users', '/admin/users', { email: 'cy@example.com', full_name: 'Cy', password: 'a long password' })
    expect(taken.status).toBe(400)
    expect(await taken.text()).toContain('An account with this email address exists already.')
    const short = await submit(t, jar, '/admin/users', '/admin/users', { email: 'dee@example.com', full_name: 'Dee', password: 'short' })
    expect(short.status).toBe(400)
    expect(await short.text()).toContain('Password must be 8 to 256 characters.')

    const invited = await submit(t, jar, '/admin/users', '/admin/users/invite', { email: 'dee@example.com', full_name: 'Dee' })
    expect(invited.status).toBe(200)
    const link = /(http:\/\/localhost:3000\/reset-password\?token=[A-Za-z0-9_-]{43})/.exec(await invited.text())![1]!
    expect((await t.handle(link.slice('http://localhost:3000'.length))).status).toBe(200)
    expect(await auditKinds(t)).toEqual(
      expect.arrayContaining([
        { kind: 'user.created', userId: cy.id, clientId: null, detail: { actor: ann.id, admin: true } },
        expect.objectContaining({ kind: 'user.invited', detail: { actor: ann.id, admin: false, mailed: false } }),
      ]),
    )
  })

  test('disable ends their sessions and tokens at once; never yourself; enable lets them back', async () => {
    const { t, ann, bob, jar } = await adminApp()
    const app = await addClient(t)
    const bobJar = await signIn(t, 'bob@example.com')
    const token = await mintToken(t, app.client.id, bob.id, 'profile')
    expect((await t.handle('/api/oauth/userinfo', { headers: bearer(token) })).status).toBe(200)

    const self = await submit(t, jar, '/admin/users', '/admin/users/disable', { user_id: ann.id })
    expect(self.status).toBe(409)
    expect(await self.text()).toContain('You cannot disable your own account.')

    expect((await submit(t, jar, '/admin/users', '/admin/users/disable', { user_id: bob.id })).status).toBe(303)
    expect((await t.handle('/api/oauth/userinfo', { headers: bearer(token) })).status).toBe(401)
    expect((await get(t, '/account', bobJar)).status).toBe(303)
    expect(await (await get(t, '/admin/users', jar)).text()).toContain('Enable')

    expect((await submit(t, jar, '/admin/users', '/admin/users/enable', { user_id: bob.id })).status).toBe(303)
    expect((await signIn(t, 'bob@example.com')).lk_session).toBeString()
    const missing = await submit(t, jar, '/admin/users', '/admin/users/enable', { user_id: '00000000-0000-0000-0000-000000000000' })
    expect(missing.status).toBe(404)
    expect((await auditKinds(t)).filter((e) => e.kind === 'user.updated')).toEqual([
      { kind: 'user.updated', userId: bob.id, clientId: null, detail: { actor: ann.id, disabled: false } },
      { kind: 'user.updated', userId: bob.id, clientId: null, detail: { actor: ann.id, disabled: true } },
    ])
  })

  test('the last enabled admin can be neither demoted, disabled nor deleted; with two, one may go', async () => {
    const { t, ann, bob, jar } = await adminApp()
    const demote = await submit(t, jar, '/admin/users', '/admin/users/admin', { user_id: ann.id, admin: 'false' })
    expect(demote.status).toBe(409)
    expect(await demote.text()).toContain('This is the last enabled admin: make another admin first.')
    expect(await t.store.users.changeKeepingAnAdmin(ann.id, 'disable', t.clock.now())).toBe('last-admin')
    expect(await t.store.users.changeKeepingAnAdmin(ann.id, 'delete', t.clock.now())).toBe('last-admin')
    expect((await t.store.users.listUsers()).find((u) => u.id === ann.id)).toMatchObject({ admin: true, disabled: false })

    expect((await submit(t, jar, '/admin/users', '/admin/users/admin', { user_id: bob.id, admin: 'true' })).status).toBe(303)
    expect((await submit(t, jar, '/admin/users', '/admin/users/admin', { user_id: ann.id, admin: 'false' })).status).toBe(303)
    // Ann is no admin now: /admin is gone for her at once.
    expect((await get(t, '/admin/users', jar)).status).toBe(404)
    expect(await t.store.users.changeKeepingAnAdmin('00000000-0000-0000-0000-000000000000', 'demote', t.clock.now())).toBe('unknown')
  })

  test('two admins demoting each other at the same moment: exactly one succeeds', async () => {
    const t = await createTestApp()
    for (let round = 0; round < 10; round++) {
      const a = await addUser(t, `a${round}@example.com`, 'A')
      const b = await addUser(t, `b${round}@example.com`, 'B')
      await t.store.users.setAdmin(a.id, true)
      await t.store.users.setAdmin(b.id, true)
      const outcomes = await Promise.all([t.store.users.changeKeepingAnAdmin(a.id, 'demote', 0), t.store.users.changeKeepingAnAdmin(b.id, round % 2 ? 'disable' : 'delete', 0)])
      expect(outcomes.sort()).toEqual(['done', 'last-admin'])
      const admins = (await t.store.users.listUsers()).filter((u) => u.admin && !u.disabled)
      expect(admins.length).toBe(1)
      await t.store.users.changeKeepingAnAdmin(admins[0]!.id, 'demote', 0).then((o) => expect(o).toBe('last-admin'))
      await t.store.users.setAdmin(admins[0]!.id, false)
    }
  })

  test('sign out everywhere, reset two-step, delete', async () => {
    const { t, ann, bob, jar } = await adminApp()
    const bobJar = await signIn(t, 'bob@example.com')
    await turnOnTotp(t, bobJar)
    const again = await signIn(t, 'bob@example.com')
    expect((await submit(t, jar, '/admin/users', '/admin/users/sign-out', { user_id: bob.id })).status).toBe(303)
    expect((await get(t, '/account', again)).status).toBe(303)

    expect(await (await get(t, '/admin/users', jar)).text()).toContain('Reset two-step')
    expect((await submit(t, jar, '/admin/users', '/admin/users/reset-two-step', { user_id: bob.id })).status).toBe(303)
    expect(await t.store.mfa.findTotp(bob.id)).toBeUndefined()

    const self = await submit(t, jar, '/admin/users', '/admin/users/delete', { user_id: ann.id })
    expect(self.status).toBe(409)
    expect((await submit(t, jar, '/admin/users', '/admin/users/delete', { user_id: bob.id })).status).toBe(303)
    expect(await t.store.users.findUser(bob.id)).toBeUndefined()
    expect((await auditKinds(t)).map((e) => e.kind)).toEqual(expect.arrayContaining(['user.signed_out', 'user.two_step_reset', 'user.deleted']))
    // Signing yourself out everywhere keeps this browser.
    expect((await submit(t, jar, '/admin/users', '/admin/users/sign-out', { user_id: ann.id })).status).toBe(303)
    expect((await get(t, '/admin/users', jar)).status).toBe(200)
  })
})

describe('re-authentication for destructive actions', () => {
  test('after 15 minutes a destructive action asks for the password (fields kept); a wrong one changes nothing; a right one does it and counts as a fresh sign-in', async () => {
    const { t, bob, jar } = await adminApp()
    t.clock.advance(REAUTH_AFTER_MS + 1000)
    // Not destructive: no question.
    expect((await submit(t, jar, '/admin/groups', '/admin/groups', { name: 'family' })).status).toBe(303)

    const asked = await submit(t, jar, '/admin/users', '/admin/users/delete', { user_id: bob.id })
    expect(asked.status).toBe(200)
    const html = await asked.text()
    expect(html).toContain('Confirm it is you')
    expect(html).toContain(`name="user_id" value="${bob.id}"`)
    expect(html).toContain('name="confirm_password"')
    expect(html).toContain('/login?return_to=%2Fadmin%2Fusers&amp;reauth=1')
    expect(await t.store.users.findUser(bob.id)).toBeDefined()

    const wrong = await postForm(t, '/admin/users/delete', { csrf_token: csrfFrom(html), user_id: bob.id, confirmed: 'yes', confirm_password: 'not it at all' }, jar)
    expect(wrong.status).toBe(401)
    expect(await wrong.text()).toContain('That is not your password.')
    expect(await t.store.users.findUser(bob.id)).toBeDefined()

    const right = await postForm(t, '/admin/users/delete', { csrf_token: csrfFrom(html), user_id: bob.id, confirmed: 'yes', confirm_password: 'correct horse battery' }, jar)
    expect(right.status).toBe(303)
    expect(await t.store.users.findUser(bob.id)).toBeUndefined()
    // The session counts as signed in now: the next destructive action goes straight through.
    expect((await submit(t, jar, '/admin/groups', '/admin/groups/delete', { name: 'family' })).status).toBe(303)
  })

  test('an admin without a password is sent to sign in again (a passkey), and repeats the action', async () => {
    const { t, ann, bob, jar } = await adminApp()
    await t.rows('UPDATE users SET password_hash = ? WHERE id = ?', '', ann.id)
    t.clock.advance(REAUTH_AFTER_MS + 1000)
    const asked = await submit(t, jar, '/admin/users', '/admin/users/delete', { user_id: bob.id })
    const html = await asked.text()
    expect(html).not.toContain('name="confirm_password"')
    expect(html).toContain('Sign in again with your passkey')
    const csrf = csrfFrom(await (await get(t, '/admin/users', jar)).text())
    const guessed = await postForm(t, '/admin/users/delete', { csrf_token: csrf, user_id: bob.id, confirmed: 'yes', confirm_password: 'correct horse battery' }, jar)
    expect(guessed.status).toBe(401)
    expect(await t.store.users.findUser(bob.id)).toBeDefined()
  })
})

describe('re-authentication for every change that widens access', () => {
  /**
   * Each case: the form (the page its CSRF token comes from, its action, its fields), what the
   * database says before and after. A session older than 15 minutes gets the question and no
   * change; the same fields with the password make the change.
   */
  interface Case {
    name: string
    page: string
    action: string
    fields: Record<string, string | string[]>
    state: () => Promise<unknown>
  }

  async function world() {
    const w = await adminApp()
    const { t, bob, jar } = w
    await submit(t, jar, '/admin/groups', '/admin/groups', { name: 'family' })
    const made = await submit(t, jar, '/admin/apps', '/admin/apps', { name: 'Photos', redirect_uris: CALLBACK, require_mfa: 'true', public: 'true' })
    const clientId = new URLSearchParams(made.headers.get('location')!.split('?')[1]).get('client_id')!
    expect(made.status).toBe(303)
    const app = async () => {
      const c = (await t.store.clients.findClient(clientId))!
      return { redirectUris: c.redirectUris, skipConsent: c.skipConsent, requireMfa: c.requireMfa, groups: await t.store.groups.allowedGroups(clientId) }
    }
    const edit = `/admin/apps/edit?client_id=${clientId}`
    const appForm = { client_id: clientId, name: 'Photos', redirect_uris: CALLBACK, require_mfa: 'true' }
    const cases: Case[] = [
      { name: 'making an admin', page: '/admin/users', action: '/admin/users/admin', fields: { user_id: bob.id, admin: 'true' }, state: async () => (await listing(t, bob.email))!.admin },
      {
        name: 'creating an admin',
        page: '/admin/users',
        action: '/admin/users',
        fields: { email: 'cat@example.com', full_name: 'Cat', password: 'another horse battery', admin: 'true' },
        state: async () => (await listing(t, 'cat@example.com'))?.admin ?? 'none',
      },
      { name: 'inviting an admin', page: '/admin/users', action: '/admin/users/invite', fields: { email: 'dan@example.com', full_name: 'Dan', admin: 'true' }, state: async () => (await listing(t, 'dan@example.com'))?.admin ?? 'none' },
      { name: 'enabling a disabled account', page: '/admin/users', action: '/admin/users/enable', fields: { user_id: bob.id }, state: async () => (await listing(t, bob.email))!.disabled },
      { name: 'adding a group member', page: '/admin/groups', action: '/admin/groups/add', fields: { name: 'family', user: bob.id }, state: () => t.store.groups.groupsOf(bob.id) },
      { name: 'creating an app', page: '/admin/apps', action: '/admin/apps', fields: { name: 'Sneaky', redirect_uris: 'https://evil.example/cb', skip_consent: 'true', public: 'true' }, state: async () => (await listNames(t)).includes('Sneaky') },
      { name: "changing an app's redirect URIs", page: edit, action: '/admin/apps/update', fields: { ...appForm, redirect_uris: `${CALLBACK}\nhttps://evil.example/cb` }, state: app },
      { name: 'turning skip-consent on', page: edit, action: '/admin/apps/update', fields: { ...appForm, skip_consent: 'true' }, state: app },
      { name: "changing an app's allowed groups", page: edit, action: '/admin/apps/update', fields: { ...appForm, allowed_groups: 'family' }, state: app },
      { name: 'turning require-MFA off', page: edit, action: '/admin/apps/update', fields: { client_id: clientId, name: 'Photos', redirect_uris: CALLBACK }, state: app },
      {
        name: 'a resource with introspection rights',
        page: '/admin/resources',
        action: '/admin/resources',
        fields: { uri: 'https://mcp.example.com/', name: 'MCP', scopes: 'tools:read=Read', introspectors: (await addClient(t, { name: 'Resource server' })).client.id },
        state: async () => (await t.store.resources.findResource('https://mcp.example.com'))?.introspectors ?? 'none',
      },
    ]
    return { ...w, cases }
  }
  const listing = async (t: TestApp, email: string) => (await t.store.users.listUsers({ query: email })).find((u) => u.email === email)
  const listNames = async (t: TestApp) => (await t.store.clients.listClients()).map((c) => c.name)

  const NAMES = [
    'making an admin',
    'creating an admin',
    'inviting an admin',
    'enabling a disabled account',
    'adding a group member',
    'creating an app',
    "changing an app's redirect URIs",
    'turning skip-consent on',
    "changing an app's allowed groups",
    'turning require-MFA off',
    'a resource with introspection rights',
  ]

  test('every case is listed', async () => {
    expect((await world()).cases.map((c) => c.name)).toEqual(NAMES)
  })

  test.each(NAMES)('after 15 minutes, %s shows the re-authentication page and changes nothing; with the password it is made', async (name) => {
    const { t, bob, jar, cases } = await world()
    await submit(t, jar, '/admin/users', '/admin/users/disable', { user_id: bob.id })
    for (const c of cases.filter((c) => c.name === name)) {
      t.clock.advance(REAUTH_AFTER_MS + 1000)
      const before = await c.state()
      const asked = await postForm(t, c.action, { csrf_token: csrfFrom(await (await get(t, c.page, jar)).text()), ...c.fields }, jar)
      const html = await asked.text()
      expect({ case: c.name, status: asked.status, asks: html.includes('Confirm it is you') && html.includes('name="confirm_password"') }).toEqual({ case: c.name, status: 200, asks: true })
      expect({ case: c.name, state: await c.state() }).toEqual({ case: c.name, state: before })
      const done = await postForm(t, c.action, { csrf_token: csrfFrom(html), ...c.fields, confirm_password: 'correct horse battery' }, jar)
      expect({ case: c.name, status: done.status }).toEqual({ case: c.name, status: c.action === '/admin/users/invite' ? 200 : 303 })
      expect({ case: c.name, changed: !Bun.deepEquals(await c.state(), before) }).toEqual({ case: c.name, changed: true })
    }
  })

  test('within 15 minutes they go straight through; narrowing changes (demoting, a plain user, removing a member) never ask', async () => {
    const { t, bob, jar, cases } = await world()
    await submit(t, jar, '/admin/users', '/admin/users/disable', { user_id: bob.id })
    for (const c of cases) {
      const before = await c.state()
      const res = await submit(t, jar, c.page, c.action, c.fields as Record<string, string>)
      expect({ case: c.name, status: res.status }).toEqual({ case: c.name, status: c.action === '/admin/users/invite' ? 200 : 303 })
      expect({ case: c.name, changed: !Bun.deepEquals(await c.state(), before) }).toEqual({ case: c.name, changed: true })
    }
    t.clock.advance(REAUTH_AFTER_MS + 1000)
    expect((await submit(t, jar, '/admin/users', '/admin/users/admin', { user_id: bob.id, admin: 'false' })).status).toBe(303)
    expect((await listing(t, bob.email))!.admin).toBe(false)
    expect((await submit(t, jar, '/admin/users', '/admin/users', { email: 'eve@example.com', full_name: 'Eve', password: 'yet another battery' })).status).toBe(303)
    expect((await submit(t, jar, '/admin/groups', '/admin/groups/remove', { name: 'family', user: bob.id })).status).toBe(303)
    expect(await t.store.groups.groupsOf(bob.id)).toEqual([])
  })
})

describe('/admin/apps, groups, resources, keys', () => {
  test('machines (issue 38): grants, allowed scopes, PAR and private_key_jwt keys are created, shown and edited; checked as the CLI checks them', async () => {
    const { t, jar } = await adminApp()
    await createResource(t.store, { uri: 'https://reports.example', name: 'Reports', scopes: ['reports:read=Read reports'] }, t.clock.now())
    const made = await submit(t, jar, '/admin/apps', '/admin/apps', { name: 'Nightly job', machine_options: 'shown', grant_types: 'client_credentials', allowed_scopes: 'reports:read', redirect_uris: '' })
    expect(made.status).toBe(200)
    const clientId = /Client ID <code>([0-9a-f]{24})<\/code>/.exec(await made.text())![1]!
    expect(await t.store.clients.findClient(clientId)).toMatchObject({ grantTypes: ['client_credentials'], allowedScopes: ['reports:read'], redirectUris: [], requirePar: false, authMethod: null })
    const edit = `/admin/apps/edit?client_id=${clientId}`
    const page = await (await get(t, edit, jar)).text()
    expect(page).toContain('<input type="checkbox" name="grant_types" value="client_credentials" checked/>')
    expect(page).toContain('<input type="checkbox" name="grant_types" value="authorization_code"/>')
    expect(page).toContain('value="reports:read"')
    const jwk = { kty: 'EC', crv: 'P-256', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0', kid: 'k1' }
    const keyed = { client_id: clientId, name: 'Nightly job', machine_options: 'shown', grant_types: 'client_credentials', allowed_scopes: 'reports:read', auth_method: 'private_key_jwt', jwks: JSON.stringify({ keys: [jwk] }) }
    const refused = await submit(t, jar, edit, '/admin/apps/update', { ...keyed, allowed_scopes: 'nothing:here' })
    expect(refused.status).toBe(400)
    expect(await refused.text()).toContain('Allowed scopes: “nothing:here” is not a scope of a registered resource.')
    expect((await t.store.clients.findClient(clientId))!.authMethod).toBeNull()
    expect((await submit(t, jar, edit, '/admin/apps/update', { ...keyed, require_par: 'true' })).status).toBe(303)
    expect(await t.store.clients.findClient(clientId)).toMatchObject({ authMethod: 'private_key_jwt', jwks: JSON.stringify({ keys: [jwk] }), requirePar: true })
    expect(await (await get(t, edit, jar)).text()).toContain('<option value="private_key_jwt" selected>')
    const back = await submit(t, jar, edit, '/admin/apps/update', { ...keyed, auth_method: 'client_secret' })
    expect(back.status).toBe(400)
    expect(await back.text()).toContain('This app authenticates with its keys and has no secret')
  })

  test('create an app with every option (secret shown once, works), edit it, refuse a bad redirect URI, rotate, delete', async () => {
    const { t, ann, jar } = await adminApp()
    await submit(t, jar, '/admin/groups', '/admin/groups', { name: 'family' })
    const made = await submit(t, jar, '/admin/apps', '/admin/apps', {
      name: 'Photos',
      redirect_uris: `${CALLBACK}\r\nhttps://photos.example/cb\r\n`,
      post_logout_redirect_uris: 'https://photos.example/bye',
      skip_consent: 'true',
      require_mfa: 'true',
      allowed_groups: 'family',
      id_token_alg: 'ES256',
    })
    expect(made.status).toBe(200)
    const page = await made.text()
    const clientId = /Client ID <code>([0-9a-f]{24})<\/code>/.exec(page)![1]!
    const secret = /<code class="secret">(lk_cs_[A-Za-z0-9_-]+)<\/code>/.exec(page)![1]!
    expect(await verifyClientSecret(t.store, clientId, secret)).toMatchObject({
      name: 'Photos',
      redirectUris: [CALLBACK, 'https://photos.example/cb'],
      postLogoutRedirectUris: ['https://photos.example/bye'],
      public: false,
      skipConsent: true,
      requireMfa: true,
      idTokenAlg: 'ES256',
    })
    expect(await t.store.groups.allowedGroups(clientId)).toEqual(['family'])
    expect(await (await get(t, `/admin/apps/edit?client_id=${clientId}`, jar)).text()).toContain('<option value="ES256" selected>')

    const edit = `/admin/apps/edit?client_id=${clientId}`
    const bad = await submit(t, jar, edit, '/admin/apps/update', { client_id: clientId, name: 'Photos 2', redirect_uris: 'javascript:alert(1)' })
    expect(bad.status).toBe(400)
    expect(await bad.text()).toContain('The redirect URI “javascript:alert(1)” uses a scheme that is not allowed.')
    expect((await t.store.clients.findClient(clientId))!.name).toBe('Photos')

    const saved = await submit(t, jar, edit, '/admin/apps/update', { client_id: clientId, name: 'Photos 2', redirect_uris: 'https://photos.example/new' })
    expect(saved.status).toBe(303)
    expect(await t.store.clients.findClient(clientId)).toMatchObject({ name: 'Photos 2', redirectUris: ['https://photos.example/new'], skipConsent: false, requireMfa: false, idTokenAlg: 'RS256' })
    expect(await t.store.groups.allowedGroups(clientId)).toEqual([])

    const rotated = await submit(t, jar, edit, '/admin/apps/rotate-secret', { client_id: clientId })
    const fresh = /<code class="secret">(lk_cs_[A-Za-z0-9_-]+)<\/code>/.exec(await rotated.text())![1]!
    expect(await verifyClientSecret(t.store, clientId, secret)).toBeUndefined()
    expect(await verifyClientSecret(t.store, clientId, fresh)).toBeDefined()

    expect((await submit(t, jar, edit, '/admin/apps/delete', { client_id: clientId })).status).toBe(303)
    expect(await t.store.clients.findClient(clientId)).toBeUndefined()
    expect((await get(t, edit, jar)).status).toBe(404)
    const events = (await auditKinds(t)).filter((e) => e.clientId === clientId)
    expect(events.map((e) => e.kind)).toEqual(['client.deleted', 'client.secret_rotated', 'client.updated', 'client.created'])
    expect(events.every((e) => e.detail.actor === ann.id)).toBe(true)
    // No secret in the audit log.
    expect(JSON.stringify(await t.store.audit.list({ limit: 100 }))).not.toContain('lk_cs_')
  })

  test('a public app gets no secret page and has none to rotate', async () => {
    const { t, jar } = await adminApp()
    const made = await submit(t, jar, '/admin/apps', '/admin/apps', { name: 'CLI', redirect_uris: 'http://127.0.0.1/callback', public: 'true' })
    expect(made.status).toBe(303)
    const clientId = new URLSearchParams(made.headers.get('location')!.split('?')[1]).get('client_id')!
    expect((await t.store.clients.findClient(clientId))!.secretHash).toBeNull()
    const rotate = await submit(t, jar, `/admin/apps/edit?client_id=${clientId}`, '/admin/apps/rotate-secret', { client_id: clientId })
    expect(rotate.status).toBe(409)
  })

  test('groups: create, refuse a bad or taken name, add by email, remove, delete', async () => {
    const { t, bob, jar } = await adminApp()
    expect((await submit(t, jar, '/admin/groups', '/admin/groups', { name: 'family' })).status).toBe(303)
    const taken = await submit(t, jar, '/admin/groups', '/admin/groups', { name: 'family' })
    expect(taken.status).toBe(400)
    expect(await taken.text()).toContain('A group named “family” exists already.')
    expect((await submit(t, jar, '/admin/groups', '/admin/groups', { name: 'has space' })).status).toBe(400)
    expect((await submit(t, jar, '/admin/groups', '/admin/groups/add', { name: 'family', user: 'BOB@example.com' })).status).toBe(303)
    expect((await submit(t, jar, '/admin/groups', '/admin/groups/add', { name: 'family', user: 'nobody@example.com' })).status).toBe(404)
    expect(await t.store.groups.groupsOf(bob.id)).toEqual(['family'])
    expect((await submit(t, jar, '/admin/groups', '/admin/groups/remove', { name: 'family', user: bob.id })).status).toBe(303)
    expect(await t.store.groups.groupsOf(bob.id)).toEqual([])
    expect((await submit(t, jar, '/admin/groups', '/admin/groups/delete', { name: 'family' })).status).toBe(303)
    expect(await t.store.groups.listGroups()).toEqual([])
  })

  test('groups: deleting one an app is restricted to is refused, naming the app; removing a member revokes their tokens there at once', async () => {
    const { t, bob, jar } = await adminApp()
    const photos = await addClient(t, { name: 'Photos' })
    expect((await submit(t, jar, '/admin/groups', '/admin/groups', { name: 'family' })).status).toBe(303)
    expect((await submit(t, jar, '/admin/groups', '/admin/groups/add', { name: 'family', user: bob.email })).status).toBe(303)
    const edit = `/admin/apps/edit?client_id=${photos.client.id}`
    expect((await submit(t, jar, edit, '/admin/apps/update', { client_id: photos.client.id, name: 'Photos', redirect_uris: CALLBACK, allowed_groups: 'family' })).status).toBe(303)
    const token = await mintToken(t, photos.client.id, bob.id, 'openid')
    expect((await t.handle('/api/oauth/userinfo', { headers: bearer(token) })).status).toBe(200)

    const refused = await submit(t, jar, '/admin/groups', '/admin/groups/delete', { name: 'family' })
    expect(refused.status).toBe(409)
    expect(await refused.text()).toContain(
      `The group “family” is an allowed group of Photos (${photos.client.id}): change their allowed groups first (deleting it would open them to everyone).`,
    )
    expect((await t.store.groups.listGroups()).map((g) => g.name)).toEqual(['family'])

    expect((await submit(t, jar, '/admin/groups', '/admin/groups/remove', { name: 'family', user: bob.id })).status).toBe(303)
    expect((await t.handle('/api/oauth/userinfo', { headers: bearer(token) })).status).toBe(401)
  })

  test("apps: the introspection right (--introspect) is set on the app's form; an unknown client id is refused and changes nothing", async () => {
    const { t, jar } = await adminApp()
    const webmail = await addClient(t, { name: 'Webmail' })
    const dovecot = await addClient(t, { name: 'Dovecot' })
    const edit = `/admin/apps/edit?client_id=${dovecot.client.id}`
    const fields = { client_id: dovecot.client.id, name: 'Dovecot', redirect_uris: CALLBACK }
    const bad = await submit(t, jar, edit, '/admin/apps/update', { ...fields, name: 'Dovecot 2', introspects: 'ghost' })
    expect(bad.status).toBe(400)
    expect(await bad.text()).toContain('No app has the client ID “ghost”.')
    expect(await t.store.clients.findClient(dovecot.client.id)).toMatchObject({ name: 'Dovecot', introspects: [] })
    expect((await submit(t, jar, edit, '/admin/apps/update', { ...fields, introspects: ` ${webmail.client.id} ` })).status).toBe(303)
    expect((await t.store.clients.findClient(dovecot.client.id))!.introspects).toEqual([webmail.client.id])
    expect(await (await get(t, edit, jar)).text()).toContain(`name="introspects" type="text" maxlength="4000" value="${webmail.client.id}"`)
    expect((await submit(t, jar, edit, '/admin/apps/update', { ...fields, introspects: '*' })).status).toBe(303)
    expect((await t.store.clients.findClient(dovecot.client.id))!.introspects).toEqual(['*'])
  })

  test('resources: add with scopes, refuse bad input, delete', async () => {
    const { t, jar } = await adminApp()
    const added = await submit(t, jar, '/admin/resources', '/admin/resources', { uri: 'https://mcp.example.com/', name: 'Home MCP', scopes: 'tools:read=Read your tools\ntools:run=Run your tools', token_format: 'jwt' })
    expect(added.status).toBe(303)
    expect(await t.store.resources.findResource('https://mcp.example.com')).toEqual({
      uri: 'https://mcp.example.com',
      name: 'Home MCP',
      scopes: { 'tools:read': 'Read your tools', 'tools:run': 'Run your tools' },
      tokenFormat: 'jwt',
      introspectors: [],
    })
    const bad = await submit(t, jar, '/admin/resources', '/admin/resources', { uri: 'https://x.example', name: 'X', scopes: 'openid=mine' })
    expect(bad.status).toBe(400)
    expect(await bad.text()).toContain('is one of the server’s own scopes.')
    expect((await submit(t, jar, '/admin/resources', '/admin/resources/delete', { uri: 'https://mcp.example.com' })).status).toBe(303)
    expect(await t.store.resources.listResources()).toEqual([])
  })

  test('signing keys: rotate publishes a new key', async () => {
    const { t, jar } = await adminApp()
    const before = (await t.store.keys.listSigningKeys()).length
    expect((await submit(t, jar, '/admin/keys', '/admin/keys/rotate', {})).status).toBe(303)
    expect((await t.store.keys.listSigningKeys()).length).toBe(before + 1)
    expect((await auditKinds(t))[0]!.kind).toBe('key.rotated')
  })

  test('the audit log filters by user, app and kind', async () => {
    const { t, ann, bob, jar } = await adminApp()
    const app = await addClient(t, { name: 'Filtered' })
    await t.ctx.audit.record('token.issued', { userId: bob.id, clientId: app.client.id })
    await t.ctx.audit.record('sign_in.failed', { userId: bob.id, detail: { method: 'password' } })
    const byUser = await (await get(t, `/admin/audit?user=${bob.id}`, jar)).text()
    expect(byUser).toContain('token.issued')
    expect(byUser).toContain('sign_in.failed')
    expect(byUser).not.toContain(`<td data-label="User" class="long">${ann.id}</td>`)
    const byApp = await (await get(t, `/admin/audit?client=${app.client.id}`, jar)).text()
    expect(byApp).toContain('<td data-label="Kind">token.issued</td>')
    expect(byApp).not.toContain('<td data-label="Kind">sign_in.failed</td>')
    const byKind = await (await get(t, '/admin/audit?kind=sign_in.failed', jar)).text()
    expect(byKind).toContain('<td data-label="Kind">sign_in.failed</td>')
    expect(byKind).not.toContain('<td data-label="Kind">token.issued</td>')
    expect(byKind).toContain('<option value="sign_in.failed" selected>')
  })
})
