import { beforeEach, describe, expect, test } from 'bun:test'
import { createGroup, deleteGroup, removeMember } from '../../src/accounts/groups'
import { deleteSessionsOf } from '../../src/accounts/sessions'
import { setUserDisabled, updateProfile } from '../../src/accounts/users'
import { SiteLookups } from '../../src/authz/cache'
import type { Change, Store } from '../../src/db/store'
import { addSiteRule, createSite } from '../../src/authz/sites'
import { siteSessionHash } from '../../src/authz/site-sessions'
import { addUser, createTestApp, postForm, signIn, type TestApp } from '../helpers'
import { csrfOf } from '../accounts/mfa-flows'
import { PROXIES, checkWith, siteSession, type Jar } from './flow'

/**
 * The check's cache of sites and site sessions (src/authz/cache.ts), on both engines: a repeated
 * check is answered from memory; writes that change no answer leave it alone; each change that
 * ends or changes a site session — named by the store at its commit — drops it here at once.
 * (Across instances: instances.test.ts.)
 */
const PHOTOS = 'https://photos.example.com/albums/1'

let t: TestApp
let jar: Jar
let annId: string
let cookie: string

beforeEach(async () => {
  t = await createTestApp(PROXIES)
  annId = (await addUser(t, 'ann@example.com', 'Ann Lee')).id
  await createGroup(t.store, 'family', t.clock.now())
  await t.store.groups.addMember('family', annId)
  await createSite(t.store, { host: 'photos.example.com', name: 'Photos', allowedGroups: ['family'] }, t.clock.now())
  jar = await signIn(t)
  cookie = await siteSession(t, jar, PHOTOS)
})

const check = async () => {
  const answer = await checkWith(t, PHOTOS, cookie)
  return [answer.status, answer.headers.get('remote-user'), answer.headers.get('remote-name'), answer.headers.get('remote-groups')]
}
const ALLOWED = [200, 'ann@example.com', 'Ann Lee', 'family']
const SIGN_IN = [302, null, null, null]
const DENIED = [403, null, null, null]

describe("the check's cache", () => {
  test('a repeated check is answered from memory on both engines', async () => {
    expect(await check()).toEqual(ALLOWED)
    // Behind the store's back (no change told): only a cache can still answer 200.
    await t.rows('DELETE FROM site_sessions')
    expect(await check()).toEqual(ALLOWED)
  })

  test('writes that change no answer keep it: another group, another user signing out, "last active" written', async () => {
    expect(await check()).toEqual(ALLOWED)
    await t.rows('DELETE FROM site_sessions')
    await createGroup(t.store, 'unrelated', t.clock.now())
    const bob = await addUser(t, 'bob@example.com', 'Bob')
    await signIn(t, 'bob@example.com')
    await deleteSessionsOf(t.store, bob.id)
    t.clock.advance(2 * 60_000)
    expect(await check()).toEqual(ALLOWED)
    await t.ctx.sessionActivity.flush()
    expect(await check()).toEqual(ALLOWED)
  })

  test('signing out (/logout) ends it here at once', async () => {
    expect(await check()).toEqual(ALLOWED)
    expect((await postForm(t, '/logout', { csrf_token: await csrfOf(t, '/account', jar) }, jar)).status).toBe(303)
    expect(await check()).toEqual(SIGN_IN)
  })

  test("an admin's sign out everywhere ends it", async () => {
    expect(await check()).toEqual(ALLOWED)
    await deleteSessionsOf(t.store, annId)
    expect(await check()).toEqual(SIGN_IN)
  })

  test('one session signed out from "Where you\'re signed in" ends it', async () => {
    expect(await check()).toEqual(ALLOWED)
    const [listed] = await t.store.sessions.listSessions(annId, t.clock.now(), 0)
    expect(await t.store.sessions.deleteSessionOf(annId, listed!.sid)).toBe(true)
    expect(await check()).toEqual(SIGN_IN)
  })

  test("the site's own /.latchkey/logout ends it", async () => {
    expect(await check()).toEqual(ALLOWED)
    const token = cookie.slice(cookie.indexOf('=') + 1)
    expect(await t.store.sites.endSignInOf(siteSessionHash('https', token), 'photos.example.com')).toBe(true)
    expect(await check()).toEqual(SIGN_IN)
  })

  test('disabling the user ends it', async () => {
    expect(await check()).toEqual(ALLOWED)
    await setUserDisabled(t.ctx, annId, true)
    expect(await check()).toEqual(SIGN_IN)
  })

  test('deleting the user ends it', async () => {
    expect(await check()).toEqual(ALLOWED)
    expect(await t.store.users.deleteUser(annId)).toBe(true)
    expect(await check()).toEqual(SIGN_IN)
  })

  test('taken out of the allowed group: 403 at once; put in another group: Remote-Groups says so at once', async () => {
    expect(await check()).toEqual(ALLOWED)
    await createGroup(t.store, 'admins', t.clock.now())
    await t.store.groups.addMember('admins', annId)
    expect(await check()).toEqual([200, 'ann@example.com', 'Ann Lee', 'admins,family'])
    expect(await removeMember(t.ctx, 'family', annId)).toBe(true)
    expect(await check()).toEqual(DENIED)
  })

  test("a group of the user's deleted: Remote-Groups says so at once", async () => {
    await createGroup(t.store, 'old', t.clock.now())
    await t.store.groups.addMember('old', annId)
    expect(await check()).toEqual([200, 'ann@example.com', 'Ann Lee', 'family,old'])
    expect(await deleteGroup(t.store, 'old')).toBe(true)
    expect(await check()).toEqual(ALLOWED)
  })

  test('a new name: Remote-Name says so at once', async () => {
    expect(await check()).toEqual(ALLOWED)
    await updateProfile(t.ctx, annId, { fullName: 'Ann Smith' })
    expect(await check()).toEqual([200, 'ann@example.com', 'Ann Smith', 'family'])
  })

  test('a rule added to the site decides the next check; the site deleted: 403 (no site)', async () => {
    expect(await check()).toEqual(ALLOWED)
    await addSiteRule(t.store, 'photos.example.com', { paths: ['^/albums/'], policy: 'deny' })
    expect(await check()).toEqual(DENIED)
    await t.store.sites.deleteSite('photos.example.com')
    expect(await check()).toEqual(DENIED)
    await createSite(t.store, { host: 'photos.example.com', name: 'Photos' }, t.clock.now())
    // Its sessions went with it: the cookie is nobody's now.
    expect(await check()).toEqual(SIGN_IN)
  })

  test('an expired or idle site session is not answered from memory', async () => {
    expect(await check()).toEqual(ALLOWED)
    await t.ctx.sessionActivity.flush()
    t.clock.advance(t.config.sessionIdleTtl * 1000 + 1)
    expect(await check()).toEqual(SIGN_IN)
  })

  test('in use, it is not idle: each check is activity, written once per interval', async () => {
    const step = t.ctx.sessionActivity.interval + 1
    for (let at = 0; at < t.config.sessionIdleTtl * 1000 * 2; at += step * 50) {
      expect(await check()).toEqual(ALLOWED)
      await t.ctx.sessionActivity.flush()
      t.clock.advance(step * 50)
    }
  })

  test('trusted only while the change feed is alive; a read that raced a change is answered, not kept', async () => {
    let up = true
    const listeners: Array<(change?: Change) => void> = []
    const feed = { onChange: (listener: (change?: Change) => void) => void listeners.push(listener), check: () => up }
    const lookups = new SiteLookups({ ...t.store, changes: feed } as Store)
    const hash = siteSessionHash('https', cookie.slice(cookie.indexOf('=') + 1))
    const now = t.clock.now()
    const lookup = () => lookups.session(hash, 'photos.example.com', now, 0)
    // A change told while the read is under way (PostgreSQL's NOTIFY can come at any time).
    const racing = lookup()
    for (const listener of listeners) listener({ sessions: [annId] })
    expect((await racing)?.identity.user.id).toBe(annId)
    expect(lookups.cachedSessions).toBe(0)
    expect((await lookup())?.identity.user.id).toBe(annId)
    expect(lookups.cachedSessions).toBe(1)
    await t.rows('DELETE FROM site_sessions')
    expect((await lookup())?.identity.user.id).toBe(annId)
    // The feed down (a LISTEN connection lost): what is held is not used.
    up = false
    expect(await lookup()).toBeUndefined()
  })

  test('bounded: the oldest entries go first, a ring of slots', async () => {
    const lookups = new SiteLookups(t.store, 2)
    const hashes: string[] = []
    for (let i = 0; i < 3; i++) {
      const j = await signIn(t)
      const c = await siteSession(t, j, PHOTOS)
      hashes.push(siteSessionHash('https', c.slice(c.indexOf('=') + 1)))
    }
    const now = t.clock.now()
    for (const h of hashes) expect((await lookups.session(h, 'photos.example.com', now, 0))?.identity.user.id).toBe(annId)
    expect(lookups.cachedSessions).toBe(2)
    await t.rows('DELETE FROM site_sessions')
    // The first was evicted by the third; the other two are still held.
    expect(await lookups.session(hashes[0]!, 'photos.example.com', now, 0)).toBeUndefined()
    expect((await lookups.session(hashes[1]!, 'photos.example.com', now, 0))?.identity.user.id).toBe(annId)
    expect((await lookups.session(hashes[2]!, 'photos.example.com', now, 0))?.identity.user.id).toBe(annId)
    // Held for its host only.
    expect(await lookups.session(hashes[2]!, 'other.example.com', now, 0)).toBeUndefined()
  })
})
