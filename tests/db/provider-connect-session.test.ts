/**
 * A connect from /account links an identity only while the connecting session is the user's
 * (ProviderStore.linkIdentity's `session`), held while the link is made: an account recovery (or a
 * sign-out) that ends the session on another instance during the provider's round trip leaves no
 * link behind — else an intruder's connect racing the owner's recovery kept a way in. Two
 * instances (PostgreSQL) or two processes (SQLite) on one database.
 */
import { afterEach, beforeEach, expect, test } from 'bun:test'
import type { ProviderRecord, Store } from '../../src/db/store'
import { openTestStorePair, type TestStorePair } from '../store'

let pair: TestStorePair
beforeEach(async () => {
  pair = await openTestStorePair()
})
afterEach(() => pair.close())

const NOW = Date.UTC(2026, 10, 1)
const acme: ProviderRecord = {
  id: 'acme',
  name: 'Acme',
  kind: 'oidc',
  issuer: 'https://acme.example',
  apiUrl: null,
  clientId: 'latchkey',
  clientSecretSealed: 'v1.x.y',
  scope: 'openid email',
  allowCreate: false,
  allowedDomains: [],
  linkVerifiedEmail: false,
  trustMfa: false,
  updatedAt: NOW,
}

async function seed(store: Store) {
  await store.providers.insertProvider(acme, NOW)
  for (const [id, email] of [
    ['u1', 'ann@example.com'],
    ['u2', 'bob@example.com'],
  ])
    await store.users.insertUser({ id: id!, email: email!, fullName: id!, avatarUrl: null, emailVerified: false, passwordHash: 'x' }, NOW)
  for (const [hash, userId] of [
    ['s-ann', 'u1'],
    ['s-bob', 'u2'],
  ])
    await store.sessions.createSession({ idHash: hash!, sid: `sid-${hash}`, userId: userId!, expiresAt: NOW + 3_600_000, authTime: NOW, amr: ['pwd'], pending: false, userAgent: 'test', address: '127.0.0.1' })
  await store.mail.issueToken({ tokenHash: 'reset-ann', userId: 'u1', purpose: 'reset', email: 'ann@example.com', expiresAt: NOW + 3_600_000 }, null, NOW)
}

const recoverAnn = (store: Store) => store.mail.useToken('reset-ann', ['reset'], NOW, () => ({ passwordHash: 'y', emailVerified: true, endSessions: true, recover: true }))
const link = (store: Store, session: string, subject = 'intruder') => store.providers.linkIdentity({ providerId: 'acme', subject, userId: 'u1', email: null, origin: acme, session }, NOW)

test("a connect links only with the user's own live session", async () => {
  const { store } = pair
  await seed(store)
  expect(await link(store, 'no-such-session')).toBe('signed-out')
  expect(await link(store, 's-bob')).toBe('signed-out')
  expect(await store.providers.listIdentities('u1')).toEqual([])
  expect(await link(store, 's-ann')).toBe('linked')
  expect((await store.providers.listIdentities('u1')).map((i) => i.subject)).toEqual(['intruder'])
})

test('a connect finishing after the recovery that ended its session links nothing', async () => {
  const { store, other } = pair
  await seed(store)
  expect((await recoverAnn(other)).ok).toBe(true)
  expect(await link(store, 's-ann')).toBe('signed-out')
  expect(await store.providers.listIdentities('u1')).toEqual([])
})

test('a connect and a recovery at once, on two instances: no link survives the recovery', async () => {
  const { store, other } = pair
  await seed(store)
  const [linked, recovered] = await Promise.all([link(store, 's-ann'), recoverAnn(other)])
  expect(['linked', 'signed-out']).toContain(linked)
  expect(recovered.ok).toBe(true)
  expect(await store.providers.listIdentities('u1')).toEqual([])
  expect(await other.providers.listIdentities('u1')).toEqual([])
})
