import { UniqueViolation, type Change } from '../store'
import type { SqliteChangeFeed } from './change-feed'
import type { Db } from './client'

/**
 * What every domain of the SQLite store shares: the connection, and the group-commit writer
 * every write goes through (one job at a time, so each operation is atomic).
 */
export interface SqliteContext {
  readonly db: Db
  write<T>(fn: () => T): Promise<T>
  /** Moves on with every batch and store transaction; odd, or -1, while one runs (SqliteStore.writeEpoch). */
  readonly writeEpoch: number
  /** Inside a write job: what it changed for the caches (told once it committed, forgotten if it rolled back). */
  emit(change: Change): void
  /** Tells the caches of other connections' commits (ClientCache). */
  readonly changes: SqliteChangeFeed
}

/** SQLite's unique-constraint failure, as the port's error. */
export function unique<T>(fn: () => T): T {
  try {
    return fn()
  } catch (error) {
    const e = error as { code?: string; message?: string }
    if (e.code === 'SQLITE_CONSTRAINT_UNIQUE' || e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY') throw new UniqueViolation(e.message ?? '')
    throw error
  }
}
