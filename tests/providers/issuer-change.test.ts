/**
 * An identity is the provider and its subject (SPEC "Sign in with another account", Linking), and a
 * subject is unique only at its issuer (OpenID Connect Core §2): GitHub's and a GitHub Enterprise's
 * numeric ids, or two Keycloaks' user ids, are different people. So a provider whose accounts are
 * connected keeps its issuer, GitHub API and kind — `provider update` and `apply` refuse to move it
 * (changing nothing), else the new issuer's subject 1234 would sign in to whoever had 1234 at the
 * old one. The check is the write's own (ProviderStore.updateProvider), and every identity write
 * checks the provider is still at the origin its sign-in was checked against: a move between the
 * two links nothing (two instances at once: tests/db/providers.test.ts). In process, on SQLite
 * and PostgreSQL.
 */
import { beforeEach, expect, test } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ApplyError, planApply } from '../../src/admin/declarative'
import { ProviderInputError, createProvider, updateProvider } from '../../src/providers/service'
import { settle, type Settled } from '../../src/providers/linking'
import { addUser, createTestApp, type TestApp } from '../helpers'

const dir = mkdtempSync(join(tmpdir(), 'latchkey-issuer-'))
writeFileSync(join(dir, 'acme.secret'), 'acme-provider-secret-0123456789\n', { mode: 0o600 })

let t: TestApp
beforeEach(async () => {
  t = await createTestApp()
})

const OLD = 'https://sso.acme.example'
const NEW = 'https://sso2.acme.example'
const acme = (input: Record<string, unknown> = {}) =>
  createProvider(t.store, t.ctx.sealKey, { id: 'acme', name: 'Acme', issuer: OLD, clientId: 'latchkey', clientSecret: 's3cret-s3cret', ...input }, [], t.clock.now())
const update = (id: string, input: Record<string, unknown>) => updateProvider(t.store, t.ctx.sealKey, id, input, [], t.clock.now())
const MOVED = (id: string, at: string) =>
  `1 account is connected through ${id} at ${at}; a subject is unique only at its issuer (OpenID Connect Core §2), so another issuer's could sign in to it: create a new provider instead`

async function connectAnn(providerId: string) {
  const ann = await addUser(t)
  expect(await t.store.providers.linkIdentity({ providerId, subject: '1234', userId: ann.id, email: 'ann@example.com', origin: (await t.store.providers.findProvider(providerId))! }, t.clock.now())).toBe('linked')
}

test('provider update refuses a new issuer, GitHub API or kind while accounts are connected, and changes nothing', async () => {
  await acme()
  await createProvider(t.store, t.ctx.sealKey, { id: 'gh', name: 'GitHub', kind: 'github', clientId: 'gh-client', clientSecret: 's3cret-s3cret' }, [], t.clock.now())
  await connectAnn('acme')
  await t.store.providers.linkIdentity({ providerId: 'gh', subject: '1234', userId: (await t.store.users.findUserByEmail('ann@example.com'))!.id, email: null, origin: (await t.store.providers.findProvider('gh'))! }, t.clock.now())
  const before = await t.store.providers.listProviders()

  await expect(update('acme', { issuer: NEW })).rejects.toThrow(new ProviderInputError(MOVED('acme', OLD)))
  await expect(update('acme', { kind: 'google' })).rejects.toThrow(new ProviderInputError(MOVED('acme', OLD)))
  await expect(update('gh', { apiUrl: 'https://ghe.acme.example/api/v3' })).rejects.toThrow(new ProviderInputError(MOVED('gh', 'https://api.github.com')))
  expect(await t.store.providers.listProviders()).toEqual(before)

  // Everything else still changes.
  expect(await update('acme', { name: 'Acme SSO', allowCreate: true })).toMatchObject({ name: 'Acme SSO', issuer: OLD, allowCreate: true })
})

test('with no account connected, the issuer changes', async () => {
  await acme()
  expect(await update('acme', { issuer: NEW })).toMatchObject({ issuer: NEW })
})

test('apply refuses a new issuer while accounts are connected, before any write', async () => {
  await acme()
  await connectAnn('acme')
  const doc = { providers: [{ id: 'acme', name: 'Acme SSO', issuer: NEW, client_id: 'latchkey', secret_file: 'acme.secret' }] }
  let errors: string[] = []
  try {
    await planApply(t.store, t.config, doc, { prune: false, baseDir: dir, now: t.clock.now() })
  } catch (error) {
    expect(error).toBeInstanceOf(ApplyError)
    errors = (error as ApplyError).errors
  }
  expect(errors).toEqual([`providers[0].issuer: ${MOVED('acme', OLD)}`])
  expect(await t.store.providers.findProvider('acme')).toMatchObject({ name: 'Acme', issuer: OLD })
})

test('an answer checked against the old issuer writes nothing once the provider moved: no identity, no account, no sign-in by an identity; the sign-in fails', async () => {
  const checked = await acme({ allowCreate: true, linkVerifiedEmail: true })
  const ann = await addUser(t)
  await t.rows('UPDATE users SET email_verified = (1 = 1)')
  // The operator moves it (nothing connected yet) while an answer of the old issuer is being checked.
  expect(await update('acme', { issuer: NEW })).toMatchObject({ issuer: NEW })
  const answer = (subject: string, email: string) => ({ subject, email, emailVerified: true, name: 'Someone', hd: null, mfa: false })
  const failed: Settled = { kind: 'refused', status: 400, key: 'error.providerFailed', params: undefined, reason: 'provider moved' }
  expect(await settle(t.ctx, checked, answer('1234', 'ann@example.com'), null)).toEqual(failed)
  expect(await settle(t.ctx, checked, answer('5678', 'new@example.com'), null)).toEqual(failed)
  expect(await t.rows('SELECT subject FROM user_identities')).toEqual([])
  expect((await t.rows('SELECT email FROM users')).map((r) => r.email)).toEqual([ann.email])
  // At its new issuer, the same answers link and create as usual.
  const moved = (await t.store.providers.findProvider('acme'))!
  expect(await settle(t.ctx, moved, answer('1234', 'ann@example.com'), null)).toEqual({ kind: 'sign-in', userId: ann.id, how: 'verified-email' })
  expect(await settle(t.ctx, checked, answer('1234', 'ann@example.com'), null)).toEqual(failed)
})

test("apply's plan is a read: an account connected between the plan and its apply is counted by the write, which refuses", async () => {
  await acme()
  const doc = { providers: [{ id: 'acme', name: 'Acme SSO', issuer: NEW, client_id: 'latchkey', secret_file: 'acme.secret' }] }
  const plan = await planApply(t.store, t.config, doc, { prune: false, baseDir: dir, now: t.clock.now() })
  expect(plan.lines).toEqual(['~ provider acme: name, issuer, secret'])
  await connectAnn('acme')
  const refused = await plan.apply().catch((error: unknown) => error)
  expect(refused).toBeInstanceOf(ApplyError)
  expect((refused as ApplyError).errors).toEqual([`providers: ${MOVED('acme', OLD)}`])
  expect(await t.store.providers.findProvider('acme')).toMatchObject({ name: 'Acme', issuer: OLD })
})
