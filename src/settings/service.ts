import type { SettingsUsage, Store, StoredSetting } from '../db/store'
import { sha256 } from '../lib/crypto'
import { PreconditionFailed, QuotaExceeded } from '../lib/errors'

export type { StoredSetting }

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

/** The `{settings: [...], revision}` body, sorted by key (byte order), with the revision it is at (settings sync). */
export async function listSettingsJson(store: Store, userId: string, clientId: string): Promise<string> {
  const { settings: rows, revision } = await store.settings.listSettings(userId, clientId)
  let body = '{"settings":['
  for (let i = 0; i < rows.length; i++) body += (i ? ',' : '') + settingJson(rows[i]!, clientId)
  return `${body}],"revision":${revision}}`
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

export interface SaveLimits {
  /** The value's UTF-8 length, as measured against SETTINGS_MAX_VALUE_BYTES. */
  valueBytes: number
  now: number
  maxKeys: number
  maxUserBytes: number
}

/**
 * The rules of a write, decided inside the store's transaction on the locked state: the
 * preconditions, SETTINGS_MAX_KEYS for a new key, SETTINGS_MAX_USER_BYTES for any growth.
 * Returns the new `updated_at`, which advances on every write, even two in one millisecond.
 */
export function decideSave(current: StoredSetting | undefined, usage: SettingsUsage, limits: SaveLimits, pre: Preconditions): number {
  checkPreconditions(current, pre)
  if (!current && usage.keys >= limits.maxKeys)
    throw new QuotaExceeded(`this application may keep at most ${limits.maxKeys} settings per user`)
  const growth = limits.valueBytes - (current ? Buffer.byteLength(current.value) : 0)
  if (growth > 0 && usage.bytes + growth > limits.maxUserBytes)
    throw new QuotaExceeded(`a user may keep at most ${limits.maxUserBytes} bytes of settings across all applications`)
  return current ? Math.max(limits.now, current.updatedAt + 1) : limits.now
}
