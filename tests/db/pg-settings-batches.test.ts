/**
 * PostgreSQL: settings writes that arrive while the instance's write slots are taken (or, for one
 * user, while one of theirs is in flight) go together in one statement (migration 0015), in
 * order, each decided as it would be alone (issue 24).
 * PostgreSQL only: SQLite's writer commits whatever is queued together already (writer.test.ts).
 */
import { afterAll, describe, expect, test } from 'bun:test'
import type { PgStore } from '../../src/db/pg/store'
import { MAX_WRITES_TOGETHER } from '../../src/db/pg/settings'
import { addClient, addUser, createTestApp, unlimited, type TestApp } from '../helpers'
import { testEngine } from '../store'

const onPostgres = testEngine === 'postgres'
const apps: TestApp[] = []
afterAll(async () => Promise.all(apps.map((t) => t.store.close())))

/** A test app whose store counts its one-statement transactions (each is one round trip). */
async function counted() {
  const t = await createTestApp()
  apps.push(t)
  const store = t.store as PgStore
  const statements: number[] = []
  const atomic = store.atomic.bind(store)
  store.atomic = (fn) => (statements.push(1), atomic(fn))
  const { client } = await addClient(t)
  const user = await addUser(t)
  return { t, settings: t.store.settings, client, user, statements }
}

describe.skipIf(!onPostgres)('PostgreSQL settings writes of one user go together', () => {
  test('ten at once: the first alone, the other nine in one statement; each answered in its order, with the next revision', async () => {
    const { settings, client, user, statements } = await counted()
    const now = 1_800_000_000_000
    const outcomes = await Promise.all(Array.from({ length: 10 }, (_, i) => settings.saveSetting(user.id, client.id, `k${i}`, `${i}`, { ...unlimited(now), valueBytes: 1 })))
    expect(statements.length).toBe(2)
    expect(outcomes.map((o) => (o.ok ? [o.setting.key, o.revision] : o.refused))).toEqual(Array.from({ length: 10 }, (_, i) => [`k${i}`, i + 1]))
    expect((await settings.listSettings(user.id, client.id)).revision).toBe(10)
  })

  test('each write sees those before it in its batch: preconditions, quotas, the same key twice, a delete', async () => {
    const { settings, client, user, statements } = await counted()
    const now = 1_800_000_000_000
    const rules = { ...unlimited(now), valueBytes: 1 }
    const first = settings.saveSetting(user.id, client.id, 'lead', '0', rules)
    const batch = [
      settings.saveSetting(user.id, client.id, 'a', '1', { ...rules, ifNoneMatch: '*' }),
      settings.saveSetting(user.id, client.id, 'a', '2', { ...rules, ifNoneMatch: '*' }),
      settings.saveSetting(user.id, client.id, 'a', '3', rules),
      settings.saveSetting(user.id, client.id, 'b', '4', { ...rules, maxKeys: 2 }),
      settings.deleteSetting(user.id, client.id, 'a', now, {}),
      settings.deleteSetting(user.id, client.id, 'a', now, {}),
      settings.saveSetting(user.id, client.id, 'c', '5', { ...rules, ifMatch: '*' }),
    ]
    const answers = await Promise.all([first, ...batch])
    expect(statements.length).toBe(2)
    expect(answers.map((o) => (o.ok ? 'ok' : o.refused))).toEqual(['ok', 'ok', 'if-none-match', 'ok', 'max-keys', 'ok', 'missing', 'if-match'])
    // The same key in one millisecond: updated_at still advances (ETags differ).
    expect((answers[3] as { setting: { updatedAt: number } }).setting.updatedAt).toBe(now + 1)
    expect((await settings.listSettings(user.id, client.id)).settings.map((s) => [s.key, s.value])).toEqual([['lead', '0']])
  })

  test('a write that fails fails alone: the batch is tried again one write at a time', async () => {
    const { settings, client, user, statements } = await counted()
    const rules = { ...unlimited(1_800_000_000_000), valueBytes: 1 }
    const first = settings.saveSetting(user.id, client.id, 'lead', '0', rules)
    // An application that does not exist: its row breaks a foreign key.
    const batch = [settings.saveSetting(user.id, client.id, 'x', '1', rules), settings.saveSetting(user.id, 'no-such-app', 'y', '2', rules), settings.saveSetting(user.id, client.id, 'z', '3', rules)]
    const answers = await Promise.allSettled([first, ...batch])
    expect(answers.map((a) => a.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled'])
    // lead alone, the batch of three, then each of the three again.
    expect(statements.length).toBe(5)
    expect((await settings.listSettings(user.id, client.id)).settings.map((s) => s.key)).toEqual(['lead', 'x', 'z'])
  })

  test('writes of many users: the free slots take the first ones alone, the rest go together, each answered with its own', async () => {
    const { t, settings, client, statements } = await counted()
    const slots = Math.floor((t.store as PgStore).stats.size / 2)
    expect(slots).toBeGreaterThan(0)
    const users = await Promise.all(Array.from({ length: slots + 10 }, (_, i) => addUser(t, `u${i}@example.com`)))
    const rules = { ...unlimited(1_800_000_000_000), valueBytes: 1 }
    const outcomes = await Promise.all(users.map((u, i) => settings.saveSetting(u.id, client.id, `k${i}`, `${i}`, rules)))
    expect(statements.length).toBe(slots + 1)
    expect(outcomes.map((o) => o.ok && [o.setting.key, o.setting.value, o.revision])).toEqual(users.map((_, i) => [`k${i}`, `${i}`, 1]))
    for (const [i, u] of users.entries()) expect((await settings.listSettings(u.id, client.id)).settings.map((s) => [s.key, s.value])).toEqual([[`k${i}`, `${i}`]])
  })

  test(`at most ${MAX_WRITES_TOGETHER} writes go in one statement`, async () => {
    const { settings, client, user, statements } = await counted()
    const rules = { ...unlimited(1_800_000_000_000), valueBytes: 1 }
    const all = await Promise.all(Array.from({ length: 1 + 2 * MAX_WRITES_TOGETHER + 1 }, (_, i) => settings.saveSetting(user.id, client.id, `k${i}`, '1', rules)))
    expect(all.every((o) => o.ok)).toBe(true)
    expect(statements.length).toBe(4)
  })
})
