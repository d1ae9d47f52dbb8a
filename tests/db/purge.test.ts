import { describe, expect, test } from 'bun:test'
import { insertUser } from '../../src/accounts/users'
import { createSession } from '../../src/accounts/sessions'
import { openDb } from '../../src/db/client'
import { migrate } from '../../src/db/migrate'
import { purgeExpired } from '../../src/db/purge'
import { createClient } from '../../src/oauth/clients'
import { issueCode } from '../../src/oauth/codes'

describe('purging expired rows', () => {
  test('expired tokens and sessions go; used codes stay while a token from them could live', () => {
    const db = openDb(':memory:')
    migrate(db.sqlite)
    const t0 = Date.UTC(2026, 0, 1)
    const { client } = createClient(db, { name: 'A', redirectUris: ['https://a/cb'], public: false, skipConsent: false }, t0)
    const user = insertUser(db, { email: 'a@x', fullName: 'A', avatarUrl: null, passwordHash: 'h' }, t0)
    issueCode(db, { clientId: client.id, userId: user.id, redirectUri: 'https://a/cb', scope: 'email', codeChallenge: null }, t0, 60)
    createSession(db, user.id, t0)
    db.sqlite.run("INSERT INTO access_tokens (verifier_hash, client_id, user_id, scope, expires_at, created_at) VALUES ('v', ?, ?, 'email', ?, ?)", [client.id, user.id, t0 + 3600_000, t0])
    const count = (table: string) => (db.sqlite.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n

    expect(purgeExpired(db, t0 + 120_000, 3600)).toBe(0) // the code expired, but a token from it could still be alive
    expect(purgeExpired(db, t0 + 3600_000 + 61_000, 3600)).toBe(2) // now the code and the token go
    expect([count('auth_codes'), count('access_tokens'), count('sessions')]).toEqual([0, 0, 1])
    expect(purgeExpired(db, t0 + 8 * 24 * 3600_000, 3600)).toBe(1) // the 7-day session
    expect(count('sessions')).toBe(0)
  })
})
