import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { createGroup } from '../../src/accounts/groups'
import { deleteSessionsOf } from '../../src/accounts/sessions'
import { setUserDisabled } from '../../src/accounts/users'
import { createApp } from '../../src/app'
import { addSiteRule, createSite } from '../../src/authz/sites'
import { loadConfig } from '../../src/config'
import { createContext } from '../../src/context'
import type { Store } from '../../src/db/store'
import { manualClock } from '../../src/lib/clock'
import { ORIGIN, addUser, signIn, postForm, type TestApp } from '../helpers'
import { csrfOf } from '../accounts/mfa-flows'
import { openTestStorePair, type TestStorePair } from '../store'
import { PROXIES, checkWith, siteSession } from './flow'

/**
 * Two instances on one database (SQLite: two connections to one file; PostgreSQL: two pools, each
 * with its LISTEN connection): each caches site sessions (src/authz/cache.ts), and what one
 * instance (or the CLI) ends, the other refuses within 100 ms (SPEC "Sessions per site") — on
 * SQLite at its next check (PRAGMA data_version), on PostgreSQL once the trigger's NOTIFY arrived.
 */
let pair: TestStorePair
let a: TestApp
let b: TestApp
const clock = manualClock(Date.now())

async function instance(store: Store): Promise<TestApp> {
  const ctx = await createContext({ store, config: loadConfig({ DATABASE_URL: ':memory:', ISSUER: ORIGIN, ...PROXIES }), clock })
  const app = createApp(ctx)
  return { app, ctx, store, clock, config: ctx.config, handle: (p: string, i?: RequestInit) => app.handle(new Request(ORIGIN + p, i)), rows: pair.rows, row: pair.row, engine: store.engine } as TestApp
}

beforeEach(async () => {
  pair = await openTestStorePair()
  a = await instance(pair.store)
  b = await instance(pair.other)
})
afterEach(() => pair.close())

const PHOTOS = 'https://photos.example.com/'

/**
 * Checks at `t` until one answers `status`; the milliseconds that took (each check is a real one:
 * the change is awaited as it arrives, no fixed sleep). Gives up after a second.
 */
async function msUntil(t: TestApp, cookie: string, status: number): Promise<number> {
  const started = performance.now()
  for (;;) {
    const answer = await checkWith(t, PHOTOS, cookie)
    const ms = performance.now() - started
    if (answer.status === status || ms > 1000) {
      expect(answer.status).toBe(status)
      return ms
    }
    await new Promise((resolve) => setImmediate(resolve))
  }
}

/** A signed-in Ann with a site cookie made on instance a, checked (and so cached) on b. */
async function cachedOnB(allowedGroups: string[] = []): Promise<{ annId: string; jar: Record<string, string>; cookie: string }> {
  const ann = await addUser(a)
  if (allowedGroups.length) {
    await createGroup(a.store, 'family', clock.now())
    await a.store.groups.addMember('family', ann.id)
  }
  await createSite(a.store, { host: 'photos.example.com', name: 'Photos', allowedGroups }, clock.now())
  const jar = await signIn(a)
  const cookie = await siteSession(a, jar, PHOTOS)
  for (let i = 0; i < 2; i++) expect((await checkWith(b, PHOTOS, cookie)).status).toBe(200)
  return { annId: ann.id, jar, cookie }
}

describe('site sessions across instances', () => {
  test('signed out on one instance: the other refuses the site cookie within 100 ms', async () => {
    const { jar, cookie } = await cachedOnB()
    expect((await postForm(a, '/logout', { csrf_token: await csrfOf(a, '/account', jar) }, jar)).status).toBe(303)
    expect(await msUntil(b, cookie, 302)).toBeLessThan(100)
  })

  test("an admin's sign out everywhere on one instance: the other refuses within 100 ms", async () => {
    const { annId, cookie } = await cachedOnB()
    await deleteSessionsOf(a.store, annId)
    expect(await msUntil(b, cookie, 302)).toBeLessThan(100)
  })

  test('the user disabled on one instance: the other refuses within 100 ms', async () => {
    const { annId, cookie } = await cachedOnB()
    expect(await setUserDisabled(a.ctx, annId, true)).toBe(true)
    expect(await msUntil(b, cookie, 302)).toBeLessThan(100)
  })

  test('taken out of the allowed group on one instance: 403 on the other within 100 ms', async () => {
    const { annId, cookie } = await cachedOnB(['family'])
    expect(await a.store.groups.removeMember('family', annId)).toBe(true)
    expect(await msUntil(b, cookie, 403)).toBeLessThan(100)
  })

  test("a rule added to the site on one instance decides the other's next checks within 100 ms", async () => {
    const { cookie } = await cachedOnB()
    await addSiteRule(a.store, 'photos.example.com', { paths: ['^/$'], policy: 'deny' })
    expect(await msUntil(b, cookie, 403)).toBeLessThan(100)
  })

  test('on the instance that made the change: refused at its very next check (the store tells its caches at commit)', async () => {
    const { annId, cookie } = await cachedOnB(['family'])
    expect(await b.store.groups.removeMember('family', annId)).toBe(true)
    expect((await checkWith(b, PHOTOS, cookie)).status).toBe(403)
    await deleteSessionsOf(b.store, annId)
    expect((await checkWith(b, PHOTOS, cookie)).status).toBe(302)
  })
})
