import { describe, expect, test } from 'bun:test'
import { readdirSync } from 'node:fs'
import journal from '../../drizzle/sqlite/meta/_journal.json'
import { openDb } from '../../src/db/sqlite/client'
import { embeddedMigrations, migrate } from '../../src/db/sqlite/migrate'

/** A database as a release left it: the first `count` migrations applied and recorded. */
function migratedThrough(count: number) {
  const db = openDb(':memory:')
  db.sqlite.run('CREATE TABLE latchkey_migrations (tag TEXT PRIMARY KEY, hash TEXT NOT NULL, applied_at INTEGER NOT NULL)')
  for (const entry of journal.entries.slice(0, count)) {
    for (const stmt of embeddedMigrations[entry.tag]!.split('--> statement-breakpoint')) if (stmt.trim()) db.sqlite.run(stmt)
    db.sqlite.query('INSERT INTO latchkey_migrations VALUES (?, ?, 0)').run(entry.tag, 'x')
  }
  return db
}

/** The tags from `tag` to the newest: what migrating a database left at the one before applies. */
/** Where a migration is in the journal; a tag that is not there (renamed by a merge) fails the test instead of testing the newest one. */
function indexOf(tag: string): number {
  const index = journal.entries.findIndex((e) => e.tag === tag)
  if (index < 0) throw new Error(`no migration ${tag} in the journal`)
  return index
}
const tagsFrom = (tag: string) => journal.entries.map((e) => e.tag).slice(indexOf(tag))

describe('embedded migrations', () => {
  test('every drizzle-kit migration is in the journal and embedded', () => {
    const files = readdirSync(new URL('../../drizzle/sqlite', import.meta.url)).filter((f) => f.endsWith('.sql')).map((f) => f.slice(0, -4))
    expect(journal.entries.map((e) => e.tag).sort()).toEqual(files.sort())
    expect(Object.keys(embeddedMigrations).sort()).toEqual(files.sort())
  })

  test('migrate applies once and records what ran', () => {
    const db = openDb(':memory:')
    expect(migrate(db.sqlite).applied).toEqual(journal.entries.map((e) => e.tag))
    expect(migrate(db.sqlite).applied).toEqual([])
    const tables = db.sqlite.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all().map((r) => r.name)
    expect(tables).toEqual(['access_tokens', 'audit_events', 'auth_codes', 'client_groups', 'client_logos', 'clients', 'consents', 'device_codes', 'email_tokens', 'group_members', 'groups', 'latchkey_migrations', 'login_throttle', 'logout_deliveries', 'mail_outbox', 'passkeys', 'provider_states', 'providers', 'pushed_requests', 'recovery_codes', 'refresh_families', 'refresh_tokens', 'registration_tokens', 'resources', 'server_secrets', 'session_clients', 'sessions', 'setting_counts', 'setting_heads', 'setting_tombstones', 'settings', 'signing_keys', 'site_codes', 'site_sessions', 'sites', 'stream_tickets', 'totp_secrets', 'used_assertions', 'user_avatars', 'user_devices', 'user_identities', 'users', 'webauthn_challenges'])
  })

  test('the database runs with foreign keys, a busy timeout and synchronous=FULL', () => {
    const db = openDb(':memory:')
    expect(db.sqlite.query('PRAGMA foreign_keys').get()).toEqual({ foreign_keys: 1 })
    expect(db.sqlite.query('PRAGMA synchronous').get()).toEqual({ synchronous: 2 })
    expect(db.sqlite.query('PRAGMA busy_timeout').get()).toEqual({ timeout: 5000 })
  })
})

describe('setting_counts triggers', () => {
  test('count new keys, ignore replacements, follow deletes and cascades', () => {
    const db = openDb(':memory:')
    migrate(db.sqlite)
    const run = (sql: string, ...params: string[]) => db.sqlite.query(sql).run(...params)
    run("INSERT INTO users (id, email, full_name, avatar_url, password_hash, created_at) VALUES ('u1', 'a@x', 'A', NULL, 'h', 0)")
    run("INSERT INTO clients (id, name, secret_hash, redirect_uris, skip_consent, created_at) VALUES ('c1', 'C', NULL, '[]', 0, 0)")
    const count = () => (db.sqlite.query("SELECT n FROM setting_counts WHERE user_id = 'u1' AND client_id = 'c1'").get() as { n: number } | null)?.n
    const upsert = (key: string) =>
      run("INSERT INTO settings (user_id, client_id, key, value, updated_at) VALUES ('u1', 'c1', ?, '1', 0) ON CONFLICT DO UPDATE SET value = excluded.value", key)
    upsert('a')
    upsert('b')
    upsert('a')
    expect(count()).toBe(2)
    run("DELETE FROM settings WHERE key = 'a'")
    expect(count()).toBe(1)
    run("DELETE FROM users WHERE id = 'u1'")
    expect(count()).toBeUndefined()
  })

  test('the migration counts settings that existed before it', () => {
    const db = openDb(':memory:')
    db.sqlite.run('CREATE TABLE latchkey_migrations (tag TEXT PRIMARY KEY, hash TEXT NOT NULL, applied_at INTEGER NOT NULL)')
    for (const stmt of embeddedMigrations['0000_init']!.split('--> statement-breakpoint')) db.sqlite.run(stmt)
    db.sqlite.run("INSERT INTO latchkey_migrations VALUES ('0000_init', 'x', 0)")
    db.sqlite.run("INSERT INTO users VALUES ('u1', 'a@x', 'A', NULL, 'h', 0)")
    db.sqlite.run("INSERT INTO clients VALUES ('c1', 'C', NULL, '[]', 0, 0)")
    for (const key of ['a', 'b', 'c']) db.sqlite.query("INSERT INTO settings (user_id, client_id, key, value, updated_at) VALUES ('u1', 'c1', ?, '1', 0)").run(key)
    expect(migrate(db.sqlite).applied).toEqual(journal.entries.slice(1).map((e) => e.tag))
    expect(db.sqlite.query('SELECT n FROM setting_counts').get()).toEqual({ n: 3 })
  })
})

describe('0003: access tokens become lk_at_<id>.<verifier>', () => {
  test('tokens of the old form are dropped; codes get token_id; the rest of the data stays', () => {
    const db = migratedThrough(3) // 0000_init, 0001_setting_counts, 0002_setting_count_triggers
    db.sqlite.run("INSERT INTO users VALUES ('u1', 'a@x', 'A', NULL, 'h', 0)")
    db.sqlite.run("INSERT INTO clients VALUES ('c1', 'C', NULL, '[]', 0, 0)")
    db.sqlite.run("INSERT INTO auth_codes VALUES ('code1', 'c1', 'u1', 'https://a/cb', 'email', NULL, 0, 5)")
    db.sqlite.run("INSERT INTO access_tokens VALUES ('tok1', 'c1', 'u1', 'email', 'code1', 9, 0)")
    db.sqlite.run("INSERT INTO settings (user_id, client_id, key, value, updated_at) VALUES ('u1', 'c1', 'k', '1', 0)")
    expect(migrate(db.sqlite).applied).toEqual(journal.entries.slice(3).map((e) => e.tag))
    const columns = (table: string) => db.sqlite.query(`SELECT name FROM pragma_table_info('${table}')`).all().map((r) => (r as { name: string }).name)
    expect(columns('access_tokens')).toEqual(['id', 'verifier_hash', 'client_id', 'user_id', 'scope', 'expires_at', 'created_at', 'family_id', 'resource'])
    expect(columns('auth_codes')).toContain('token_id')
    expect(db.sqlite.query('SELECT CAST(count(*) AS INTEGER) AS n FROM access_tokens').get()).toEqual({ n: 0 })
    expect(db.sqlite.query('SELECT CAST(count(*) AS INTEGER) AS n FROM settings').get()).toEqual({ n: 1 })
    expect(db.sqlite.query('SELECT CAST(count(*) AS INTEGER) AS n FROM auth_codes').get()).toEqual({ n: 1 })
  })
})

describe('0008: settings in their key order', () => {
  test('settings and their counts survive the rebuild, which is WITHOUT ROWID, and the counts stay exact after it', () => {
    const db = migratedThrough(8)
    db.sqlite.run("INSERT INTO users (id, email, full_name, avatar_url, password_hash, created_at) VALUES ('u1', 'a@x', 'A', NULL, 'h', 0)")
    db.sqlite.run("INSERT INTO clients (id, name, secret_hash, redirect_uris, skip_consent, created_at) VALUES ('c1', 'C', NULL, '[]', 0, 0)")
    for (const key of ['b', 'a', 'c']) db.sqlite.query("INSERT INTO settings (user_id, client_id, key, value, updated_at) VALUES ('u1', 'c1', ?, '\"xy\"', 7)").run(key)
    const counts = () => db.sqlite.query('SELECT n, bytes FROM setting_counts').get()
    expect(counts()).toEqual({ n: 3, bytes: 12 })

    expect(migrate(db.sqlite).applied).toEqual(tagsFrom('0008_settings_clustered'))
    expect(db.sqlite.query("SELECT sql FROM sqlite_master WHERE name = 'settings'").get()).toEqual({ sql: expect.stringContaining('WITHOUT ROWID') })
    expect(db.sqlite.query('SELECT key, value, updated_at FROM settings').all()).toEqual(
      ['a', 'b', 'c'].map((key) => ({ key, value: '"xy"', updated_at: 7 })),
    )
    expect(counts()).toEqual({ n: 3, bytes: 12 })
    // A user's list for an app is one range of the table, not an index walk with a lookup per row.
    const plan = (sql: string) => (db.sqlite.query(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((r) => r.detail)
    expect(plan("SELECT key, value, updated_at FROM settings WHERE user_id = 'u1' AND client_id = 'c1' ORDER BY key")).toEqual([
      'SEARCH settings USING PRIMARY KEY (user_id=? AND client_id=?)',
    ])
    expect(plan("DELETE FROM settings WHERE client_id = 'c1'")).toEqual(['SEARCH settings USING INDEX settings_client (client_id=?)'])
    db.sqlite.run("INSERT INTO settings (user_id, client_id, key, value, updated_at) VALUES ('u1', 'c1', 'd', '1', 8)")
    db.sqlite.run("UPDATE settings SET value = '\"longer\"' WHERE key = 'a'")
    db.sqlite.run("DELETE FROM settings WHERE key = 'b'")
    expect(counts()).toEqual({ n: 3, bytes: 4 + 1 + 8 })
    db.sqlite.run("DELETE FROM users WHERE id = 'u1'")
    expect(db.sqlite.query('SELECT CAST(count(*) AS INTEGER) AS n FROM settings').get()).toEqual({ n: 0 })
  })
})

describe('createDatabaseFile', () => {
  test('creates an absent file with its folders, and never truncates an existing one', async () => {
    const { mkdtempSync, rmSync, statSync } = await import('node:fs')
    const { tmpdir } = await import('node:os')
    const { createDatabaseFile } = await import('../../src/db/sqlite/client')
    const dir = mkdtempSync(`${tmpdir()}/latchkey-create-`)
    try {
      const path = `${dir}/a/b/latchkey.sqlite`
      await createDatabaseFile(path)
      const db = openDb(path)
      migrate(db.sqlite)
      db.sqlite.close()
      const size = statSync(path).size
      expect(size).toBeGreaterThan(0)
      await createDatabaseFile(path)
      expect(statSync(path).size).toBe(size)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('0009: refresh families and the next signing key', () => {
  test('every family with refresh tokens gets its row (no key), old rows keep their ids; existing keys signed from their creation', () => {
    const db = migratedThrough(9)
    db.sqlite.run("INSERT INTO users (id, email, full_name, avatar_url, password_hash, created_at) VALUES ('u1', 'a@x', 'A', NULL, 'h', 0)")
    db.sqlite.run("INSERT INTO clients (id, name, secret_hash, redirect_uris, skip_consent, created_at) VALUES ('c1', 'C', NULL, '[]', 0, 0)")
    // One family rotated once (two rows), another fresh.
    db.sqlite.run("INSERT INTO refresh_tokens (id, verifier_hash, family_id, client_id, user_id, scope, expires_at, created_at, rotated_at) VALUES (5, 'h5', 'fam-a', 'c1', 'u1', 'email', 100, 10, 20), (6, 'h6', 'fam-a', 'c1', 'u1', 'email', 200, 20, NULL), (7, 'h7', 'fam-b', 'c1', 'u1', 'email', 300, 30, NULL)")
    db.sqlite.run("INSERT INTO signing_keys (kid, alg, private_jwk, public_jwk, created_at, retired_at) VALUES ('k1', 'RS256', '{}', '{}', 42, NULL)")

    expect(migrate(db.sqlite).applied).toEqual(tagsFrom('0009_refresh_families'))
    expect(db.sqlite.query('SELECT family_id, client_id, user_id, key_hash, created_at, used_at, expires_at FROM refresh_families ORDER BY family_id').all()).toEqual([
      { family_id: 'fam-a', client_id: 'c1', user_id: 'u1', key_hash: null, created_at: 10, used_at: 20, expires_at: 200 },
      { family_id: 'fam-b', client_id: 'c1', user_id: 'u1', key_hash: null, created_at: 30, used_at: 30, expires_at: 300 },
    ])
    expect(db.sqlite.query('SELECT id FROM refresh_tokens ORDER BY id').all()).toEqual([{ id: 5 }, { id: 6 }, { id: 7 }])
    expect(db.sqlite.query('SELECT signs_from FROM signing_keys').get()).toEqual({ signs_from: 42 })
  })
})

describe('0010: passkeys and two-step sign-in', () => {
  test('existing families signed in with a password, at their tokens\' auth_time; sessions and clients get defaults', () => {
    const db = migratedThrough(indexOf('0010_passkeys_two_step'))
    db.sqlite.run("INSERT INTO users (id, email, full_name, password_hash, created_at) VALUES ('u1', 'a@b.c', 'A', 'h', 0)")
    db.sqlite.run("INSERT INTO clients (id, name, secret_hash, redirect_uris, skip_consent, created_at) VALUES ('c1', 'C', NULL, '[]', 0, 0)")
    db.sqlite.run("INSERT INTO sessions (id_hash, user_id, expires_at, auth_time) VALUES ('s1', 'u1', 100, 7)")
    db.sqlite.run("INSERT INTO refresh_families (family_id, client_id, user_id, created_at, used_at, expires_at) VALUES ('fam-a', 'c1', 'u1', 1, 1, 100)")
    db.sqlite.run("INSERT INTO refresh_tokens (verifier_hash, family_id, client_id, user_id, scope, expires_at, created_at, auth_time) VALUES ('h', 'fam-a', 'c1', 'u1', 'email', 100, 1, 5)")

    expect(migrate(db.sqlite).applied).toEqual(tagsFrom('0010_passkeys_two_step'))
    expect(db.sqlite.query('SELECT amr, auth_time FROM refresh_families').get()).toEqual({ amr: 'pwd', auth_time: 5 })
    expect(db.sqlite.query('SELECT amr, pending FROM sessions').get()).toEqual({ amr: 'pwd', pending: 0 })
    expect(db.sqlite.query('SELECT require_mfa FROM clients').get()).toEqual({ require_mfa: 0 })
  })
})

describe('0020: machines and devices', () => {
  test('access tokens keep their ids, users and families through the rebuild; user_id may then be NULL; clients get their default grant', () => {
    const db = migratedThrough(indexOf('0020_machines'))
    db.sqlite.run("INSERT INTO users (id, email, full_name, password_hash, created_at) VALUES ('u1', 'a@b.c', 'A', 'h', 0)")
    db.sqlite.run("INSERT INTO clients (id, name, secret_hash, redirect_uris, skip_consent, created_at) VALUES ('c1', 'C', 'x', '[]', 0, 0)")
    db.sqlite.run("INSERT INTO access_tokens (id, verifier_hash, client_id, user_id, scope, expires_at, created_at, family_id) VALUES (41, 'v', 'c1', 'u1', 'email', 100, 1, 'fam')")
    expect(migrate(db.sqlite).applied).toEqual(tagsFrom('0020_machines'))
    expect(db.sqlite.query('SELECT id, user_id, family_id FROM access_tokens').get()).toEqual({ id: 41, user_id: 'u1', family_id: 'fam' })
    db.sqlite.run("INSERT INTO access_tokens (verifier_hash, client_id, user_id, scope, expires_at, created_at) VALUES ('w', 'c1', NULL, 'reports:read', 100, 1)")
    expect(db.sqlite.query('SELECT grant_types, allowed_scopes, require_par, auth_method FROM clients').get()).toEqual({ grant_types: '["authorization_code"]', allowed_scopes: '[]', require_par: 0, auth_method: null })
    // A user's deletion still takes their tokens (the foreign key survived the rebuild), not the client's own.
    db.sqlite.run("DELETE FROM users WHERE id = 'u1'")
    expect(db.sqlite.query('SELECT verifier_hash FROM access_tokens').all()).toEqual([{ verifier_hash: 'w' }])
  })
})

describe('an upgrade is all or nothing', () => {
  test('a failing migration leaves the database as it was', () => {
    const db = openDb(':memory:')
    db.sqlite.run('CREATE TABLE latchkey_migrations (tag TEXT PRIMARY KEY, hash TEXT NOT NULL, applied_at INTEGER NOT NULL)')
    for (const stmt of embeddedMigrations['0000_init']!.split('--> statement-breakpoint')) db.sqlite.run(stmt)
    db.sqlite.run("INSERT INTO latchkey_migrations VALUES ('0000_init', 'x', 0)")
    db.sqlite.run('CREATE TABLE setting_counts (x)') // makes 0001 fail
    expect(() => migrate(db.sqlite)).toThrow()
    expect(db.sqlite.query('SELECT tag FROM latchkey_migrations').all()).toEqual([{ tag: '0000_init' }])
  })
})

describe('embedded PostgreSQL migrations', () => {
  test('every drizzle-kit migration of drizzle/pg is in its journal and embedded', async () => {
    const { embeddedMigrations: pg } = await import('../../src/db/pg/migrate')
    const pgJournal = (await import('../../drizzle/pg/meta/_journal.json')).default
    const files = readdirSync(new URL('../../drizzle/pg', import.meta.url)).filter((f) => f.endsWith('.sql')).map((f) => f.slice(0, -4))
    expect(pgJournal.entries.map((e: { tag: string }) => e.tag).sort()).toEqual(files.sort())
    expect(Object.keys(pg).sort()).toEqual(files.sort())
  })
})
