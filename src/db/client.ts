import { Database } from 'bun:sqlite'
import { drizzle } from 'drizzle-orm/bun-sqlite'
import * as schema from './schema'

export type Db = ReturnType<typeof openDb>

/**
 * Opens the SQLite database with the PRAGMAs SPEC requires: WAL, a busy timeout,
 * foreign keys, and synchronous=FULL so an acknowledged commit survives power loss.
 */
export function openDb(path: string) {
  const sqlite = openCreatingFolder(path)
  sqlite.run('PRAGMA busy_timeout = 5000')
  if (path !== ':memory:') sqlite.run('PRAGMA journal_mode = WAL')
  sqlite.run('PRAGMA synchronous = FULL')
  sqlite.run('PRAGMA foreign_keys = ON')
  const orm = drizzle({ client: sqlite, schema })
  return { sqlite, orm, path }
}

/**
 * Opens (creating) the file, making its folder on first use. node:fs is loaded only then: it
 * costs ~5 MB of memory that a server with an existing database should not pay.
 */
function openCreatingFolder(path: string): Database {
  try {
    return new Database(path, { create: true, strict: true })
  } catch (error) {
    const folder = path.slice(0, path.lastIndexOf('/'))
    if (!folder || path === ':memory:') throw error
    ;(require('node:fs') as typeof import('node:fs')).mkdirSync(folder, { recursive: true })
    return new Database(path, { create: true, strict: true })
  }
}

/** The rowid a Drizzle `.run()` of an INSERT gave its row. */
export function insertedId(result: unknown): number {
  return Number((result as { lastInsertRowid: number | bigint }).lastInsertRowid)
}

/** Rows changed by a Drizzle `.run()` on bun:sqlite (its type says void; bun returns the count). */
export function changes(result: unknown): number {
  return (result as { changes: number }).changes
}
