import { afterEach, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { insertUser } from '../../src/accounts/users'
import { BRIEF_HOLD_MS, CHECKPOINT_INTERVAL_MS, Checkpointer, HOLD_AT_MOST_MS, WORKER_AFTER_FRAMES, holdLimitMs } from '../../src/db/sqlite/checkpointer'
import { SqliteStore } from '../../src/db/sqlite/store'

/** SQLite's file itself (both passes: this is the embedded engine's code, whatever the suite's engine). */
let dir: string
afterEach(() => rmSync(dir, { recursive: true, force: true }))

/** A WAL-mode database in a fresh folder, with one table `t`. */
function walDatabase(columns: string): { db: Database; path: string } {
  dir = mkdtempSync(join(tmpdir(), 'latchkey-checkpoint-'))
  const path = join(dir, 'latchkey.sqlite')
  const db = new Database(path)
  db.run('PRAGMA journal_mode = WAL')
  db.run(`CREATE TABLE t (${columns})`)
  return { db, path }
}

test('the serving connection never checkpoints; the worker starts once the WAL passes 1,000 pages and copies them into the file by itself', async () => {
  dir = mkdtempSync(join(tmpdir(), 'latchkey-checkpoint-'))
  const path = join(dir, 'latchkey.sqlite')
  const { store } = await SqliteStore.open(path)
  expect(store.db.sqlite.query('PRAGMA wal_autocheckpoint').get()).toEqual({ wal_autocheckpoint: 0 })
  expect(WORKER_AFTER_FRAMES).toBe(1000)
  const size = statSync(path).size
  // ~150 pages: the worker does not start for them (an idle or mostly-read server has no second thread), and nothing copies them.
  await Promise.all(
    Array.from({ length: 1500 }, (_, i) => insertUser(store, { email: `u${i}@example.com`, fullName: 'x'.repeat(300), avatarUrl: null, passwordHash: 'h' }, 0)),
  )
  expect(statSync(`${path}-wal`).size).toBeGreaterThan(500_000)
  await Bun.sleep(3 * CHECKPOINT_INTERVAL_MS)
  expect(store.checkpointer!.running).toBe(false)
  expect(statSync(path).size).toBe(size)
  // Past 1,000 pages (~4 MiB) it starts, and copies what is there.
  store.db.sqlite.run('CREATE TABLE filler (v BLOB)')
  for (let i = 0; i < 5; i++) store.db.sqlite.run('INSERT INTO filler VALUES (randomblob(1048576))')
  expect(statSync(`${path}-wal`).size).toBeGreaterThan(4_200_000)
  const started = performance.now()
  // Several checkpoints may share the work (a PASSIVE one copies what no reader still needs).
  while (statSync(path).size <= size + 5_000_000 && performance.now() - started < 20 * CHECKPOINT_INTERVAL_MS) await Bun.sleep(20)
  expect(store.checkpointer!.running).toBe(true)
  expect(statSync(path).size).toBeGreaterThan(size + 5_000_000)
  await store.close()
  // close() truncates the WAL; everything is in the file.
  expect(statSync(`${path}-wal`).size).toBe(0)
}, 20_000)

test('a database opened with a long WAL (after a crash) starts its worker at once', async () => {
  const { db, path } = walDatabase('v BLOB')
  db.run('PRAGMA wal_autocheckpoint = 0')
  for (let i = 0; i < 5; i++) db.run('INSERT INTO t VALUES (randomblob(1048576))')
  const checkpointer = new Checkpointer(db, path, { hold() {}, release() {} }, () => {})
  expect(checkpointer.running).toBe(true)
  await checkpointer.stop()
  db.close()
})

test('under a steady write load the WAL is started over: writes are held back for a moment, and it stays near its limit', async () => {
  const { db, path } = walDatabase('id INTEGER PRIMARY KEY, v TEXT')
  const failures: string[] = []
  // Writes honour hold() as the store's writer does; the holds are timed.
  let heldSince: number | undefined
  const holds: number[] = []
  const writes = {
    hold: () => void (heldSince = performance.now()),
    release: () => {
      if (heldSince !== undefined) holds.push(performance.now() - heldSince)
      heldSince = undefined
    },
  }
  // A 1 MiB threshold (256 frames) instead of 256 MiB, to keep the test small.
  const checkpointer = new Checkpointer(db, path, writes, (message) => failures.push(message), 256, 0)
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)')
  const batch = db.transaction(() => {
    for (let i = 0; i < 20; i++) insert.run('x'.repeat(1000))
  })
  let written = 0
  let largest = 0
  const until = performance.now() + 8 * CHECKPOINT_INTERVAL_MS
  // Writes between event-loop turns, as a busy server's are: the worker's copy never catches up alone.
  while (performance.now() < until) {
    if (heldSince === undefined) {
      batch()
      written += 20_000
    }
    largest = Math.max(largest, statSync(`${path}-wal`).size)
    await Bun.sleep(1)
  }
  await checkpointer.stop()
  db.close()
  expect(failures).toEqual([])
  expect(written).toBeGreaterThan(8_000_000)
  // Without starting over the WAL held everything written (every frame a new one at its end).
  expect(largest).toBeLessThan(written / 3)
  expect(holds.length).toBeGreaterThan(0)
  // Each hold lasts one copy of what came since the last and its fsync; never past the limit.
  expect(Math.max(...holds)).toBeLessThan(300)
}, 20_000)

test('a hold is brief while the WAL is under twice its limit, and may last longer past it', () => {
  expect([BRIEF_HOLD_MS, HOLD_AT_MOST_MS]).toEqual([8, 250])
  expect(holdLimitMs(32_768, 32_768)).toBe(8)
  expect(holdLimitMs(65_535, 32_768)).toBe(8)
  expect(holdLimitMs(65_536, 32_768)).toBe(250)
  expect(holdLimitMs(1_000_000, 32_768)).toBe(250)
})
