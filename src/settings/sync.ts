import type { SettingChange, SettingsDelta } from '../db/store'
import { Gone, InvalidRequest } from '../lib/errors'
import { etagOf, settingJson } from './service'

const REVISION = /^\d{1,15}$/

/** A revision a client sends back (`since`, `Last-Event-ID`): a non-negative integer, else 400. */
export function parseRevision(raw: string, name: string): number {
  if (!REVISION.test(raw)) throw new InvalidRequest(`${name} must be a non-negative integer revision`)
  return Number(raw)
}

/** Whether `since` can be answered from what is kept: not past the current revision (400), not before what was purged (410). */
export function checkSince(delta: Pick<SettingsDelta, 'revision' | 'purgedThrough'>, since: number, name: string): void {
  if (since > delta.revision) throw new InvalidRequest(`${name} ${since} is past the current revision ${delta.revision}`)
  if (since < delta.purgedThrough) throw new Gone(`changes after revision ${since} are no longer kept; fetch the settings again`)
}

/** One change as `since` lists it: the setting as GET shows it, or `{key, deleted: true}`. */
export function changeJson(change: SettingChange, clientId: string): string {
  return change.setting ? settingJson(change.setting, clientId) : `{"key":"${change.key}","deleted":true}`
}

/** `{revision, changes: [...]}` for `GET /api/settings?since=REV`. */
export function deltaJson(delta: SettingsDelta, clientId: string): string {
  return `{"revision":${delta.revision},"changes":[${delta.changes.map((c) => changeJson(c, clientId)).join(',')}]}`
}

/**
 * One Server-Sent Event: `id:` the revision, `event: set` with the setting and its ETag (quoted
 * as in the header), or `event: delete` with its key.
 */
export function changeEvent(change: SettingChange, clientId: string): string {
  if (!change.setting) return `id: ${change.revision}\nevent: delete\ndata: {"key":"${change.key}"}\n\n`
  const setting = settingJson(change.setting, clientId)
  return `id: ${change.revision}\nevent: set\ndata: ${setting.slice(0, -1)},"etag":${JSON.stringify(etagOf(change.setting))}}\n\n`
}
