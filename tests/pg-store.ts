import type { SQL } from 'bun'
import { connect } from '../src/db/pg/connect'
import { PgStore } from '../src/db/pg/store'
import type { TestStore, TestStorePair } from './store'

type Row = Record<string, unknown>

let admin: SQL | undefined
let schemas = 0

/** A fresh schema for one test app: the same migrations as production, in their own namespace. */
async function freshSchema(url: string): Promise<string> {
  admin ??= connect(url, { max: 1, idleTimeout: 5 })
  const name = `t${process.pid}_${++schemas}_${Date.now().toString(36)}`
  await admin.unsafe(`CREATE SCHEMA "${name}"`)
  return name
}

function queries(store: PgStore) {
  const rows = async (query: string, ...params: unknown[]) => {
    let n = 0
    return (await store.client.unsafe(query.replace(/\?/g, () => `$${++n}`), params as [])) as Row[]
  }
  return { rows, row: async (query: string, ...params: unknown[]) => (await rows(query, ...params))[0] }
}

export async function openPgTestStore(url: string): Promise<TestStore> {
  const { store } = await PgStore.open(url, 3, { searchPath: await freshSchema(url), idleTimeout: 1 })
  return { store, ...queries(store) }
}

export async function openPgTestStorePair(url: string): Promise<TestStorePair> {
  const searchPath = await freshSchema(url)
  const { store } = await PgStore.open(url, 3, { searchPath, idleTimeout: 1 })
  const { store: other } = await PgStore.open(url, 3, { searchPath, idleTimeout: 1 })
  return {
    store,
    other,
    ...queries(store),
    async close() {
      await store.close()
      await other.close()
    },
  }
}

let databases = 0

/** A fresh database on the test cluster, for a binary of the end-to-end tests. */
export async function freshPgDatabase(url = process.env.LATCHKEY_TEST_DATABASE_URL!): Promise<string> {
  admin ??= connect(url, { max: 1, idleTimeout: 5 })
  const name = `e2e_${process.pid}_${++databases}_${Date.now().toString(36)}`
  await admin.unsafe(`CREATE DATABASE "${name}"`)
  const u = new URL(url)
  u.pathname = `/${name}`
  return u.href
}
