/**
 * PostgreSQL transactions that the server aborts as deadlocks or serialization failures run
 * again, and end as 503 (DatabaseUnavailable), never 500, if they keep failing (issue 18 item 1).
 * PostgreSQL only: SQLite has one writer, which never deadlocks.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { DatabaseUnavailable } from '../../src/db/store'
import type { PgStore } from '../../src/db/pg/store'
import { openTestStore, testEngine } from '../store'

const onPostgres = testEngine === 'postgres'
const opened = onPostgres ? openTestStore() : undefined
afterAll(async () => (await opened)?.store.close())

const aborted = (state: string) => Object.assign(new Error(`aborted (${state})`), { errno: state })

describe.skipIf(!onPostgres)('PgStore.tx and PgStore.atomic', () => {
  test('a deadlock (40P01) or serialization failure (40001) runs again, and the retry that succeeds answers', async () => {
    const store = (await opened!).store as PgStore
    for (const state of ['40P01', '40001']) {
      let attempts = 0
      const result = await store.tx(async (tx) => {
        attempts++
        if (attempts < 3) throw aborted(state)
        return (await tx`SELECT 41 + 1 AS n`)[0].n as number
      })
      expect([state, attempts, result]).toEqual([state, 3, 42])
    }
  })

  test('one that keeps failing gives up after 5 attempts as DatabaseUnavailable (503), never the raw error (500)', async () => {
    const store = (await opened!).store as PgStore
    let attempts = 0
    const outcome = await store
      .tx(async () => {
        attempts++
        throw aborted('40P01')
      })
      .catch((error: unknown) => error)
    expect(outcome).toBeInstanceOf(DatabaseUnavailable)
    expect(attempts).toBe(5)
    // Any other error is not retried.
    attempts = 0
    await expect(store.tx(async () => (attempts++, Promise.reject(new Error('other'))))).rejects.toThrow('other')
    expect(attempts).toBe(1)
  })

  test('atomic (one statement, one round trip) runs again on a deadlock as tx does, and joins a store transaction', async () => {
    const store = (await opened!).store as PgStore
    let attempts = 0
    const result = await store.atomic(async (sql) => {
      attempts++
      if (attempts < 2) throw aborted('40P01')
      return (await sql`SELECT 41 + 1 AS n`)[0].n as number
    })
    expect([attempts, result]).toEqual([2, 42])
    attempts = 0
    const outcome = await store.atomic(async () => (attempts++, Promise.reject(aborted('40001')))).catch((error: unknown) => error)
    expect([outcome instanceof DatabaseUnavailable, attempts]).toEqual([true, 5])
    // Inside a store transaction it is one of its statements: rolled back with it.
    const table = `atomic_probe_${Date.now()}`
    const failed = await store
      .transaction(async () => {
        await store.atomic((sql) => sql.unsafe(`CREATE TABLE ${table} (n int)`))
        expect(await store.atomic(async (sql) => (await sql`SELECT to_regclass(${table}) IS NOT NULL AS made`)[0].made)).toBe(true)
        throw new Error('roll back')
      })
      .catch((error: Error) => error.message)
    expect(failed).toBe('roll back')
    expect(await store.atomic(async (sql) => (await sql`SELECT to_regclass(${table}) IS NULL AS gone`)[0].gone)).toBe(true)
  })
})

