import { beforeEach, describe, expect, test } from 'bun:test'
import { GroupInputError, createGroup, existingGroups, userByRef } from '../../src/accounts/groups'
import {
  CALLBACK,
  ORIGIN,
  addClient,
  addUser,
  authorizeAndAllow,
  authorizePath,
  cookieHeader,
  createTestApp,
  csrfFrom,
  postForm,
  signIn,
  tokenRequest,
  type TestApp,
} from '../helpers'

let t: TestApp
let app: Awaited<ReturnType<typeof addClient>>
let ann: Awaited<ReturnType<typeof addUser>>
let bob: Awaited<ReturnType<typeof addUser>>

beforeEach(async () => {
  t = await createTestApp()
  app = await addClient(t, { name: 'Photos' })
  ann = await addUser(t, 'ann@example.com', 'Ann')
  bob = await addUser(t, 'bob@example.com', 'Bob')
})

const claims = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>

describe('groups', () => {
  test('create (names checked, unique), add and remove members by id or email, list with members by email, delete', async () => {
    await createGroup(t.store, 'family', t.clock.now())
    await createGroup(t.store, 'Admins.2', t.clock.now())
    await expect(createGroup(t.store, 'family', t.clock.now())).rejects.toThrow('a group named "family" exists already')
    for (const bad of ['', '-x', 'has space', 'x'.repeat(65), 'ünï', 'a/b']) await expect(createGroup(t.store, bad, t.clock.now())).rejects.toBeInstanceOf(GroupInputError)
    expect((await userByRef(t.store, 'ANN@example.com'))?.id).toBe(ann.id)
    expect((await userByRef(t.store, bob.id))?.email).toBe('bob@example.com')
    expect(await userByRef(t.store, 'nobody@example.com')).toBeUndefined()
    expect(await t.store.groups.addMember('family', bob.id)).toBe(true)
    expect(await t.store.groups.addMember('family', ann.id)).toBe(true)
    expect(await t.store.groups.addMember('family', ann.id)).toBe(true) // twice is fine
    expect(await t.store.groups.addMember('nope', ann.id)).toBe(false)
    expect(await t.store.groups.addMember('family', '00000000-0000-0000-0000-000000000000')).toBe(false)
    expect(await t.store.groups.listGroups()).toEqual([
      { name: 'Admins.2', members: [] },
      { name: 'family', members: [{ id: ann.id, email: 'ann@example.com' }, { id: bob.id, email: 'bob@example.com' }] },
    ])
    expect(await t.store.groups.groupsOf(ann.id)).toEqual(['family'])
    expect(await t.store.groups.removeMember('family', ann.id)).toBe(true)
    expect(await t.store.groups.removeMember('family', ann.id)).toBe(false)
    expect(await t.store.groups.deleteGroup('family')).toEqual({ deleted: true, restricts: [] })
    expect(await t.store.groups.deleteGroup('family')).toEqual({ deleted: false, restricts: [] })
    expect(await t.store.groups.groupsOf(bob.id)).toEqual([])
  })

  test('allowed groups must exist; deleting a user drops their memberships', async () => {
    await createGroup(t.store, 'family', t.clock.now())
    await expect(existingGroups(t.store, ['family', 'ghosts'])).rejects.toThrow('no group named "ghosts"')
    await t.store.groups.setAllowedGroups(app.client.id, await existingGroups(t.store, ['family', 'family']))
    expect(await t.store.groups.allowedGroups(app.client.id)).toEqual(['family'])
    await t.store.groups.addMember('family', ann.id)
    expect(await t.store.users.deleteUser(ann.id)).toBe(true)
    expect(await t.store.groups.listGroups()).toEqual([{ name: 'family', members: [] }])
  })
})

describe('--allowed-group: only members may authorize the app', () => {
  beforeEach(async () => {
    await createGroup(t.store, 'family', t.clock.now())
    await t.store.groups.addMember('family', ann.id)
    await t.store.groups.setAllowedGroups(app.client.id, ['family'])
  })
  const params = { client_id: '', redirect_uri: CALLBACK, scope: 'openid', state: 'st' }

  test('a member gets the consent page; a non-member gets "Access denied" whose link delivers error=access_denied with state and iss', async () => {
    const annJar = await signIn(t, 'ann@example.com')
    expect((await t.handle(authorizePath({ ...params, client_id: app.client.id }), { headers: { cookie: cookieHeader(annJar) } })).status).toBe(200)
    const bobJar = await signIn(t, 'bob@example.com')
    const page = await t.handle(authorizePath({ ...params, client_id: app.client.id }), { headers: { cookie: cookieHeader(bobJar) } })
    expect(page.status).toBe(403)
    const html = await page.text()
    expect(html).toContain('<h1>Access denied</h1>')
    expect(html).toContain('Your account may not use <strong>Photos</strong>.')
    const href = /<a href="([^"]+)">Back to the app<\/a>/.exec(html)![1]!.replaceAll('&amp;', '&')
    const back = new URL(href)
    expect(back.origin + back.pathname).toBe(CALLBACK)
    expect(back.searchParams.get('error')).toBe('access_denied')
    expect(back.searchParams.get('state')).toBe('st')
    expect(back.searchParams.get('iss')).toBe(ORIGIN)
    expect(back.searchParams.get('code')).toBeNull()
    expect(await t.rows('SELECT code_hash FROM auth_codes')).toEqual([])
  })

  test('prompt=none redirects access_denied; a forged Allow from a non-member is refused', async () => {
    const bobJar = await signIn(t, 'bob@example.com')
    const silent = await t.handle(authorizePath({ ...params, client_id: app.client.id, prompt: 'none' }), { headers: { cookie: cookieHeader(bobJar) } })
    expect(silent.status).toBe(303)
    expect(new URL(silent.headers.get('location')!).searchParams.get('error')).toBe('access_denied')
    // The consent form of an unrestricted moment, posted after the restriction: refused.
    await t.store.groups.setAllowedGroups(app.client.id, [])
    const p = { ...params, client_id: app.client.id }
    const form = await t.handle(authorizePath(p), { headers: { cookie: cookieHeader(bobJar) } })
    const csrf = csrfFrom(await form.text())
    await t.store.groups.setAllowedGroups(app.client.id, ['family'])
    const res = await postForm(t, '/oauth/authorize', { ...p, csrf_token: csrf, decision: 'allow' }, bobJar)
    expect(res.status).toBe(303)
    expect(new URL(res.headers.get('location')!).searchParams.get('error')).toBe('access_denied')
    expect(await t.rows('SELECT code_hash FROM auth_codes')).toEqual([])
  })
})

describe('scope groups → claim groups in the id_token, userinfo and introspection', () => {
  test('the names of the user’s groups, sorted; without the scope, no claim', async () => {
    await createGroup(t.store, 'family', t.clock.now())
    await createGroup(t.store, 'admins', t.clock.now())
    await t.store.groups.addMember('family', ann.id)
    await t.store.groups.addMember('admins', ann.id)
    const jar = await signIn(t, 'ann@example.com')
    const exchange = async (scope: string) => {
      const callback = await authorizeAndAllow(t, jar, { client_id: app.client.id, redirect_uri: CALLBACK, scope, state: 's' })
      const res = await tokenRequest(t, { grant_type: 'authorization_code', code: callback.searchParams.get('code')!, client_id: app.client.id, client_secret: app.secret!, redirect_uri: CALLBACK })
      return (await res.json()) as { access_token: string; id_token?: string }
    }
    const page = await t.handle(authorizePath({ client_id: app.client.id, redirect_uri: CALLBACK, scope: 'openid groups', state: 's' }), { headers: { cookie: cookieHeader(jar) } })
    expect(await page.text()).toContain('<li data-scope="groups">See the groups you belong to</li>')
    const withGroups = await exchange('openid groups')
    expect(claims(withGroups.id_token!).groups).toEqual(['admins', 'family'])
    const info = await t.handle('/api/oauth/userinfo', { headers: { authorization: `Bearer ${withGroups.access_token}` } })
    expect(await info.json()).toEqual({ id: ann.id, sub: ann.id, groups: ['admins', 'family'] })
    const introspected = await t.handle('/api/oauth/introspect', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${btoa(`${app.client.id}:${app.secret}`)}` },
      body: new URLSearchParams({ token: withGroups.access_token }),
    })
    expect(await introspected.json()).toMatchObject({ active: true, groups: ['admins', 'family'] })
    const without = await exchange('openid')
    expect(claims(without.id_token!)).not.toHaveProperty('groups')
    expect(await (await t.handle('/api/oauth/userinfo', { headers: { authorization: `Bearer ${without.access_token}` } })).json()).toEqual({ id: ann.id, sub: ann.id })
  })
})
