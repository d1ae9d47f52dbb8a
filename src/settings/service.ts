import type { Preconditions, SaveRules, SettingRefusal, Store, StoredSetting } from '../db/store'
import { PreconditionFailed, QuotaExceeded } from '../lib/errors'

export type { StoredSetting }
export { etagMatches, etagOf } from '../db/store'

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

/** A write the store refused, as the error the API answers (412 for a precondition, 409 for a quota). */
export function refusalError(refused: SettingRefusal, rules: Preconditions & Partial<SaveRules>): Error {
  switch (refused) {
    case 'if-match':
      return new PreconditionFailed('If-Match does not match the stored version')
    case 'if-none-match':
      return new PreconditionFailed(rules.ifNoneMatch?.trim() === '*' ? 'the key already exists' : 'If-None-Match matches the stored version')
    case 'max-keys':
      return new QuotaExceeded(`this application may keep at most ${rules.maxKeys} settings per user`)
    case 'max-bytes':
      return new QuotaExceeded(`a user may keep at most ${rules.maxUserBytes} bytes of settings across all applications`)
  }
}
