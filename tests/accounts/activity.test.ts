/**
 * /account's "Recent activity" (SPEC "Your account and your sessions") words the audit log's kinds
 * that are the user's own. Its list is src/audit.ts's kinds but the operator's, so a kind added to
 * the log is either the operator's or needs words here — in every locale — and cannot be forgotten.
 */
import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { ACCOUNT_KINDS, AUDIT_KINDS, OPERATOR_KINDS } from '../../src/audit'
import { SOURCES } from '../../src/i18n/catalog'
import { LOCALES } from '../../src/i18n/locales'
import en from '../../src/i18n/messages/en'
import { addUser, createTestApp, signIn } from '../helpers'
import { get } from './mail-flows'

/** Every string a file of src/ passes as a kind to the audit log (record, event, the admin's and the CLI's helpers), ternaries included. */
function recordedKinds(): Set<string> {
  const kinds = new Set<string>()
  const walk = (dir: string): string[] => readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? walk(join(dir, name)) : [join(dir, name)]))
  for (const file of walk(join(import.meta.dir, '../../src')).filter((f) => /\.tsx?$/.test(f))) {
    const text = readFileSync(file, 'utf8')
    for (const call of text.matchAll(/\b(?:record|event|audit|cliAudit)\(\s*(?:store,\s*)?([^,{)]*)/g))
      for (const literal of call[1]!.matchAll(/'([a-z_]+\.[a-z_]+)'/g)) kinds.add(literal[1]!)
  }
  return kinds
}

describe('the kinds /account shows', () => {
  test('are the audit kinds but the operator\'s; every kind the code records is an audit kind', () => {
    expect([...OPERATOR_KINDS].filter((kind) => !AUDIT_KINDS.includes(kind))).toEqual([])
    expect([...ACCOUNT_KINDS, ...OPERATOR_KINDS].sort()).toEqual([...AUDIT_KINDS].sort())
    const recorded = recordedKinds()
    expect(recorded.size).toBeGreaterThan(40)
    expect([...recorded].filter((kind) => !AUDIT_KINDS.includes(kind))).toEqual([])
  })

  test('each has words in every locale, and no words name a kind it does not show', () => {
    for (const locale of LOCALES) {
      const catalog = SOURCES[locale] as Record<string, unknown>
      expect([locale, ACCOUNT_KINDS.filter((kind) => typeof catalog[`activity.${kind}`] !== 'string')]).toEqual([locale, []])
    }
    const worded = Object.keys(en)
      .filter((key) => key.startsWith('activity.') && !key.startsWith('activity.method.'))
      .map((key) => key.slice('activity.'.length))
    expect(worded.sort()).toEqual([...ACCOUNT_KINDS].sort())
  })

  test('on the page: each of the user\'s own kinds in its words, never its name', async () => {
    const t = await createTestApp()
    const ann = await addUser(t)
    const jar = await signIn(t)
    await t.store.audit.record(ACCOUNT_KINDS.map((kind, i) => ({ at: t.clock.now() + i, kind, userId: ann.id, clientId: null, address: null, userAgent: null, detail: null })))
    const page = await (await get(t, '/account', jar)).text()
    const missing = ACCOUNT_KINDS.filter((kind) => !page.includes(`<span>${(en as Record<string, unknown>)[`activity.${kind}`] as string}</span>`))
    expect(missing).toEqual([])
    expect(ACCOUNT_KINDS.filter((kind) => page.includes(`>${kind}<`))).toEqual([])
  })
})
