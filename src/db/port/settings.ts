import { sha256 } from '../../lib/crypto'

export interface StoredSetting {
  key: string
  /** Serialized JSON exactly as stored. */
  value: string
  updatedAt: number
}

/** A user's settings footprint: keys in one application, value bytes in all of them. */
export interface SettingsUsage {
  keys: number
  bytes: number
}

/** One change of settings sync: a key at a revision, and its state after it (none: deleted). */
export interface SettingChange {
  revision: number
  key: string
  setting: StoredSetting | undefined
}

export interface RemoteSettingChange {
  userId: string
  clientId: string
  revision: number
}

/** What changed after a revision: each key once, at its latest state, in revision order. */
export interface SettingsDelta {
  /** The (user, app)'s current revision (0: never changed). */
  revision: number
  /** Changes through this revision were purged: an older `since` cannot be answered. */
  purgedThrough: number
  changes: SettingChange[]
}

/** `If-Match` / `If-None-Match` as sent (RFC 9110 §13.1.1–2): `*` or a list of ETags. */
export interface Preconditions {
  ifMatch?: string
  ifNoneMatch?: string
}

/** What a write must respect: the preconditions, SETTINGS_MAX_KEYS for a new key, SETTINGS_MAX_USER_BYTES for any growth. */
export interface SaveRules extends Preconditions {
  /** The value's UTF-8 length, as measured against SETTINGS_MAX_VALUE_BYTES. */
  valueBytes: number
  now: number
  maxKeys: number
  maxUserBytes: number
}

/** Why a write was refused: a precondition (412) or a quota (409). */
export type SettingRefusal = 'if-match' | 'if-none-match' | 'max-keys' | 'max-bytes'

export type SaveOutcome = { ok: true; setting: StoredSetting; revision: number } | { ok: false; refused: SettingRefusal }
export type DeleteOutcome = { ok: true; revision: number } | { ok: false; refused: 'if-match' | 'if-none-match' | 'missing' }

/** A strong validator for one stored version (RFC 9110 §8.8.3); PostgreSQL's settings functions spell it the same. */
export function etagOf(s: StoredSetting): string {
  return `"${sha256(`${s.updatedAt}:${s.value}`).slice(0, 27)}"`
}

/** An If-Match / If-None-Match value as what it names: `*` (any stored version), or its ETags, trimmed. */
export function etagList(header: string): '*' | string[] {
  return header.trim() === '*' ? '*' : header.split(',').map((tag) => tag.trim())
}

/** Whether an If-Match / If-None-Match value (`*` or a list of ETags) matches `etag`. */
export function etagMatches(header: string, etag: string | undefined): boolean {
  if (etag === undefined) return false
  const list = etagList(header)
  return list === '*' || list.includes(etag)
}

/** The preconditions on the stored version (none: absent): a refusal, or undefined. */
export function judgePreconditions(current: StoredSetting | undefined, pre: Preconditions): 'if-match' | 'if-none-match' | undefined {
  const etag = current && etagOf(current)
  if (pre.ifMatch !== undefined && !etagMatches(pre.ifMatch, etag)) return 'if-match'
  if (pre.ifNoneMatch !== undefined && etagMatches(pre.ifNoneMatch, etag)) return 'if-none-match'
  return undefined
}

/**
 * The rules of a write on the locked state, for an engine that decides them in code (SQLite;
 * PostgreSQL's `latchkey_save_setting` is the same in SQL): a refusal, or the new `updated_at`,
 * which advances on every write, even two in one millisecond. `usage` is read only when needed.
 */
export function judgeSave(current: StoredSetting | undefined, usage: () => SettingsUsage, rules: SaveRules): SettingRefusal | number {
  const failed = judgePreconditions(current, rules)
  if (failed) return failed
  if (!current && usage().keys >= rules.maxKeys) return 'max-keys'
  const growth = rules.valueBytes - (current ? Buffer.byteLength(current.value) : 0)
  if (growth > 0 && usage().bytes + growth > rules.maxUserBytes) return 'max-bytes'
  return current ? Math.max(rules.now, current.updatedAt + 1) : rules.now
}

export interface SettingsStore {
  /** The settings, sorted by key, and the revision they are at (read together). */
  listSettings(userId: string, clientId: string): Promise<{ settings: StoredSetting[]; revision: number }>
  getSetting(userId: string, clientId: string, key: string): Promise<StoredSetting | undefined>
  /**
   * Upserts one setting if `rules` allow it on the stored version and the user's usage (see
   * `judgeSave`; PostgreSQL decides the same in SQL): a refusal writes nothing. Two writers for
   * one user never interleave: quotas and If-Match hold under concurrency, and the (user, app)'s
   * next revision is taken in the same transaction (gap-free; other instances hear of it once it
   * is durable).
   */
  saveSetting(userId: string, clientId: string, key: string, value: string, rules: SaveRules): Promise<SaveOutcome>
  /** Deletes one setting if the preconditions hold on the stored version: its revision, a refusal, or `missing`. */
  deleteSetting(userId: string, clientId: string, key: string, now: number, pre: Preconditions): Promise<DeleteOutcome>
  /** Deletes all of a user's settings for an app: one revision per key, returned in order. */
  deleteAppSettings(userId: string, clientId: string, now: number): Promise<SettingChange[]>
  /** What changed after `since`, read in one snapshot with the current revision. */
  changesSince(userId: string, clientId: string, since: number): Promise<SettingsDelta>
  /** Every setting of the user, per app (the account's data download). */
  exportSettings(userId: string): Promise<Array<{ clientId: string; settings: StoredSetting[] }>>
  /**
   * What deleting a user (or an app) takes with it, for /admin's confirmation page: their
   * settings, and how many apps (users) hold a consent or settings with them. Counted, not read.
   */
  footprint(of: { userId: string } | { clientId: string }): Promise<{ settings: number; others: number }>
  /**
   * Other instances' changes (PostgreSQL: NOTIFY at commit); SQLite has one writing process and
   * never calls. `undefined`: the feed was down and is back — anything may have been missed.
   * `alive` says whether the feed can be trusted now.
   */
  onRemoteChange(listener: (change: RemoteSettingChange | undefined) => void): { alive(): boolean; close(): Promise<void> }
}
