import type { SQL } from 'bun'
import { InvalidRequest } from '../../lib/errors'
import { DatabaseUnavailable, UniqueViolation, type Change, type UserRecord } from '../store'

export type Row = Record<string, unknown>
export type Tx = SQL

/** What every domain of the PostgreSQL store shares: statements and transactions, errors mapped to the port's. */
export interface PgContext {
  run<T>(fn: (sql: SQL) => Promise<T>): Promise<T>
  tx<T>(fn: (tx: Tx) => Promise<T>): Promise<T>
  /** One statement that commits on its own, retried on a deadlock as `tx` is. */
  atomic<T>(fn: (sql: SQL) => Promise<T>): Promise<T>
  /** Whether a store transaction is open (statements join it). */
  readonly inTransaction: boolean
  /**
   * After a write committed: what it changed, for this process's caches at once (or at the open
   * store transaction's COMMIT). Other instances hear of it through the triggers' NOTIFY.
   */
  emit(change: Change): void
}

/** `result`, once `change` (if any) is emitted: call it with what a write returned after it committed. */
export function emitting<T>(ctx: PgContext, result: T, change: Change | undefined): T {
  if (change) ctx.emit(change)
  return result
}

// int8 columns come back as strings; times stay far below 2^53.
export const n = (v: unknown) => Number(v)
/** A jsonb array of strings (Bun's client hands jsonb back parsed, or as text). */
export const json = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v) as string[]
export const toUser = (r: Row): UserRecord => ({
  id: r.id as string,
  email: r.email as string,
  fullName: r.full_name as string,
  avatarUrl: r.avatar_url as string | null,
  emailVerified: r.email_verified as boolean,
  // Only the queries that select them (a session's user, findUser) carry the language columns.
  ...(r.locale === undefined ? {} : { locale: r.locale as string | null, timeZone: r.time_zone as string | null }),
})

/**
 * SQLSTATEs that mean "no connection to be had", whenever they arrive: connection exceptions
 * (08), authorization (28: a password changed under us), insufficient resources (53: too many
 * connections, disk full), operator intervention (57P: shutdown, restart), system errors (58),
 * a database that is gone (3D000) or refuses connections (55000: ALLOW_CONNECTIONS false, a
 * restore or fail-over in progress — none of Latchkey's own statements raises it).
 */
const UNAVAILABLE = /^(08|28|53|57P|58)|^3D000$|^55000$/

/** Errors as the port names them: a unique violation, bad input, or a database out of reach (503). */
export function portError(error: unknown): unknown {
  const e = error as { code?: string; errno?: string; constraint?: string } | undefined
  const code = e?.code ?? ''
  const state = e?.errno ?? ''
  if (state === '23505') return new UniqueViolation(e?.constraint ?? '')
  // A NUL byte or other text PostgreSQL cannot hold (SQLite can): bad input, not a fault.
  if (state === '22021' || state === '22P05') return new InvalidRequest('a parameter holds a character that cannot be stored')
  if (/CONNECTION|ECONN|TIMEOUT|ENOTFOUND|EHOSTUNREACH|EPIPE/.test(code) || UNAVAILABLE.test(state)) return new DatabaseUnavailable(error)
  return error
}

/**
 * A transaction-scoped advisory lock on a name: writers of one user's settings, one consent, one
 * throttle row queue on it. It is its own statement: under READ COMMITTED a statement reads the
 * snapshot taken when it began, so the reads that the lock protects must come after it.
 */
export async function lock(tx: Tx, name: string): Promise<void> {
  await tx`SELECT pg_advisory_xact_lock(hashtextextended(${name}, 0))`
}
