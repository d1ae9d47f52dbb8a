import type { TestStore, TestStorePair } from './store'

export async function openPgTestStore(url: string): Promise<TestStore> {
  throw new Error(`PostgreSQL test stores are not wired yet (${url.length})`)
}

export async function openPgTestStorePair(url: string): Promise<TestStorePair> {
  throw new Error(`PostgreSQL test stores are not wired yet (${url.length})`)
}
