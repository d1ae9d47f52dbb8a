import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { parseChange } from '../../src/db/pg/change-feed'
import { PgClientCache } from '../../src/db/pg/client-cache'
import type { ClientRecord } from '../../src/db/store'
import type { PgStore } from '../../src/db/pg/store'
import { createClient, deleteClient, rotateSecret, updateClient, verifyClientSecret } from '../../src/oauth/clients'
import { openTestStorePair, testEngine, type TestStorePair } from '../store'

/**
 * Issue 38: on PostgreSQL the clients every token, introspection, PAR, device and authorize
 * request authenticates are kept in memory (src/db/pg/client-cache.ts), as on SQLite — and every
 * change to one reaches the next read: this instance's writes at once, another instance's (or a
 * raw statement's) once its NOTIFY arrived (drizzle/pg/0026), within 100 ms; nothing is kept
 * while the feed is down, nor a read that raced a change.
 * Its SQLite twin is tests/db/client-cache.test.ts (TEMP triggers and PRAGMA data_version there).
 */
const postgres = testEngine === 'postgres'
if (!postgres) test.skip('PostgreSQL only (set LATCHKEY_TEST_DATABASE_URL): the SQLite client cache is tested in tests/db/client-cache.test.ts', () => {})

let pair: TestStorePair
let a: PgStore
let b: PgStore
let job: { id: string; secret: string }

beforeEach(async () => {
  if (!postgres) return
  pair = await openTestStorePair()
  a = pair.store as PgStore
  b = pair.other as PgStore
  const inserted = heard(b)
  const { client, secret } = await createClient(a, { name: 'Job', redirectUris: [], public: false, skipConsent: false, grantTypes: ['client_credentials'] }, 0)
  job = { id: client.id, secret: secret! }
  // The insert's NOTIFY (drizzle/pg/0026) arrived: a read from now on races no change.
  await inserted
})

/** The next change naming clients that `store` hears. */
function heard(store: PgStore): Promise<void> {
  return new Promise((resolve) => store.changes.onChange((change) => change?.clients && resolve()))
}
afterEach(() => (postgres ? pair.close() : undefined))

/** The round trips `fn` made to the database through the store. */
async function roundTrips(store: PgStore, fn: () => Promise<unknown>): Promise<number> {
  const before = store.stats.operations
  await fn()
  return store.stats.operations - before
}

/** Reads at `store` until `done` holds for what it found; the milliseconds that took (no fixed sleep; gives up after a second). */
async function msUntil(store: PgStore, id: string, done: (found: Awaited<ReturnType<PgStore['clients']['findClient']>>) => boolean): Promise<number> {
  const started = performance.now()
  for (;;) {
    const found = await store.clients.findClient(id)
    const ms = performance.now() - started
    if (done(found) || ms > 1000) {
      expect(done(found)).toBe(true)
      return ms
    }
    await new Promise((resolve) => setImmediate(resolve))
  }
}

describe.if(postgres)('PostgreSQL client cache', () => {
  test('a client read twice is read once: the same record, frozen; an unknown id is read every time', async () => {
    const first = (await b.clients.findClient(job.id))!
    expect(await roundTrips(b, async () => expect(await b.clients.findClient(job.id)).toBe(first))).toBe(0)
    expect(Object.isFrozen(first) && Object.isFrozen(first.grantTypes)).toBe(true)
    expect(() => (first.grantTypes as string[]).push('authorization_code')).toThrow()
    expect(await roundTrips(b, () => b.clients.findClient('unknown'))).toBe(1)
    expect(await roundTrips(b, () => b.clients.findClient('unknown'))).toBe(1)
  })

  test("this instance's writes reach its next read at once: update, a rotated secret, delete", async () => {
    const first = (await a.clients.findClient(job.id))!
    await updateClient(a, job.id, { ...first, public: false, name: 'Nightly job', authMethod: null })
    expect((await a.clients.findClient(job.id))!.name).toBe('Nightly job')
    expect(await verifyClientSecret(a, job.id, job.secret)).toBeDefined()
    const rotated = (await rotateSecret(a, job.id))!
    expect(await verifyClientSecret(a, job.id, job.secret)).toBeUndefined()
    expect((await verifyClientSecret(a, job.id, rotated))?.id).toBe(job.id)
    expect(await a.clients.setLaunchUrl(job.id, 'https://job.example/')).toBe(true)
    expect((await a.clients.findClient(job.id))!.launchUrl).toBe('https://job.example/')
    expect(await deleteClient(a, job.id)).toBe(true)
    expect(await a.clients.findClient(job.id)).toBeUndefined()
  })

  test("another instance's rotated secret and deletion are refused here within 100 ms", async () => {
    expect(await verifyClientSecret(b, job.id, job.secret)).toBeDefined()
    expect(await roundTrips(b, () => verifyClientSecret(b, job.id, job.secret))).toBe(0)
    const before = (await b.clients.findClient(job.id))!.secretHash
    await rotateSecret(a, job.id)
    expect(await msUntil(b, job.id, (found) => found!.secretHash !== before)).toBeLessThan(100)
    expect(await verifyClientSecret(b, job.id, job.secret)).toBeUndefined()

    expect(await deleteClient(a, job.id)).toBe(true)
    expect(await msUntil(b, job.id, (found) => found === undefined)).toBeLessThan(100)
  })

  test('a raw statement on any column, by any path (no store method), is heard by every instance within 100 ms', async () => {
    await a.clients.findClient(job.id)
    await b.clients.findClient(job.id)
    await pair.rows("UPDATE clients SET require_par = true WHERE id = ?", job.id)
    expect(await msUntil(a, job.id, (found) => found!.requirePar)).toBeLessThan(100)
    expect(await msUntil(b, job.id, (found) => found!.requirePar)).toBeLessThan(100)
  })

  test("a client whose id is a URL with commas (a metadata document's) is named exactly; the others stay cached", async () => {
    const url = 'https://app.example/client,v=2,x.json'
    await a.clients.saveMetadataClient({ ...(await a.clients.findClient(job.id))!, id: url, name: 'App', redirectUris: ['https://app.example/cb'], kind: 'metadata', metadataExpiresAt: 1 }, 0)
    await b.clients.findClient(url)
    await b.clients.findClient(job.id)
    await a.clients.saveMetadataClient({ ...(await a.clients.findClient(url))!, name: 'App 2' }, 0)
    expect(await msUntil(b, url, (found) => found!.name === 'App 2')).toBeLessThan(100)
    expect(await roundTrips(b, () => b.clients.findClient(job.id))).toBe(0)
  })

  test("more than 100 clients changed in one statement empty every instance's client cache", async () => {
    const inserted = heard(b)
    await pair.rows("INSERT INTO clients (id, name, redirect_uris, post_logout_redirect_uris, skip_consent, require_mfa, kind, created_at) SELECT 'c' || g, 'C', '[]'::jsonb, '[]'::jsonb, false, false, 'operator', 0 FROM generate_series(1, 101) AS g")
    await inserted
    await b.clients.findClient(job.id)
    expect(await roundTrips(b, () => b.clients.findClient(job.id))).toBe(0)
    const updated = new Promise((resolve) => b.changes.onChange(resolve))
    await pair.rows("UPDATE clients SET name = name || '!' WHERE id LIKE 'c%' OR id = ?", job.id)
    expect(await msUntil(b, job.id, (found) => found!.name === 'Job!')).toBeLessThan(100)
    // Said as "clients:*" (102 ids: too many to name).
    expect(await updated).toEqual({ clients: 'all' })
  })

  test('while the feed is down nothing is served from the cache, nor kept', async () => {
    const feed = b.changes
    await b.clients.findClient(job.id)
    feed.check = () => false
    try {
      expect(await roundTrips(b, () => b.clients.findClient(job.id))).toBe(1)
      expect(await roundTrips(b, () => b.clients.findClient(job.id))).toBe(1)
    } finally {
      delete (feed as { check?: unknown }).check
    }
  })

  test('a read that raced a change is answered, not kept', async () => {
    const read = b.clients.findClient(job.id)
    // Told while the read is on its way (as a NOTIFY could be): what it finds may be older than the change.
    b.changes.changed({ clients: [job.id] })
    expect((await read)!.id).toBe(job.id)
    expect(await roundTrips(b, () => b.clients.findClient(job.id))).toBe(1)
    expect(await roundTrips(b, () => b.clients.findClient(job.id))).toBe(0)
  })

  test("inside a store transaction (the CLI's) the transaction's own writes are read, and nothing it read is kept", async () => {
    const first = (await a.clients.findClient(job.id))!
    await expect(
      a.transaction(async () => {
        await updateClient(a, job.id, { ...first, public: false, name: 'Never', authMethod: null })
        expect((await a.clients.findClient(job.id))!.name).toBe('Never')
        throw new Error('rolled back')
      }),
    ).rejects.toThrow('rolled back')
    expect((await a.clients.findClient(job.id))!.name).toBe('Job')
  })
})

describe('the clients NOTIFY payload', () => {
  test('names clients by a JSON array (commas in ids), all of them by *, and anything else names nothing', () => {
    expect(parseChange('clients:["a","https://x.example/a,b"]')).toEqual({ clients: ['a', 'https://x.example/a,b'] })
    expect(parseChange('clients:*')).toEqual({ clients: 'all' })
    expect(parseChange('devices')).toEqual({ devices: true })
    expect(parseChange('clients:[1]')).toBeUndefined()
    expect(parseChange('clients:not json')).toBeUndefined()
    expect(parseChange('clients')).toBeUndefined()
  })
})

describe('the client cache is bounded', () => {
  const record = (id: string, uriChars: number): ClientRecord => ({
    id, name: 'App', secretHash: null, redirectUris: [`https://app.example/${'x'.repeat(uriChars)}`], postLogoutRedirectUris: [], skipConsent: false, requireMfa: false,
    kind: 'dynamic', metadataExpiresAt: null, registrationTokenHash: null, idTokenAlg: 'RS256', introspects: [], grantTypes: ['authorization_code'], allowedScopes: [],
    requirePar: false, authMethod: null, jwks: null, jwksUri: null,
  })
  const alive = { onChange: () => {}, check: () => true }

  test('in bytes: past its budget it empties, then keeps on; a client larger than the budget is never kept', () => {
    const cache = new PgClientCache(alive, 100_000)
    for (let i = 0; i < 4; i++) cache.keep(record(`c${i}`, 20_000), cache.read())
    // ~40 KB each (UTF-16): the third would pass 100 KB, so the first two went.
    expect([cache.get('c0'), cache.get('c1'), cache.get('c2')?.id, cache.get('c3')?.id]).toEqual([undefined, undefined, 'c2', 'c3'])
    cache.keep(record('huge', 60_000), cache.read())
    expect([cache.get('huge'), cache.size]).toEqual([undefined, 2])
  })

  test('in entries: 1,000 at most', () => {
    const cache = new PgClientCache(alive)
    for (let i = 0; i <= 1000; i++) cache.keep(record(`c${i}`, 10), cache.read())
    expect(cache.size).toBeLessThanOrEqual(1000)
    expect(cache.get('c1000')?.id).toBe('c1000')
  })
})
