import { afterAll, beforeAll, expect, test } from 'bun:test'
import { insertUser } from '../../src/accounts/users'
import { sha256 } from '../../src/lib/crypto'
import { openTestStorePair, testEngine, type TestStorePair } from '../store'

/**
 * "Last active" is written by each instance in batches of 128 (src/accounts/session-activity.ts).
 * Two instances writing overlapping batches at once, their rows in opposite orders, must not
 * deadlock — PostgreSQL aborts one of two transactions that wait on each other: its touches are
 * lost, and an error logged. Each batch takes its rows in one order and skips a row another
 * instance holds that moment (that one writes as recent a time). PostgreSQL only: SQLite has one
 * writer, its batches never wait on each other.
 */
let pair: TestStorePair
// Enough rows that a batch of 128 is joined by the primary key's index, in the batch's order (a
// small table is scanned whole, in one order for every batch, and never showed it).
const SESSIONS = 50_000

beforeAll(async () => {
  if (testEngine !== 'postgres') return
  pair = await openTestStorePair()
  const user = await insertUser(pair.store, { email: 'many@example.com', fullName: 'Many Sessions', avatarUrl: null, passwordHash: 'x' }, 1)
  await pair.rows(
    `INSERT INTO sessions (id_hash, user_id, expires_at, sid) SELECT 'session ' || i, ?, 10000000000000, 'sid ' || i FROM generate_series(1, ${SESSIONS}) AS i`,
    user.id,
  )
  await pair.rows('ANALYZE sessions')
})
afterAll(() => pair?.close())

test.skipIf(testEngine !== 'postgres')('two instances touching the same sessions at once, in opposite orders: no write fails, and every session ends at the latest time written', async () => {
  const ids = Array.from({ length: 1280 }, (_, i) => `session ${i * 37 + 1}`)
  const batches = (list: string[], at: number) => Array.from({ length: list.length / 128 }, (_, b) => new Map(list.slice(b * 128, b * 128 + 128).map((id) => [id, at] as const)))
  const failures: unknown[] = []
  for (let round = 1; round <= 10; round++) {
    const writes = [...batches(ids, round * 1000).map((m) => pair.store.sessions.touchSessions(m)), ...batches([...ids].reverse(), round * 1000 + 1).map((m) => pair.other.sessions.touchSessions(m))]
    for (const result of await Promise.allSettled(writes)) if (result.status === 'rejected') failures.push(String(result.reason))
  }
  expect(failures).toEqual([])
  const rows = await pair.rows(`SELECT last_active_at FROM sessions WHERE id_hash IN (${ids.map(() => '?').join(', ')})`, ...ids)
  expect(rows.length).toBe(ids.length)
  // A row skipped by one instance (held by the other) got the other's time, one millisecond apart.
  for (const row of rows) expect([10_000, 10_001]).toContain(Number(row.last_active_at))
})
