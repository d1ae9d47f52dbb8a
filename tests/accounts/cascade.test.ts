import { describe, expect, test } from 'bun:test'
import { createSession } from '../../src/accounts/sessions'
import { deleteUser } from '../../src/accounts/users'
import { deleteClient } from '../../src/oauth/clients'
import { issueCode } from '../../src/oauth/codes'
import { rememberConsent } from '../../src/oauth/consents'
import { saveSetting } from '../../src/settings/service'
import { addClient, addUser, createTestApp } from '../helpers'

const TABLES = ['consents', 'auth_codes', 'access_tokens', 'settings', 'setting_counts', 'sessions'] as const

async function world() {
  const t = createTestApp()
  const { client } = addClient(t)
  const user = await addUser(t)
  const now = t.clock.now()
  rememberConsent(t.db, user.id, client.id, ['email'], now)
  issueCode(t.db, { clientId: client.id, userId: user.id, redirectUri: 'https://app.example/callback', scope: 'email', codeChallenge: null }, now, 60)
  t.ctx.tokens.issue({ clientId: client.id, userId: user.id, scope: 'email' })
  saveSetting(t.db, { userId: user.id, clientId: client.id, key: 'k', value: '1', valueBytes: 1, now, maxKeys: 10, maxUserBytes: 100 }, {})
  createSession(t.db, user.id, now)
  const count = (table: string) => (t.db.sqlite.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n
  expect(TABLES.map(count)).toEqual([1, 1, 1, 1, 1, 1])
  return { t, client, user, count }
}

describe('deleting a user or an application', () => {
  test('a user takes their grants, codes, tokens, settings and sessions with them', async () => {
    const { t, user, count } = await world()
    expect(deleteUser(t.db, user.id)).toBe(true)
    expect(TABLES.map(count)).toEqual([0, 0, 0, 0, 0, 0])
  })

  test('an application takes its grants, codes, tokens and settings; the user keeps their session', async () => {
    const { t, client, count } = await world()
    expect(deleteClient(t.db, client.id)).toBe(true)
    expect(TABLES.map(count)).toEqual([0, 0, 0, 0, 0, 1])
  })
})
