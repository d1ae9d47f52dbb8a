import type { Config } from '../config'
import type { Store } from './store'

export interface OpenedStore {
  store: Store
  /** Migrations this start applied. */
  applied: string[]
  /** A server's background work on the database (SQLite: the checkpointer), started once it listens. */
  startUpkeep: () => void
}

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//.test(url)
}

/**
 * The engine is chosen once, from DATABASE_URL: a postgres:// URL is PostgreSQL, anything else
 * a SQLite file (or :memory:). Migrations run before the store is handed out. Each engine is
 * loaded only when used, so a SQLite server never loads the PostgreSQL code.
 */
export async function openStore(config: Pick<Config, 'databaseUrl' | 'databasePoolSize'>, opts: { serving?: boolean } = {}): Promise<OpenedStore> {
  if (isPostgresUrl(config.databaseUrl)) {
    const { PgStore } = await import('./pg/store')
    return { ...(await PgStore.open(config.databaseUrl, config.databasePoolSize)), startUpkeep: () => {} }
  }
  const { SqliteStore } = await import('./sqlite/store')
  return SqliteStore.open(config.databaseUrl, { checkpointer: opts.serving ? 'later' : 'off' })
}
