import { expect, test } from 'bun:test'
import { createClient, updateClient } from '../../src/oauth/clients'
import { openTestStorePair, testEngine } from '../store'

/**
 * `client update --add-redirect-uri` reads the app's options, edits them and writes them back in
 * one store transaction. Two at once (two shells, two instances on one PostgreSQL) must not lose
 * either change: the second waits on the row's lock and reads the first's result.
 */
test('clients.lockClient: false for an unknown app; a second transaction waits for the first and reads its change', async () => {
  const pair = await openTestStorePair()
  const { store, other } = pair
  try {
    const { client } = await createClient(store, { name: 'A', redirectUris: ['https://a.example/cb'], public: false, skipConsent: false }, 0)
    expect(await store.transaction(() => store.clients.lockClient('nope'))).toBe(false)
    expect(await store.transaction(() => store.clients.lockClient(client.id))).toBe(true)
    // SQLite: a store transaction is BEGIN IMMEDIATE, which holds the whole database already (and
    // would block this one thread); the row lock is PostgreSQL's to show.
    if (testEngine !== 'postgres') return
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    let locked!: () => void
    const isLocked = new Promise<void>((resolve) => (locked = resolve))
    const first = store.transaction(async () => {
      await store.clients.lockClient(client.id)
      locked()
      await held
      await updateClient(store, client.id, { ...client, redirectUris: [...client.redirectUris, 'https://a.example/b'] })
    })
    await isLocked
    const second = other.transaction(async () => {
      await other.clients.lockClient(client.id)
      return (await other.clients.findClient(client.id))!.redirectUris
    })
    // The second waits on the row (a lock not granted) until the first commits.
    const waiting = `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE NOT l.granted AND a.query LIKE '%FROM clients WHERE id = % FOR UPDATE%'`
    while (Number((await pair.row(waiting))!.n) === 0) await Bun.sleep(5)
    release()
    await first
    expect(await second).toEqual(['https://a.example/cb', 'https://a.example/b'])
  } finally {
    await pair.close()
  }
})
