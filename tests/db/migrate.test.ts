import { describe, expect, test } from 'bun:test'
import { readdirSync } from 'node:fs'
import journal from '../../drizzle/meta/_journal.json'
import { openDb } from '../../src/db/client'
import { embeddedMigrations, migrate } from '../../src/db/migrate'

describe('embedded migrations', () => {
  test('every drizzle-kit migration is in the journal and embedded', () => {
    const files = readdirSync(new URL('../../drizzle', import.meta.url)).filter((f) => f.endsWith('.sql')).map((f) => f.slice(0, -4))
    expect(journal.entries.map((e) => e.tag).sort()).toEqual(files.sort())
    expect(Object.keys(embeddedMigrations).sort()).toEqual(files.sort())
  })

  test('migrate applies once and records what ran', () => {
    const db = openDb(':memory:')
    expect(migrate(db.sqlite).applied).toEqual(journal.entries.map((e) => e.tag))
    expect(migrate(db.sqlite).applied).toEqual([])
    const tables = db.sqlite.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all().map((r) => r.name)
    expect(tables).toEqual(['access_tokens', 'auth_codes', 'clients', 'consents', 'latchkey_migrations', 'sessions', 'settings', 'users'])
  })

  test('the database runs with foreign keys, a busy timeout and synchronous=FULL', () => {
    const db = openDb(':memory:')
    expect(db.sqlite.query('PRAGMA foreign_keys').get()).toEqual({ foreign_keys: 1 })
    expect(db.sqlite.query('PRAGMA synchronous').get()).toEqual({ synchronous: 2 })
    expect(db.sqlite.query('PRAGMA busy_timeout').get()).toEqual({ timeout: 5000 })
  })
})
