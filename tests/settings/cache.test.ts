import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp, createContext } from '../../src/app'
import { insertUser } from '../../src/accounts/users'
import { loadConfig } from '../../src/config'
import { openDb, type Db } from '../../src/db/client'
import { ExternalWrites } from '../../src/db/external-writes'
import { migrate } from '../../src/db/migrate'
import { manualClock } from '../../src/lib/clock'
import { createClient } from '../../src/oauth/clients'
import { SettingsCache } from '../../src/settings/cache'
import { nextTurn } from '../helpers'

/** The list cache against a real file, with a second connection standing in for another process. */
let dir: string
let db: Db
let other: Db
let ctx: ReturnType<typeof createContext>
let app: ReturnType<typeof createApp>
let token: string
let clientId: string

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'latchkey-cache-'))
  const path = join(dir, 'db.sqlite')
  db = openDb(path)
  migrate(db.sqlite)
  other = openDb(path)
  const clock = manualClock()
  ctx = createContext({ db, config: loadConfig({ DATABASE_URL: path }), clock })
  app = createApp(ctx)
  clientId = createClient(db, { name: 'A', redirectUris: ['https://a.example/cb'], public: false, skipConsent: false }, clock.now()).client.id
  const user = insertUser(db, { email: 'a@example.com', fullName: 'A', avatarUrl: null, passwordHash: 'x' }, clock.now())
  token = (await ctx.writer.write(() => ctx.tokens.issue({ clientId, userId: user.id, scope: 'settings:read settings:write' }))).token
})

afterEach(() => {
  db.sqlite.close()
  other.sqlite.close()
  rmSync(dir, { recursive: true, force: true })
})

const call = (method: string, path: string, body?: unknown) =>
  app.handle(
    new Request(`http://localhost${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  )
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

  test('a commit by another process shows on the very next read', async () => {
    await call('POST', '/api/settings', { client_id: clientId, key: 'a', value: 1 })
    expect(await keys()).toMatchObject([{ key: 'a', value: 1 }])
    other.sqlite.run("UPDATE settings SET value = '\"changed\"'")
    await nextTurn()
    expect(await keys()).toMatchObject([{ key: 'a', value: 'changed' }])
    other.sqlite.run('DELETE FROM settings')
    await nextTurn()
    expect(await keys()).toEqual([])
  })

  test('is bounded: large lists are not kept, old entries make room', () => {
    const cache = new SettingsCache(new ExternalWrites(db.sqlite))
    cache.set('u', 'big', 'x'.repeat(300 * 1024))
    expect(cache.get('u', 'big')).toBeUndefined()
    for (let i = 0; i < 80; i++) cache.set(`u${i}`, 'c', 'y'.repeat(250 * 1024))
    expect(cache.get('u0', 'c')).toBeUndefined()
    expect(cache.get('u79', 'c')).toHaveLength(250 * 1024)
  })
})
