import { afterEach, describe, expect, spyOn, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { SqliteStore } from '../../src/db/sqlite/store'
import { createClient, deleteClient, rotateSecret, updateClient, verifyClientSecret } from '../../src/oauth/clients'

/**
 * Issue 38 "Speed": on SQLite the clients the token endpoint authenticates are kept in memory
 * (src/db/sqlite/client-cache.ts) — and every change to one reaches the next read at once:
 * this process's writes (whichever statement makes them), another process's (the CLI), and
 * nothing of a write that rolled back.
 */
const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

async function pair() {
  const dir = mkdtempSync(`${tmpdir()}/latchkey-client-cache-`)
  dirs.push(dir)
  const { store } = await SqliteStore.open(`${dir}/db.sqlite`, { checkpointer: 'off' })
  // The CLI while the server runs: another connection to the same file.
  const { store: cli } = await SqliteStore.open(`${dir}/db.sqlite`, { checkpointer: 'off' })
  const { client, secret } = await createClient(store, { name: 'Job', redirectUris: [], public: false, skipConsent: false, grantTypes: ['client_credentials'] }, 0)
  return { store, cli, client, secret: secret!, close: async () => (await store.close(), await cli.close()) }
}

describe('SQLite client cache', () => {
  test('a client read twice is read once: the same record, frozen (no caller can change it for another)', async () => {
    const { store, client, close } = await pair()
    const first = (await store.clients.findClient(client.id))!
    expect(await store.clients.findClient(client.id)).toBe(first)
    expect(Object.isFrozen(first) && Object.isFrozen(first.grantTypes)).toBe(true)
    expect(() => (first.grantTypes as string[]).push('authorization_code')).toThrow()
    expect(await store.clients.findClient('unknown')).toBeUndefined()
    await close()
  })

  test("this process's writes reach the next read at once: update, a rotated secret, a raw statement, delete", async () => {
    const { store, client, secret, close } = await pair()
    const first = (await store.clients.findClient(client.id))!
    await updateClient(store, client.id, { ...client, name: 'Nightly job', authMethod: null })
    const updated = (await store.clients.findClient(client.id))!
    expect(updated).not.toBe(first)
    expect(updated.name).toBe('Nightly job')

    expect(await verifyClientSecret(store, client.id, secret)).toBeDefined()
    const rotated = (await rotateSecret(store, client.id))!
    expect(await verifyClientSecret(store, client.id, secret)).toBeUndefined()
    expect((await verifyClientSecret(store, client.id, rotated))?.id).toBe(client.id)

    // A statement of no SqliteClients method (a cascade, a later module) counts as well.
    await store.write(() => store.db.sqlite.run("UPDATE clients SET name = 'Renamed' WHERE id = ?", [client.id]))
    expect((await store.clients.findClient(client.id))!.name).toBe('Renamed')

    expect(await deleteClient(store, client.id)).toBe(true)
    expect(await store.clients.findClient(client.id)).toBeUndefined()
    expect(await verifyClientSecret(store, client.id, rotated)).toBeUndefined()
    await close()
  })

  test('the count of writes is read once per turn and after each batch of the writer, not per read; a statement outside the writer is seen from the next turn', async () => {
    const { store, client, close } = await pair()
    await store.clients.findClient(client.id)
    // The cache's one statement: SELECT n FROM temp.client_writes.
    const count = spyOn((store.clients as unknown as { cache: { count: { get(): unknown } } }).cache.count, 'get')
    try {
      const reads = () => count.mock.calls.length
      const before = reads()
      // The same turn: nothing can have changed on this connection but through a statement outside the writer.
      for (let i = 0; i < 5; i++) await store.clients.findClient(client.id)
      expect(reads() - before).toBe(0)
      // Outside the writer (no server does it; a test may): seen once the turn is over.
      store.db.sqlite.run("UPDATE clients SET name = 'Raw' WHERE id = ?", [client.id])
      await new Promise((resolve) => setImmediate(resolve))
      expect((await store.clients.findClient(client.id))!.name).toBe('Raw')
      // A batch of the writer in this very turn: the next read counts again, and sees it.
      const renamed = store.write(() => store.db.sqlite.run("UPDATE clients SET name = 'Batch' WHERE id = ?", [client.id]))
      store.writer.flush()
      await renamed
      expect((await store.clients.findClient(client.id))!.name).toBe('Batch')
    } finally {
      count.mockRestore()
    }
    await close()
  })

  test("a store transaction's writes (the CLI's client update) reach reads inside it and in the same turn after it; a rolled-back one's never do", async () => {
    const { store, client, close } = await pair()
    // As `client update` runs: a read, the update, the read its answer is made of — all in one turn.
    const seen = await store.transaction(async () => {
      await store.clients.findClient(client.id)
      await updateClient(store, client.id, { ...client, name: 'In a transaction', authMethod: null })
      return (await store.clients.findClient(client.id))!.name
    })
    expect(seen).toBe('In a transaction')
    expect((await store.clients.findClient(client.id))!.name).toBe('In a transaction')
    await expect(
      store.transaction(async () => {
        await updateClient(store, client.id, { ...client, name: 'Never', authMethod: null })
        expect((await store.clients.findClient(client.id))!.name).toBe('Never')
        throw new Error('rolled back')
      }),
    ).rejects.toThrow('rolled back')
    expect((await store.clients.findClient(client.id))!.name).toBe('In a transaction')
    await close()
  })

  test("another process's commit (the CLI) reaches the next read", async () => {
    const { store, cli, client, secret, close } = await pair()
    expect(await verifyClientSecret(store, client.id, secret)).toBeDefined()
    const rotated = (await rotateSecret(cli, client.id))!
    // The feed checks once per event-loop turn: the next request is in a later one.
    await new Promise((resolve) => setImmediate(resolve))
    expect(await verifyClientSecret(store, client.id, secret)).toBeUndefined()
    expect((await verifyClientSecret(store, client.id, rotated))?.id).toBe(client.id)
    expect(await deleteClient(cli, client.id)).toBe(true)
    await new Promise((resolve) => setImmediate(resolve))
    expect(await store.clients.findClient(client.id)).toBeUndefined()
    await close()
  })

  test('a write that rolled back leaves the client as it was', async () => {
    const { store, client, close } = await pair()
    await store.clients.findClient(client.id)
    await expect(
      store.write(() => {
        store.db.sqlite.run("UPDATE clients SET name = 'Never' WHERE id = ?", [client.id])
        // Read inside the open transaction (findClient reads synchronously): the uncommitted row is cached for a moment…
        void store.clients.findClient(client.id).then((read) => expect(read!.name).toBe('Never'))
        throw new Error('rolled back')
      }),
    ).rejects.toThrow('rolled back')
    // …but never served after the rollback.
    expect((await store.clients.findClient(client.id))!.name).toBe('Job')
    await close()
  })
})
