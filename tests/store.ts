import { SqliteStore } from '../src/db/sqlite/store'
import type { Store } from '../src/db/store'

type Row = Record<string, unknown>

export interface TestStore {
  store: Store
  /** Runs SQL for an assertion; `?` placeholders; numbers come back as numbers on both engines. */
  rows(query: string, ...params: unknown[]): Promise<Row[]>
  row(query: string, ...params: unknown[]): Promise<Row | undefined>
}

/** The engine the suite runs on: PostgreSQL when LATCHKEY_TEST_DATABASE_URL is set, else SQLite. */
export const testEngine: 'sqlite' | 'postgres' = process.env.LATCHKEY_TEST_DATABASE_URL ? 'postgres' : 'sqlite'

export interface TestStorePair extends TestStore {
  /** A second store on the same database: another process (SQLite) or instance (PostgreSQL). */
  other: Store
  close(): Promise<void>
}

/** Two stores on one fresh database, for what one process sees of another's writes. */
export async function openTestStorePair(): Promise<TestStorePair> {
  if (testEngine === 'postgres') return (await import('./pg-store')).openPgTestStorePair(process.env.LATCHKEY_TEST_DATABASE_URL!)
  const { mkdtempSync, rmSync } = await import('node:fs')
  const { tmpdir } = await import('node:os')
  const dir = mkdtempSync(`${tmpdir()}/latchkey-pair-`)
  const { store } = await SqliteStore.open(`${dir}/db.sqlite`)
  const { store: other } = await SqliteStore.open(`${dir}/db.sqlite`)
  const rows = async (query: string, ...params: unknown[]) => store.db.sqlite.query(query).all(...(params as [])) as Row[]
  return {
    store,
    other,
    rows,
    row: async (query, ...params) => (await rows(query, ...params))[0],
    async close() {
      await store.close()
      await other.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** A fresh, migrated database for one test app. */
export async function openTestStore(): Promise<TestStore> {
  if (testEngine === 'postgres') return (await import('./pg-store')).openPgTestStore(process.env.LATCHKEY_TEST_DATABASE_URL!)
  const { store } = await SqliteStore.open(':memory:')
  const rows = async (query: string, ...params: unknown[]) => store.db.sqlite.query(query).all(...(params as [])) as Row[]
  return { store, rows, row: async (query, ...params) => (await rows(query, ...params))[0] }
}
