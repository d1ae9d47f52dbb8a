/**
 * The providers store with two instances (PostgreSQL) or two processes (SQLite) on one database:
 * a state is taken once, an identity is made once, and two disconnects at once never take the
 * last two ways in.
 */
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { ProviderMoved, UniqueViolation, type ProviderRecord, type Store } from '../../src/db/store'
import { ProviderInputError, sealKeyOf, sealSecret, updateProvider } from '../../src/providers/service'
import { nextTurn } from '../helpers'
import type { PgStore } from '../../src/db/pg/store'
import { openTestStorePair, testEngine, type TestStorePair } from '../store'
import { until } from '../wait'

let pair: TestStorePair
beforeEach(async () => {
  pair = await openTestStorePair()
})
afterEach(() => pair.close())

const NOW = Date.UTC(2026, 10, 1)
const provider = (id: string): ProviderRecord => ({
  id,
  name: id,
  kind: 'oidc',
  issuer: `https://${id}.example`,
  apiUrl: null,
  clientId: 'latchkey',
  clientSecretSealed: 'v1.x.y',
  scope: 'openid email',
  allowCreate: true,
  allowedDomains: [],
  linkVerifiedEmail: true,
  trustMfa: false,
  updatedAt: NOW,
})
/** Where a provider's subjects come from, as a sign-in checked them. */
const ORIGIN_OF = (id: string) => ({ kind: 'oidc' as const, issuer: `https://${id}.example`, apiUrl: null })
const user = (id: string, email: string) => ({ id, email, fullName: id, avatarUrl: null, emailVerified: true, passwordHash: '' })

async function seed(store: Store) {
  await store.providers.insertProvider(provider('acme'), NOW)
  await store.providers.insertProvider(provider('corp'), NOW)
}

test('a state is taken by one of two callbacks at once; an expired one by none', async () => {
  const { store, other } = pair
  await seed(store)
  for (const [hash, expiresAt] of [
    ['s1', NOW + 60_000],
    ['s2', NOW - 1],
  ] as const)
    await store.providers.insertState({ stateHash: hash, providerId: 'acme', browserHash: 'b', nonce: 'n', returnTo: '/account', userId: null, expiresAt })
  const taken = await Promise.all([store.providers.takeState('s1', NOW), other.providers.takeState('s1', NOW)])
  expect(taken.filter(Boolean)).toEqual([{ stateHash: 's1', providerId: 'acme', browserHash: 'b', nonce: 'n', returnTo: '/account', userId: null, expiresAt: NOW + 60_000 }])
  expect(await store.providers.takeState('s2', NOW)).toBeUndefined()
  expect(await pair.rows('SELECT state_hash FROM provider_states')).toEqual([])
})

test('two first sign-ins of one identity at once make one account; the other sees it', async () => {
  const { store, other } = pair
  await seed(store)
  const identity = { providerId: 'acme', subject: 'sub-1', email: 'new@example.com', origin: ORIGIN_OF('acme') }
  const outcomes = await Promise.allSettled([store.providers.createWithIdentity(user('u1', 'new@example.com'), identity, NOW), other.providers.createWithIdentity(user('u2', 'new@example.com'), identity, NOW)])
  expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected'])
  expect((outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult).reason).toBeInstanceOf(UniqueViolation)
  const winner = (await pair.rows('SELECT id FROM users'))[0]!.id
  expect(await other.providers.useIdentity({ providerId: 'acme', subject: 'sub-1', email: 'new@example.com', origin: ORIGIN_OF('acme') }, NOW)).toBe(winner as string)
  // Linking the same subject to someone else: taken; nor does a verified-address link move it.
  await store.users.insertUser(user('u3', 'three@example.com'), NOW)
  expect(await other.providers.linkIdentity({ providerId: 'acme', subject: 'sub-1', userId: 'u3', email: null, origin: ORIGIN_OF('acme') }, NOW)).toBe('taken')
  expect(await store.providers.linkByVerifiedEmail({ providerId: 'acme', subject: 'sub-1', email: 'three@example.com', origin: ORIGIN_OF('acme') }, NOW, () => null)).toBeUndefined()
  expect((await pair.rows('SELECT user_id FROM user_identities')).map((r) => r.user_id)).toEqual([winner])
})

test('two disconnects at once, of the last two ways in of an account without password or passkey: one is refused', async () => {
  const { store, other } = pair
  await seed(store)
  await store.providers.createWithIdentity(user('u1', 'ann@example.com'), { providerId: 'acme', subject: 'a', email: null, origin: ORIGIN_OF('acme') }, NOW)
  expect(await store.providers.linkIdentity({ providerId: 'corp', subject: 'c', userId: 'u1', email: null, origin: ORIGIN_OF('corp') }, NOW)).toBe('linked')
  const outcomes = await Promise.all([store.providers.unlinkIdentity('u1', 'acme'), other.providers.unlinkIdentity('u1', 'corp')])
  expect(outcomes.sort()).toEqual(['done', 'last'])
  expect(await store.providers.listIdentities('u1')).toHaveLength(1)
  expect(await store.providers.unlinkIdentity('u1', 'nowhere')).toBe('unknown')
})

test('a passkey and a connected account at once: disconnecting leaves the passkey; the last passkey of an account without a password stays even while an account is connected; a password goes only while a passkey stays', async () => {
  const { store, other } = pair
  await seed(store)
  await store.providers.createWithIdentity(user('u1', 'ann@example.com'), { providerId: 'acme', subject: 'a', email: null, origin: ORIGIN_OF('acme') }, NOW)
  await store.mfa.addPasskey({ credentialId: 'c1', userId: 'u1', name: 'Laptop', publicKey: 'pk', signCount: 0, transports: [], createdAt: NOW, lastUsedAt: null })
  for (const [first, second] of [
    [store, other],
    [other, store],
  ] as const) {
    const [passkey, unlinked] = await Promise.all([first.mfa.removePasskey('u1', 'c1'), second.providers.unlinkIdentity('u1', 'acme')])
    // The passkey is the one way to confirm the account's own changes: it stays, on either instance.
    expect([passkey, unlinked]).toEqual(['last', 'done'])
    expect((await store.mfa.listPasskeys('u1')).length).toBe(1)
    await store.providers.linkIdentity({ providerId: 'acme', subject: 'a', userId: 'u1', email: null, origin: ORIGIN_OF('acme') }, NOW)
  }
  // The password likewise: with corp connected and no passkey it stays; corp may go (the password signs in).
  await store.users.insertUser({ ...user('u2', 'bob@example.com'), passwordHash: 'hash' }, NOW)
  expect(await store.providers.linkIdentity({ providerId: 'corp', subject: 'b', userId: 'u2', email: null, origin: ORIGIN_OF('corp') }, NOW)).toBe('linked')
  expect(await other.mfa.removePassword('u2')).toBe('last')
  expect(await store.providers.unlinkIdentity('u2', 'corp')).toBe('done')
  expect(await store.providers.listIdentities('u2')).toHaveLength(0)
})

test("an operator moving a provider's issuer and a sign-in linking an identity at the old one, on two instances at once: never both", async () => {
  const { store, other } = pair
  await seed(store)
  await store.users.insertUser(user('u1', 'ann@example.com'), NOW)
  const key = await sealKeyOf(store, NOW)
  await store.providers.updateProvider({ ...provider('acme'), clientSecretSealed: await sealSecret(key, 'acme', 'acme-secret') })
  const OLD = ORIGIN_OF('acme')
  for (let round = 0; round < 24; round++) {
    // The link starts up to a few turns of the event loop (SQLite) or milliseconds (PostgreSQL's round
    // trips) after the move: some land before it, some inside its check-then-write, some after it.
    const delay = round % 12
    const [moved, linked] = await Promise.allSettled([
      updateProvider(store, key, 'acme', { issuer: 'https://moved.example' }, [], NOW),
      (async () => {
        if (round < 12) for (let i = 0; i < delay; i++) await nextTurn()
        else await Bun.sleep(delay * 2)
        return other.providers.linkIdentity({ providerId: 'acme', subject: 'sub-1', userId: 'u1', email: null, origin: OLD }, NOW)
      })(),
    ])
    const issuer = (await other.providers.findProvider('acme'))!.issuer
    const identities = await pair.rows('SELECT subject FROM user_identities')
    // Moved and nothing linked at the old issuer, or linked and not moved — never both.
    if (issuer === 'https://moved.example') {
      expect([moved.status, linked.status, identities]).toEqual(['fulfilled', 'rejected', []])
      expect((linked as PromiseRejectedResult).reason).toBeInstanceOf(ProviderMoved)
    } else {
      expect([issuer, linked.status, identities]).toEqual([OLD.issuer, 'fulfilled', [{ subject: 'sub-1' }]])
      expect((moved as PromiseRejectedResult).reason).toBeInstanceOf(ProviderInputError)
    }
    await pair.rows('DELETE FROM user_identities')
    await store.providers.updateProvider({ ...(await store.providers.findProvider('acme'))!, issuer: OLD.issuer })
  }

  // PostgreSQL, made certain: a third transaction holds the provider's row (FOR NO KEY UPDATE, as an
  // UPDATE of it would) while the move and then the link start; each must wait on the row (a move
  // that counted before waiting, and a link that did not hold the row, would both get through).
  // SQLite's writer runs each job whole, so no job can start inside another.
  if (testEngine !== 'postgres') return
  let release!: () => void
  const held = new Promise<void>((resolve) => (release = resolve))
  let locked!: () => void
  const isLocked = new Promise<void>((resolve) => (locked = resolve))
  const blocker = (store as PgStore).tx(async (tx) => {
    await tx`SELECT 1 FROM providers WHERE id = 'acme' FOR NO KEY UPDATE`
    locked()
    await held
  })
  await isLocked
  const waiting = async () => Number((await pair.row("SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND locktype IN ('tuple', 'transactionid')"))!.n)
  const move = updateProvider(store, key, 'acme', { issuer: 'https://moved.example' }, [], NOW).then(
    () => 'moved',
    (error: unknown) => error,
  )
  await until(async () => (await waiting()) === 1, 'the move waiting on the row')
  let linkDone = false
  const link = other.providers
    .linkIdentity({ providerId: 'acme', subject: 'sub-1', userId: 'u1', email: null, origin: OLD }, NOW)
    .then(
      (outcome) => outcome,
      (error: unknown) => error,
    )
    .finally(() => (linkDone = true))
  await until(async () => linkDone || (await waiting()) === 2, 'the link waiting on the row, or done')
  release()
  await blocker
  const [moved, linked] = await Promise.all([move, link])
  const issuer = (await other.providers.findProvider('acme'))!.issuer
  const identities = await pair.rows('SELECT subject FROM user_identities')
  if (issuer === 'https://moved.example') expect([moved, linked instanceof ProviderMoved, identities]).toEqual(['moved', true, []])
  else expect([moved instanceof ProviderInputError, linked, identities]).toEqual([true, 'linked', [{ subject: 'sub-1' }]])
})

test('the purge drops sign-ins in flight past their expiry, and only those', async () => {
  const { store } = pair
  await seed(store)
  for (const [hash, expiresAt] of [
    ['old', NOW - 1],
    ['live', NOW + 60_000],
  ] as const)
    await store.providers.insertState({ stateHash: hash, providerId: 'acme', browserHash: 'b', nonce: 'n', returnTo: null, userId: null, expiresAt })
  expect(await store.purgeExpired(NOW, { usedCodes: 0, throttle: 0, refreshGrace: 0, retiredKeys: 0, mail: 0, settingChanges: 0 })).toBeGreaterThanOrEqual(1)
  expect((await pair.rows('SELECT state_hash FROM provider_states')).map((r) => r.state_hash)).toEqual(['live'])
})

/** Ann: a password; Bob: acme only; Cat: a passkey; Dan: corp too; Eve: corp only (not connected through acme). */
async function seedPeople(store: Store) {
  await seed(store)
  const acme = (subject: string) => ({ providerId: 'acme', subject, email: null, origin: ORIGIN_OF('acme') })
  await store.users.insertUser({ ...user('ann', 'ann@example.com'), passwordHash: 'hash' }, NOW)
  expect(await store.providers.linkIdentity({ ...acme('a'), userId: 'ann' }, NOW)).toBe('linked')
  for (const [id, subject] of [['bob', 'b'], ['cat', 'c'], ['dan', 'd']] as const) await store.providers.createWithIdentity(user(id, `${id}@example.com`), acme(subject), NOW)
  await store.mfa.addPasskey({ credentialId: 'c1', userId: 'cat', name: 'Laptop', publicKey: 'pk', signCount: 0, transports: [], createdAt: NOW, lastUsedAt: null })
  expect(await store.providers.linkIdentity({ providerId: 'corp', subject: 'd', userId: 'dan', email: null, origin: ORIGIN_OF('corp') }, NOW)).toBe('linked')
  await store.providers.createWithIdentity(user('eve', 'eve@example.com'), { providerId: 'corp', subject: 'e', email: null, origin: ORIGIN_OF('corp') }, NOW)
}

test("deleting a provider names who is connected through it and whom it leaves with no way in; refused on request while anyone would be, and nothing changes", async () => {
  const { store, other } = pair
  await seedPeople(store)
  expect(await other.providers.providerReach('acme')).toEqual({ connected: 4, stranded: 1 })
  expect(await other.providers.providerReach('corp')).toEqual({ connected: 2, stranded: 1 })
  expect(await other.providers.providerReach('nowhere')).toBeUndefined()
  const identities = async () => (await pair.rows('SELECT provider_id, user_id FROM user_identities ORDER BY provider_id, user_id')).map((r) => `${r.provider_id}:${r.user_id}`)
  const before = await identities()
  expect(await other.providers.deleteProvider('acme', { refuseStranding: true })).toEqual({ connected: 4, stranded: 1, deleted: false })
  expect([await identities(), (await store.providers.listProviders()).map((p) => p.id)]).toEqual([before, ['acme', 'corp']])
  // Bob sets a password: nobody is left without a way in, and it goes.
  expect(await store.mfa.setPassword('bob', 'hash')).toBe(true)
  expect(await other.providers.deleteProvider('acme', { refuseStranding: true })).toEqual({ connected: 4, stranded: 0, deleted: true })
  expect(await identities()).toEqual(['corp:dan', 'corp:eve'])
  // Dan's other account is now his only way in; without the refusal a provider goes whoever it strands.
  expect(await store.providers.providerReach('corp')).toEqual({ connected: 2, stranded: 2 })
  expect(await other.providers.deleteProvider('corp')).toEqual({ connected: 2, stranded: 2, deleted: true })
  expect([await identities(), await store.providers.listProviders()]).toEqual([[], []])
  expect(await other.providers.deleteProvider('corp')).toBeUndefined()
})

test('a password removed while its provider is deleted (refusing to strand anyone), on two instances at once: never both', async () => {
  const { store, other } = pair
  await seedPeople(store)
  expect(await store.mfa.setPassword('bob', 'hash')).toBe(true)
  // Ann (a password and acme) is the one who may be stranded.
  const STRANDED = { connected: 4, stranded: 1, deleted: false }

  // PostgreSQL, made certain: a third transaction holds Ann's row (as removePassword does) and takes
  // her password; the deletion must wait on her row and count after that commits (one that counted
  // without her row's lock would see the password and delete). SQLite's writer runs each job whole.
  if (testEngine === 'postgres') {
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    let locked!: () => void
    const isLocked = new Promise<void>((resolve) => (locked = resolve))
    const blocker = (store as PgStore).tx(async (tx) => {
      await tx`SELECT 1 FROM users WHERE id = 'ann' FOR UPDATE`
      await tx`UPDATE users SET password_hash = '' WHERE id = 'ann'`
      locked()
      await held
    })
    await isLocked
    const waiting = async () => Number((await pair.row("SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND locktype IN ('tuple', 'transactionid')"))!.n)
    const deletion = other.providers.deleteProvider('acme', { refuseStranding: true })
    await until(async () => (await waiting()) === 1, 'the deletion waiting on the row')
    release()
    await blocker
    expect(await deletion).toEqual(STRANDED)
    expect(await store.mfa.setPassword('ann', 'hash')).toBe(true)
  }

  for (const [first, second] of [
    [store, other],
    [other, store],
  ] as const) {
    const [removed, deleted] = await Promise.all([first.mfa.removePassword('ann'), second.providers.deleteProvider('acme', { refuseStranding: true })])
    // Her password is what confirms her account's own changes: it stays while Acme is her only
    // other way (countConfirmingWays), so the deletion strands nobody. (Were it removed first, the
    // deletion would count her and refuse: the PostgreSQL block above holds that order.)
    if (deleted?.deleted) return expect([removed, deleted]).toEqual(['last', { connected: 4, stranded: 0, deleted: true }])
    expect([removed, deleted]).toEqual(['removed', STRANDED])
    expect(await store.mfa.setPassword('ann', 'hash')).toBe(true)
  }
})
