import { beforeEach, describe, expect, test } from 'bun:test'
import { GroupInUse, createGroup, deleteGroup, removeMember, setAllowedGroups } from '../../src/accounts/groups'
import { addClient, addUser, bearer, createTestApp, mintTokenPair, type TestApp } from '../helpers'

/**
 * Issue 33 findings 4 and 8 (SPEC, Groups): `--allowed-group` holds for as long as a grant lives —
 * not only at authorize — and deleting a group an app is restricted to never opens the app to
 * everyone.
 */
type App = Awaited<ReturnType<typeof addClient>>
type Pair = Awaited<ReturnType<typeof mintTokenPair>>
let t: TestApp
let photos: App
let ann: string
let bob: string

beforeEach(async () => {
  t = await createTestApp()
  photos = await addClient(t, { name: 'Photos' })
  ann = (await addUser(t, 'ann@example.com', 'Ann')).id
  bob = (await addUser(t, 'bob@example.com', 'Bob')).id
  await createGroup(t.store, 'family', t.clock.now())
  await t.store.groups.addMember('family', ann)
})

const userinfo = async (token: string) => (await t.handle('/api/oauth/userinfo', { headers: bearer(token) })).status
async function refresh(app: App, pair: Pair) {
  const res = await t.handle('/api/oauth/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${btoa(`${app.client.id}:${app.secret}`)}` },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: pair.refresh_token! }),
  })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}
const tokensOf = async (userId: string, clientId: string) => {
  const count = async (table: string) => (await t.rows(`SELECT family_id FROM ${table} WHERE user_id = ? AND client_id = ?`, userId, clientId)).length
  return { access: await count('access_tokens'), families: await count('refresh_families') }
}

describe('leaving an allowed group ends the grant', () => {
  test('a refresh by a user no longer in an allowed group is invalid_grant, and ends the grant', async () => {
    await setAllowedGroups(t.ctx, photos.client.id, ['family'])
    const pair = await mintTokenPair(t, photos.client.id, ann, 'openid')
    // The membership gone without the revocation that leaving a group does (a grant from before it).
    await t.rows('DELETE FROM group_members WHERE user_id = ?', ann)
    expect(await refresh(photos, pair)).toEqual({ status: 400, body: { error: 'invalid_grant', error_description: 'the user is no longer in a group allowed to use this app' } })
    expect(await tokensOf(ann, photos.client.id)).toEqual({ access: 0, families: 0 })
    expect(await userinfo(pair.access_token)).toBe(401)
  })

  test('the group check is decided in the refresh itself: nothing is issued or recorded as refreshed, and it is no reuse', async () => {
    await setAllowedGroups(t.ctx, photos.client.id, ['family'])
    const pair = await mintTokenPair(t, photos.client.id, ann, 'openid')
    await t.rows('DELETE FROM group_members WHERE user_id = ?', ann)
    const before = (await t.rows('SELECT id FROM access_tokens')).length
    expect((await refresh(photos, pair)).status).toBe(400)
    // Before, the tokens were issued (and 'token.refreshed' committed) and only then revoked.
    expect(await t.rows(`SELECT kind FROM audit_events WHERE kind IN ('token.refreshed', 'refresh.reuse_detected')`)).toEqual([])
    expect((await t.rows('SELECT id FROM access_tokens')).length).toBe(before - 1)
    expect(await t.rows('SELECT id FROM refresh_tokens WHERE user_id = ?', ann)).toEqual([])
  })

  test('removing a user from a group revokes their tokens at the apps no other group of theirs opens; others keep theirs', async () => {
    const albums = await addClient(t, { name: 'Albums' })
    const notes = await addClient(t, { name: 'Notes' })
    await createGroup(t.store, 'friends', t.clock.now())
    await t.store.groups.addMember('friends', ann)
    await t.store.groups.addMember('family', bob)
    await setAllowedGroups(t.ctx, photos.client.id, ['family'])
    await setAllowedGroups(t.ctx, albums.client.id, ['family', 'friends'])
    const annPhotos = await mintTokenPair(t, photos.client.id, ann, 'openid')
    const annAlbums = await mintTokenPair(t, albums.client.id, ann, 'openid')
    const annNotes = await mintTokenPair(t, notes.client.id, ann, 'openid')
    const bobPhotos = await mintTokenPair(t, photos.client.id, bob, 'openid')
    // Cached as valid first: the removal must reach the token cache too.
    for (const pair of [annPhotos, annAlbums, annNotes, bobPhotos]) expect(await userinfo(pair.access_token)).toBe(200)

    expect(await removeMember(t.ctx, 'family', ann)).toBe(true)
    expect(await userinfo(annPhotos.access_token)).toBe(401)
    expect(await tokensOf(ann, photos.client.id)).toEqual({ access: 0, families: 0 })
    expect((await refresh(photos, annPhotos)).body.error).toBe('invalid_grant')
    // Albums still opens to friends; Notes names no group; Bob is still in family.
    for (const pair of [annAlbums, annNotes, bobPhotos]) expect(await userinfo(pair.access_token)).toBe(200)
    expect((await refresh(albums, annAlbums)).status).toBe(200)
    expect((await refresh(photos, bobPhotos)).status).toBe(200)
    expect(await removeMember(t.ctx, 'family', ann)).toBe(false)
  })

  test("restricting an app revokes non-members' tokens at it; members keep theirs", async () => {
    const annPair = await mintTokenPair(t, photos.client.id, ann, 'openid')
    const bobPair = await mintTokenPair(t, photos.client.id, bob, 'openid')
    expect(await userinfo(bobPair.access_token)).toBe(200)
    await setAllowedGroups(t.ctx, photos.client.id, ['family'])
    expect(await userinfo(bobPair.access_token)).toBe(401)
    expect(await tokensOf(bob, photos.client.id)).toEqual({ access: 0, families: 0 })
    expect((await refresh(photos, bobPair)).body.error).toBe('invalid_grant')
    expect(await userinfo(annPair.access_token)).toBe(200)
    expect((await refresh(photos, annPair)).status).toBe(200)
    // Opening it to everyone again revokes nothing.
    const again = await mintTokenPair(t, photos.client.id, ann, 'openid')
    await setAllowedGroups(t.ctx, photos.client.id, [])
    expect(await userinfo(again.access_token)).toBe(200)
  })
})

describe('deleting a group an app is restricted to', () => {
  test('is refused, naming the apps, and changes nothing; once no app names it, it is deleted', async () => {
    const albums = await addClient(t, { name: 'Albums' })
    await setAllowedGroups(t.ctx, photos.client.id, ['family'])
    await setAllowedGroups(t.ctx, albums.client.id, ['family'])
    const refused = deleteGroup(t.store, 'family')
    await expect(refused).rejects.toBeInstanceOf(GroupInUse)
    await expect(refused).rejects.toThrow(
      `group "family" is the allowed group of Albums (${albums.client.id}), Photos (${photos.client.id}): change their allowed groups first (deleting it would open them to everyone)`,
    )
    expect(await t.store.groups.allowedGroups(photos.client.id)).toEqual(['family'])
    expect((await t.store.groups.listGroups()).map((g) => [g.name, g.members.length])).toEqual([['family', 1]])
    await setAllowedGroups(t.ctx, photos.client.id, [])
    await setAllowedGroups(t.ctx, albums.client.id, [])
    expect(await deleteGroup(t.store, 'family')).toBe(true)
    expect(await deleteGroup(t.store, 'family')).toBe(false)
  })
})

describe('at the same moment, on two connections (two instances on PostgreSQL)', () => {
  // With the membership deleted before the grants (the opposite of deleting a user), these
  // deadlocked: PostgreSQL broke each after deadlock_timeout and the store retried (8 rounds: 4.1 s
  // where they now take 0.4 s).
  test('leaving a group, or restricting an app, while the user is deleted: both finish, no deadlock', async () => {
    await setAllowedGroups(t.ctx, photos.client.id, ['family'])
    for (let round = 0; round < 8; round++) {
      const user = (await addUser(t, `r${round}@example.com`, 'R')).id
      await t.store.groups.addMember('family', user)
      for (let i = 0; i < 3; i++) await mintTokenPair(t, photos.client.id, user, 'openid')
      const [left, deleted] = await Promise.all([removeMember(t.ctx, 'family', user), t.store.users.deleteUser(user)])
      expect(deleted).toBe(true)
      expect(typeof left).toBe('boolean')
      const app = await addClient(t, { name: `App ${round}` })
      const other = (await addUser(t, `o${round}@example.com`, 'O')).id
      for (let i = 0; i < 3; i++) await mintTokenPair(t, app.client.id, other, 'openid')
      const [, gone] = await Promise.all([setAllowedGroups(t.ctx, app.client.id, ['family']), t.store.users.deleteUser(other)])
      expect(gone).toBe(true)
      expect(await t.store.groups.allowedGroups(app.client.id)).toEqual(['family'])
      expect(await t.rows('SELECT family_id FROM refresh_families WHERE client_id = ?', app.client.id)).toEqual([])
    }
  })
})
