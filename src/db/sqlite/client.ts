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
 * Creates an absent database file and its folders with Bun's native writer, so a first start in
 * an empty folder does not load node:fs (~5 MB, ~5 ms). Never touches an existing file (an
 * empty write would truncate it). An empty file is an empty SQLite database. The process umask
 * (077, set at start) makes it 0600; SQLite gives its -wal and -shm files the same mode.
 */
export async function createDatabaseFile(path: string): Promise<void> {
  if (path === ':memory:') return
  if (!(await Bun.file(path).exists())) {
    await Bun.write(path, new Uint8Array(0))
    return
  }
  await restrictDatabaseFiles(path)
}

/**
 * A database made by an older release (or copied in) may be readable by others: make it and its
 * -wal/-shm 0600. node:fs is loaded only when a file actually needs the change.
 */
export async function restrictDatabaseFiles(path: string): Promise<void> {
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    const stat = await Bun.file(file).stat().catch(() => undefined)
    if (stat && stat.mode & 0o077) (require('node:fs') as typeof import('node:fs')).chmodSync(file, 0o600)
  }
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
    ;(require('node:fs') as typeof import('node:fs')).mkdirSync(folder, { recursive: true, mode: 0o700 })
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
