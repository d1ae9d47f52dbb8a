import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { createApp, createContext } from '../../src/app'
import { insertUser } from '../../src/accounts/users'
import { loadConfig } from '../../src/config'
import { manualClock } from '../../src/lib/clock'
import { createClient } from '../../src/oauth/clients'
import { SettingsCache } from '../../src/settings/cache'
import { mintToken, nextTurn, type TestApp } from '../helpers'
import { openTestStorePair, type TestStorePair } from '../store'

/** The list cache, with a second store on the same database standing in for another process or instance. */
let pair: TestStorePair
let t: TestApp
let token: string
let clientId: string
let userId: string

beforeEach(async () => {
  pair = await openTestStorePair()
  const clock = manualClock()
  const ctx = await createContext({ store: pair.store, config: loadConfig({ DATABASE_URL: ':memory:' }), clock })
  const app = createApp(ctx)
  t = { app, ctx, store: pair.store, clock, config: ctx.config, handle: (p, i) => app.handle(new Request('http://localhost' + p, i)), rows: pair.rows, row: pair.row, engine: pair.store.engine }
  clientId = (await createClient(pair.store, { name: 'A', redirectUris: ['https://a.example/cb'], public: false, skipConsent: false }, clock.now())).client.id
  userId = (await insertUser(pair.store, { email: 'a@example.com', fullName: 'A', avatarUrl: null, passwordHash: 'x' }, clock.now())).id
  token = await mintToken(t, clientId, userId, 'settings:read settings:write')
})

afterEach(() => pair.close())

const call = (method: string, path: string, body?: unknown) =>
  t.handle(path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
const keys = async () => ((await (await call('GET', '/api/settings')).json()) as { settings: Array<{ key: string; value: unknown }> }).settings

describe('the settings list cache', () => {
  test('a write or delete in this process shows on the next read', async () => {
    await call('POST', '/api/settings', { client_id: clientId, key: 'a', value: 1 })
    expect(await keys()).toMatchObject([{ key: 'a', value: 1 }])
    await call('POST', '/api/settings', { client_id: clientId, key: 'a', value: 2 })
    await call('POST', '/api/settings', { client_id: clientId, key: 'b', value: 3 })
    expect(await keys()).toMatchObject([{ key: 'a', value: 2 }, { key: 'b', value: 3 }])
    await call('DELETE', `/api/settings/a?client_id=${clientId}`)
    expect(await keys()).toMatchObject([{ key: 'b', value: 3 }])
  })

  test('a commit by another process (or instance) shows on the very next read', async () => {
    await call('POST', '/api/settings', { client_id: clientId, key: 'a', value: 1 })
    expect(await keys()).toMatchObject([{ key: 'a', value: 1 }])
    await pair.other.saveSetting(userId, clientId, 'a', '"changed"', () => Date.now())
    await nextTurn()
    expect(await keys()).toMatchObject([{ key: 'a', value: 'changed' }])
    await pair.other.deleteSetting(userId, clientId, 'a', () => {})
    await nextTurn()
    expect(await keys()).toEqual([])
  })

  test('is bounded: large lists are not kept, old entries make room', () => {
    const cache = new SettingsCache({ onChange() {}, check: () => true }, true)
    cache.set('u', 'big', 'x'.repeat(300 * 1024), cache.ticket())
    expect(cache.get('u', 'big')).toBeUndefined()
    for (let i = 0; i < 80; i++) cache.set(`u${i}`, 'c', 'y'.repeat(250 * 1024), cache.ticket())
    expect(cache.get('u0', 'c')).toBeUndefined()
    expect(cache.get('u79', 'c')).toHaveLength(250 * 1024)
  })

  test('a body read while a write ran is not kept; nothing is served while the change feed is down', () => {
    let up = true
    const cache = new SettingsCache({ onChange() {}, check: () => up }, true)
    const ticket = cache.ticket()
    cache.invalidate('u', 'c')
    cache.set('u', 'c', 'stale', ticket)
    expect(cache.get('u', 'c')).toBeUndefined()
    cache.set('u', 'c', 'fresh', cache.ticket())
    expect(cache.get('u', 'c')).toBe('fresh')
    up = false
    expect(cache.get('u', 'c')).toBeUndefined()
  })
})
