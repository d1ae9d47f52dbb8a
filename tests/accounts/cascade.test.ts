import { describe, expect, test } from 'bun:test'
import { createSession } from '../../src/accounts/sessions'
import { issueCode } from '../../src/oauth/codes'
import { addClient, addUser, createTestApp, mintToken, unlimited } from '../helpers'

const TABLES = ['consents', 'auth_codes', 'access_tokens', 'settings', 'setting_counts', 'sessions'] as const

async function world() {
  const t = await createTestApp()
  const { client } = await addClient(t)
  const user = await addUser(t)
  const now = t.clock.now()
  await issueCode(t.store, { clientId: client.id, userId: user.id, redirectUri: 'https://app.example/callback', scope: 'email', codeChallenge: null }, now, 60, { scopes: ['email'], canonicalOrder: ['email'] })
  await mintToken(t, client.id, user.id, 'email')
  await t.store.settings.saveSetting(user.id, client.id, 'k', '1', unlimited(now))
  await createSession(t.store, user.id, now, { amr: ['pwd'] })
  const counts = async () => Promise.all(TABLES.map(async (table) => (await t.row(`SELECT CAST(count(*) AS INTEGER) AS n FROM ${table}`))!.n))
  expect(await counts()).toEqual([1, 2, 1, 1, 1, 1])
  return { t, client, user, counts }
}

describe('deleting a user or an application', () => {
  test('a user takes their grants, codes, tokens, settings and sessions with them', async () => {
    const { t, user, counts } = await world()
    expect(await t.store.users.deleteUser(user.id)).toBe(true)
    expect(await counts()).toEqual([0, 0, 0, 0, 0, 0])
  })

  test('an application takes its grants, codes, tokens and settings; the user keeps their session', async () => {
    const { t, client, counts } = await world()
    expect(await t.store.clients.deleteClient(client.id)).toBe(true)
    expect(await counts()).toEqual([0, 0, 0, 0, 0, 1])
  })
})
