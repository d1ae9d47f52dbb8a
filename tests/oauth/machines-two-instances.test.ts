import { afterAll, beforeAll, expect, test } from 'bun:test'
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose'
import { createApp } from '../../src/app'
import { loadConfig } from '../../src/config'
import { createContext } from '../../src/context'
import { manualClock } from '../../src/lib/clock'
import { sha256 } from '../../src/lib/crypto'
import { createClient, deleteClient, DEVICE_CODE, rotateSecret } from '../../src/oauth/clients'
import { newCode } from '../../src/oauth/codes'
import { DEVICE_REDIRECT } from '../../src/oauth/device/pages'
import { createResource } from '../../src/oauth/resources'
import { userCodeHash } from '../../src/oauth/device/codes'
import { insertUser } from '../../src/accounts/users'
import { ORIGIN, testSigningKey } from '../helpers'
import { openTestStorePair, type TestStorePair } from '../store'

/**
 * Issue 38 "Two instances": a client assertion's jti and a device code are used once across two
 * instances on one database (two processes on one SQLite file; two instances on PostgreSQL); a
 * client each instance keeps in memory (src/db/sqlite/client-cache.ts, src/db/pg/client-cache.ts)
 * is refused by both within 100 ms of its secret's rotation or its deletion on one.
 */
let pair: TestStorePair
const clock = manualClock()
type Instance = (path: string, fields: Record<string, string>) => Promise<Response>
let a: Instance
let b: Instance

beforeAll(async () => {
  pair = await openTestStorePair()
  await pair.store.keys.ensureSigningKeys(await testSigningKey(), await testSigningKey('next'))
  const config = loadConfig({ DATABASE_URL: ':memory:', ISSUER: ORIGIN })
  const instance = async (store: typeof pair.store): Promise<Instance> => {
    const app = createApp(await createContext({ store, config, clock }))
    return (path, fields) => app.handle(new Request(ORIGIN + path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) }))
  }
  a = await instance(pair.store)
  b = await instance(pair.other)
})
afterAll(() => pair?.close())

test('a client assertion sent to both instances at once: one token, one 401 invalid_client', async () => {
  await createResource(pair.store, { uri: 'https://reports.example', name: 'Reports', scopes: ['reports:read=Read reports'] }, clock.now())
  const key = await generateKeyPair('ES256', { extractable: true })
  const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(key.publicKey)), kid: 'k' }] })
  const job = (await createClient(pair.store, { name: 'Job', redirectUris: [], public: false, skipConsent: false, grantTypes: ['client_credentials'], allowedScopes: ['reports:read'], authMethod: 'private_key_jwt', jwks }, clock.now())).client
  const sign = (privateKey: CryptoKey) =>
    new SignJWT({ jti: crypto.randomUUID() }).setProtectedHeader({ alg: 'ES256', kid: 'k' }).setIssuer(job.id).setSubject(job.id).setAudience(ORIGIN).setExpirationTime(Math.floor(clock.now() / 1000) + 60).sign(privateKey)
  for (let round = 0; round < 3; round++) {
    const fields = { grant_type: 'client_credentials', scope: 'reports:read', client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: await sign(key.privateKey) }
    const answers = await Promise.all([a('/api/oauth/token', fields), b('/api/oauth/token', fields)])
    expect(answers.map((r) => r.status).sort()).toEqual([200, 401])
  }
})

test('a device code allowed, polled on both instances at once: the tokens once; slow_down on one instance lengthens the interval for the other', async () => {
  const tv = (await createClient(pair.store, { name: 'TV', redirectUris: [], public: true, skipConsent: false, grantTypes: [DEVICE_CODE] }, clock.now())).client.id
  const user = await insertUser(pair.store, { email: 'ann@example.com', fullName: 'Ann', avatarUrl: null, passwordHash: 'x' }, clock.now())
  for (let round = 0; round < 3; round++) {
    const started = (await (await a('/api/oauth/device_authorization', { client_id: tv, scope: 'openid' })).json()) as { device_code: string; user_code: string }
    const poll = (instance: Instance) => instance('/api/oauth/token', { grant_type: DEVICE_CODE, device_code: started.device_code, client_id: tv })
    // The user allows (as /device does: the decision, the code and the consent in one transaction).
    const { record } = newCode({ clientId: tv, userId: user.id, redirectUri: DEVICE_REDIRECT, scope: 'openid', codeChallenge: null }, clock.now(), 600)
    expect(await pair.other.devices.allowDeviceCode(userCodeHash(started.user_code.replace('-', '')), clock.now(), record, { scopes: ['openid'], canonicalOrder: ['openid'] })).toBe(true)
    const answers = await Promise.all([poll(a), poll(b)])
    expect(answers.map((r) => r.status).sort()).toEqual([200, 400])
    clock.advance(10_000)
    expect((await poll(b)).status).toBe(400)
  }
  // slow_down on A is written: B, which never saw a poll, then finds the longer interval.
  const started = (await (await a('/api/oauth/device_authorization', { client_id: tv, scope: 'openid' })).json()) as { device_code: string }
  const poll = (instance: Instance) => instance('/api/oauth/token', { grant_type: DEVICE_CODE, device_code: started.device_code, client_id: tv })
  expect(((await (await poll(a)).json()) as { error: string }).error).toBe('authorization_pending')
  expect(((await (await poll(a)).json()) as { error: string }).error).toBe('slow_down')
  clock.advance(6_000)
  expect(((await (await poll(b)).json()) as { error: string }).error).toBe('slow_down')
  expect(Number((await pair.row('SELECT interval FROM device_codes WHERE device_code_hash = ?', sha256(started.device_code)))!.interval)).toBe(15)
})

test('a device polling both instances, each keeping its code pending in memory: the person allows on one, and the next poll on the other within 100 ms gets the tokens, once', async () => {
  const tv = (await createClient(pair.store, { name: 'Kitchen TV', redirectUris: [], public: true, skipConsent: false, grantTypes: [DEVICE_CODE] }, clock.now())).client.id
  const user = await insertUser(pair.store, { email: 'bo@example.com', fullName: 'Bo', avatarUrl: null, passwordHash: 'x' }, clock.now())
  const started = (await (await a('/api/oauth/device_authorization', { client_id: tv, scope: 'openid' })).json()) as { device_code: string; user_code: string }
  // Each poll 5 s after the last (the clock is shared): a poll that finds nothing, never a slow_down (which writes).
  const poll = async (instance: Instance) => {
    clock.advance(5_000)
    return instance('/api/oauth/token', { grant_type: DEVICE_CODE, device_code: started.device_code, client_id: tv })
  }
  for (const instance of [a, b, a, b]) expect(((await (await poll(instance)).json()) as { error: string }).error).toBe('authorization_pending')
  const { record } = newCode({ clientId: tv, userId: user.id, redirectUri: DEVICE_REDIRECT, scope: 'openid', codeChallenge: null }, clock.now(), 600)
  expect(await pair.other.devices.allowDeviceCode(userCodeHash(started.user_code.replace('-', '')), clock.now(), record, { scopes: ['openid'], canonicalOrder: ['openid'] })).toBe(true)
  // A (which did not decide) hears of it through the feed: PostgreSQL's NOTIFY (drizzle/pg/0027), SQLite's data_version.
  const began = performance.now()
  let answer = await poll(a)
  // Asked again every 5 ms for at most 300 ms: each poll moves the clock 5 s, and at most 60 of them stay inside the code's 600 s.
  while (answer.status === 400 && performance.now() - began < 300) {
    expect(((await answer.json()) as { error: string }).error).toBe('authorization_pending')
    await Bun.sleep(5)
    answer = await poll(a)
  }
  expect(answer.status).toBe(200)
  expect(performance.now() - began).toBeLessThan(100)
  expect(((await (await poll(b)).json()) as { error: string }).error).toBe('invalid_grant')
})

test("a client cached on both instances: its rotated secret and its deletion on one are refused by the other within 100 ms", async () => {
  await createResource(pair.store, { uri: 'https://backups.example', name: 'Backups', scopes: ['backups:write=Write backups'] }, clock.now())
  const { client, secret } = await createClient(pair.store, { name: 'Backup', redirectUris: [], public: false, skipConsent: false, grantTypes: ['client_credentials'], allowedScopes: ['backups:write'] }, clock.now())
  const token = (instance: Instance, clientSecret: string) => instance('/api/oauth/token', { grant_type: 'client_credentials', resource: 'https://backups.example', client_id: client.id, client_secret: clientSecret })
  /** Asks `instance` until it answers `status` (each a real token request: no fixed sleep); the milliseconds that took. */
  const msUntil = async (instance: Instance, clientSecret: string, status: number): Promise<number> => {
    const started = performance.now()
    for (;;) {
      const res = await token(instance, clientSecret)
      const ms = performance.now() - started
      if (res.status === status || ms > 1000) {
        expect(res.status).toBe(status)
        if (status === 401) expect(((await res.json()) as { error: string }).error).toBe('invalid_client')
        return ms
      }
      await new Promise((resolve) => setImmediate(resolve))
    }
  }
  // Both instances hold the client (a first request may race the insert's NOTIFY: asked until served).
  for (const instance of [a, b]) {
    await msUntil(instance, secret!, 200)
    expect((await token(instance, secret!)).status).toBe(200)
  }
  const rotated = (await rotateSecret(pair.store, client.id))!
  expect((await token(a, secret!)).status).toBe(401)
  expect(await msUntil(b, secret!, 401)).toBeLessThan(100)
  expect((await token(b, rotated)).status).toBe(200)

  expect(await deleteClient(pair.store, client.id)).toBe(true)
  expect((await token(a, rotated)).status).toBe(401)
  expect(await msUntil(b, rotated, 401)).toBeLessThan(100)
})

test('a resource registered on one instance: a scope-only client_credentials request finds it on the other within 100 ms', async () => {
  await createResource(pair.store, { uri: 'https://mail.example', name: 'Mail', scopes: ['mail:send=Send mail'] }, clock.now())
  const job = async (name: string, scope: string) => {
    const { client, secret } = await createClient(pair.store, { name, redirectUris: [], public: false, skipConsent: false, grantTypes: ['client_credentials'], allowedScopes: [scope] }, clock.now())
    return (instance: Instance) => instance('/api/oauth/token', { grant_type: 'client_credentials', scope, client_id: client.id, client_secret: secret! })
  }
  /** Asks until answered 200 (a first request may race an insert's NOTIFY); the milliseconds that took. */
  const msUntilServed = async (token: (instance: Instance) => Promise<Response>, instance: Instance) => {
    const started = performance.now()
    let res = await token(instance)
    while (res.status !== 200 && performance.now() - started < 1000) {
      await new Promise((resolve) => setImmediate(resolve))
      res = await token(instance)
    }
    expect(res.status).toBe(200)
    return performance.now() - started
  }
  // Both instances read (and keep) their list of resources.
  const mailer = await job('Mailer', 'mail:send')
  for (const instance of [a, b]) await msUntilServed(mailer, instance)
  await createResource(pair.store, { uri: 'https://calendar.example', name: 'Calendar', scopes: ['calendar:read=Read calendars'] }, clock.now())
  const planner = await job('Planner', 'calendar:read')
  expect((await planner(a)).status).toBe(200)
  expect(await msUntilServed(planner, b)).toBeLessThan(100)
})
