import { and, asc, eq, sql } from 'drizzle-orm'
import { changes, type Db } from '../db/client'
import { prepared } from '../db/prepared'
import { settingCounts, settings } from '../db/schema'
import { sha256 } from '../lib/crypto'
import { PreconditionFailed, QuotaExceeded } from '../lib/errors'

export interface StoredSetting {
  key: string
  /** Serialized JSON exactly as stored; spliced into responses without a parse/stringify round trip. */
  value: string
  updatedAt: number
}

/** A strong validator for one stored version (RFC 9110 §8.8.3). */
export function etagOf(s: StoredSetting): string {
  return `"${sha256(`${s.updatedAt}:${s.value}`).slice(0, 27)}"`
}

const isoTimes = new Map<number, string>()

/** ISO 8601 with milliseconds; memoized, as the same few instants are formatted on every read. */
function isoTime(ms: number): string {
  let iso = isoTimes.get(ms)
  if (iso === undefined) {
    if (isoTimes.size >= 10_000) isoTimes.clear()
    isoTimes.set(ms, (iso = new Date(ms).toISOString()))
  }
  return iso
}

/**
 * The JSON of one setting object, spliced from the stored text. Keys (KEY_PATTERN) and client
 * ids (hex) have no character JSON would escape, so they are quoted as they are.
 */
export function settingJson(s: StoredSetting, clientId: string): string {
  return `{"key":"${s.key}","value":${s.value},"client_id":"${clientId}","updated_at":"${isoTime(s.updatedAt)}"}`
}

const scope = { userId: sql.placeholder('userId'), clientId: sql.placeholder('clientId') }

/** The `{settings: [...]}` body, sorted by key (SQLite's BINARY collation: byte order). */
export function listSettingsJson(db: Db, userId: string, clientId: string): string {
  // Raw rows (`values`) skip Drizzle's per-row object mapping on this hot path.
  const rows = prepared(db, 'settingsList', () =>
    db.orm
      .select({ key: settings.key, value: settings.value, updatedAt: settings.updatedAt })
      .from(settings)
      .where(and(eq(settings.userId, scope.userId), eq(settings.clientId, scope.clientId)))
      .orderBy(asc(settings.key))
      .prepare(),
  ).values({ userId, clientId }) as unknown as Array<[string, string, number]>
  let body = '{"settings":['
  for (let i = 0; i < rows.length; i++) {
    const [key, value, updatedAt] = rows[i]!
    body += (i ? ',' : '') + settingJson({ key, value, updatedAt }, clientId)
  }
  return body + ']}'
}

export function getSetting(db: Db, userId: string, clientId: string, key: string): StoredSetting | undefined {
  return prepared(db, 'settingsGet', () =>
    db.orm
      .select({ key: settings.key, value: settings.value, updatedAt: settings.updatedAt })
      .from(settings)
      .where(and(eq(settings.userId, scope.userId), eq(settings.clientId, scope.clientId), eq(settings.key, sql.placeholder('key'))))
      .prepare(),
  ).get({ userId, clientId, key })
}

/**
 * The user's keys in this application and bytes in all of them, in one read of the rows the
 * triggers keep exact (drizzle/0002, 0004): a user has a row per application, not per key.
 */
function usage(db: Db, userId: string, clientId: string): { keys: number; bytes: number } {
  const row = prepared(db, 'settingsUsage', () =>
    db.orm
      .select({
        keys: sql<number>`coalesce(sum(CASE WHEN ${settingCounts.clientId} = ${scope.clientId} THEN ${settingCounts.n} END), 0)`,
        bytes: sql<number>`coalesce(sum(${settingCounts.bytes}), 0)`,
      })
      .from(settingCounts)
      .where(eq(settingCounts.userId, scope.userId))
      .prepare(),
  ).get({ userId, clientId })
  return row ?? { keys: 0, bytes: 0 }
}

/** `If-Match` / `If-None-Match` as RFC 9110 §13.1.1–2 define them for a state-changing request. */
export interface Preconditions {
  ifMatch?: string
  ifNoneMatch?: string
}

/** Whether an If-Match / If-None-Match value (`*` or a list of ETags) matches `etag`. */
export function etagMatches(header: string, etag: string | undefined): boolean {
  if (header.trim() === '*') return etag !== undefined
  if (etag === undefined) return false
  return header.split(',').some((tag) => tag.trim() === etag)
}

export function checkPreconditions(current: StoredSetting | undefined, pre: Preconditions): void {
  const etag = current && etagOf(current)
  if (pre.ifMatch !== undefined && !etagMatches(pre.ifMatch, etag))
    throw new PreconditionFailed('If-Match does not match the stored version')
  if (pre.ifNoneMatch !== undefined && etagMatches(pre.ifNoneMatch, etag))
    throw new PreconditionFailed(pre.ifNoneMatch.trim() === '*' ? 'the key already exists' : 'If-None-Match matches the stored version')
}

/** Creates or replaces a setting. Call in a write job: the checks and the write are atomic. */
export function saveSetting(
  db: Db,
  input: {
    userId: string
    clientId: string
    key: string
    value: string
    /** The value's UTF-8 length, as measured against SETTINGS_MAX_VALUE_BYTES. */
    valueBytes: number
    now: number
    maxKeys: number
    maxUserBytes: number
  },
  pre: Preconditions,
): StoredSetting {
  const current = getSetting(db, input.userId, input.clientId, input.key)
  checkPreconditions(current, pre)
  const growth = input.valueBytes - (current ? Buffer.byteLength(current.value) : 0)
  if (!current || growth > 0) {
    const used = usage(db, input.userId, input.clientId)
    if (!current && used.keys >= input.maxKeys)
      throw new QuotaExceeded(`this application may keep at most ${input.maxKeys} settings per user`)
    if (growth > 0 && used.bytes + growth > input.maxUserBytes)
      throw new QuotaExceeded(`a user may keep at most ${input.maxUserBytes} bytes of settings across all applications`)
  }
  // updated_at advances on every write, even two in the same millisecond.
  const updatedAt = current ? Math.max(input.now, current.updatedAt + 1) : input.now
  prepared(db, 'settingsUpsert', () =>
    db.orm
      .insert(settings)
      .values({ ...scope, key: sql.placeholder('key'), value: sql.placeholder('value'), updatedAt: sql.placeholder('updatedAt') })
      .onConflictDoUpdate({
        target: [settings.userId, settings.clientId, settings.key],
        set: { value: sql`excluded.value`, updatedAt: sql`excluded.updated_at` },
      })
      .prepare(),
  ).run({ userId: input.userId, clientId: input.clientId, key: input.key, value: input.value, updatedAt })
  return { key: input.key, value: input.value, updatedAt }
}

/** Deletes a setting; false when there was none. Call in a write job. */
export function deleteSetting(db: Db, userId: string, clientId: string, key: string, pre: Preconditions): boolean {
  const current = getSetting(db, userId, clientId, key)
  checkPreconditions(current, pre)
  if (!current) return false
  return (
    changes(
      prepared(db, 'settingsDelete', () =>
        db.orm
          .delete(settings)
          .where(and(eq(settings.userId, scope.userId), eq(settings.clientId, scope.clientId), eq(settings.key, sql.placeholder('key'))))
          .prepare(),
      ).run({ userId, clientId, key }),
    ) > 0
  )
}
