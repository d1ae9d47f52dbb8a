import { describe, expect, test } from 'bun:test'
import { createSession } from '../../src/accounts/sessions'
import { issueCode } from '../../src/oauth/codes'
import { addClient, addUser, createTestApp, mintToken } from '../helpers'

describe('purging expired rows', () => {
  test('expired tokens, sessions and throttle rows go; a used code stays while its refresh family lives', async () => {
    const t = await createTestApp()
    const t0 = t.clock.now()
    const { client } = await addClient(t)
    const user = await addUser(t)
    await issueCode(t.store, { clientId: client.id, userId: user.id, redirectUri: 'https://a/cb', scope: 'email', codeChallenge: null }, t0, 60)
    await createSession(t.store, user.id, t0, { amr: ['pwd'], ttlMs: 7 * 24 * 3600_000 })
    await mintToken(t, client.id, user.id, 'email') // a used code and its token, alive for an hour
    await t.store.throttle.updateThrottle('addr:192.0.2.1', () => ({ row: { count: 1, startedAt: t0, lastAt: t0 }, result: 0 }))
    const count = async (table: string) => (await t.row(`SELECT CAST(count(*) AS INTEGER) AS n FROM ${table}`))!.n
    const purge = (at: number) => t.store.purgeExpired(at, { usedCodes: 3600_000, throttle: 3600_000, refreshGrace: 10_000, retiredKeys: 3600_000, mail: 7 * 24 * 3600_000, settingChanges: 30 * 86_400_000 })

    expect(await purge(t0 + 120_000)).toBe(0) // the codes expired, but a token from one could still be alive
    expect(await purge(t0 + 3600_000 + 61_000)).toBe(3) // the unused code, the token and the throttle row go
    // The used code stays: a replay must still revoke the family its exchange started (RFC 6749 §4.1.2).
    expect([await count('auth_codes'), await count('access_tokens'), await count('sessions'), await count('login_throttle')]).toEqual([1, 0, 1, 0])
    expect(await purge(t0 + 8 * 24 * 3600_000)).toBe(1) // the 7-day session
    expect(await count('sessions')).toBe(0)
    // Past REFRESH_TOKEN_TTL the family goes, with its refresh token, and the used code with it.
    expect(await purge(t0 + 30 * 24 * 3600_000 + 1)).toBe(3)
    expect([await count('auth_codes'), await count('refresh_tokens'), await count('refresh_families')]).toEqual([0, 0, 0])
  })

  test('WebAuthn challenges go once expired', async () => {
    const t = await createTestApp()
    const t0 = t.clock.now()
    await t.store.mfa.putChallenge('browser-a', 'sign-in', { challenge: 'c1', userId: null, expiresAt: t0 + 300_000 })
    await t.store.mfa.putChallenge('browser-b', 'sign-in', { challenge: 'c2', userId: null, expiresAt: t0 + 600_000 })
    const purge = (at: number) => t.store.purgeExpired(at, { usedCodes: 0, throttle: 0, refreshGrace: 0, retiredKeys: 3600_000, mail: 7 * 24 * 3600_000, settingChanges: 30 * 86_400_000 })
    expect(await purge(t0 + 300_001)).toBe(1)
    expect(await t.store.mfa.takeChallenge('browser-b', 'sign-in', t0)).toEqual({ challenge: 'c2', userId: null, expiresAt: t0 + 600_000 })
  })
})
