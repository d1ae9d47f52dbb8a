import { afterEach, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { insertUser } from '../../src/accounts/users'
import { CHECKPOINT_INTERVAL_MS } from '../../src/db/sqlite/checkpointer'
import { SqliteStore } from '../../src/db/sqlite/store'

/** SQLite's file itself (both passes: this is the embedded engine's code, whatever the suite's engine). */
let dir: string
afterEach(() => rmSync(dir, { recursive: true, force: true }))

test('the serving connection never checkpoints; the worker copies committed pages into the file by itself', async () => {
  dir = mkdtempSync(join(tmpdir(), 'latchkey-checkpoint-'))
  const path = join(dir, 'latchkey.sqlite')
  const { store } = await SqliteStore.open(path)
  expect(store.db.sqlite.query('PRAGMA wal_autocheckpoint').get()).toEqual({ wal_autocheckpoint: 0 })
  const size = statSync(path).size
  // ~150 pages: fewer than SQLite's own auto-checkpoint (1,000), so only the worker moves them.
  await Promise.all(
    Array.from({ length: 1500 }, (_, i) => insertUser(store, { email: `u${i}@example.com`, fullName: 'x'.repeat(300), avatarUrl: null, passwordHash: 'h' }, 0)),
  )
  expect(statSync(`${path}-wal`).size).toBeGreaterThan(500_000)
  const started = performance.now()
  // Several checkpoints may share the work (a PASSIVE one copies what no reader still needs).
  while (statSync(path).size <= size + 500_000 && performance.now() - started < 20 * CHECKPOINT_INTERVAL_MS) await Bun.sleep(20)
  expect(statSync(path).size).toBeGreaterThan(size + 500_000)
  await store.close()
  // close() truncates the WAL; everything is in the file.
  expect(statSync(`${path}-wal`).size).toBe(0)
}, 20_000)
