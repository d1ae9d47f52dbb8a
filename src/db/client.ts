import { Database } from 'bun:sqlite'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { drizzle } from 'drizzle-orm/bun-sqlite'
import * as schema from './schema'

export type Db = ReturnType<typeof openDb>

/**
 * Opens the SQLite database with the PRAGMAs SPEC requires: WAL, a busy timeout,
 * foreign keys, and synchronous=FULL so an acknowledged commit survives power loss.
 */
export function openDb(path: string) {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const sqlite = new Database(path, { create: true, strict: true })
  sqlite.run('PRAGMA busy_timeout = 5000')
  if (path !== ':memory:') sqlite.run('PRAGMA journal_mode = WAL')
  sqlite.run('PRAGMA synchronous = FULL')
  sqlite.run('PRAGMA foreign_keys = ON')
  const orm = drizzle({ client: sqlite, schema })
  return { sqlite, orm, path }
}

/** Rows changed by a Drizzle `.run()` on bun:sqlite (its type says void; bun returns the count). */
export function changes(result: unknown): number {
  return (result as { changes: number }).changes
}
