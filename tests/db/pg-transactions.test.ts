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

describe.skipIf(!onPostgres)('PgStore.tx', () => {
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
})
