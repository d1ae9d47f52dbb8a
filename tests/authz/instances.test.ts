import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { createGroup } from '../../src/accounts/groups'
import { createApp } from '../../src/app'
import { createSite } from '../../src/authz/sites'
import { loadConfig } from '../../src/config'
import { createContext } from '../../src/context'
import type { Store } from '../../src/db/store'
import { manualClock } from '../../src/lib/clock'
import { ORIGIN, addUser, signIn, postForm, type TestApp } from '../helpers'
import { csrfOf } from '../accounts/mfa-flows'
import { openTestStorePair, type TestStorePair } from '../store'
import { PROXIES, checkWith, siteSession } from './flow'

/**
 * Two instances on one database (SQLite: two connections to one file; PostgreSQL: two pools):
 * site sessions are read from the database on every check, not cached, so what one instance (or
 * the CLI) ends, the other refuses on the very next check.
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

describe('site sessions across instances', () => {
  test('signed out on one instance: the other refuses the site cookie on its next check (well within 100 ms)', async () => {
    await addUser(a)
    await createSite(a.store, { host: 'photos.example.com', name: 'Photos' }, clock.now())
    const jar = await signIn(a)
    const cookie = await siteSession(a, jar, PHOTOS)
    expect((await checkWith(b, PHOTOS, cookie)).status).toBe(200)
    expect((await postForm(a, '/logout', { csrf_token: await csrfOf(a, '/account', jar) }, jar)).status).toBe(303)
    const started = performance.now()
    const answer = await checkWith(b, PHOTOS, cookie)
    const ms = performance.now() - started
    expect(answer.status).toBe(302)
    expect(ms).toBeLessThan(100)
  })

  test('taken out of the allowed group by another process: 403 on the next check', async () => {
    const ann = await addUser(a)
    await createGroup(a.store, 'family', clock.now())
    await a.store.groups.addMember('family', ann.id)
    await createSite(a.store, { host: 'photos.example.com', name: 'Photos', allowedGroups: ['family'] }, clock.now())
    const cookie = await siteSession(a, await signIn(a), PHOTOS)
    expect((await checkWith(a, PHOTOS, cookie)).status).toBe(200)
    expect(await b.store.groups.removeMember('family', ann.id)).toBe(true)
    expect((await checkWith(a, PHOTOS, cookie)).status).toBe(403)
  })
})
