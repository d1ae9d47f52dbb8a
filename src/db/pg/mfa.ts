import { countConfirmingWays, countWaysIn, type ChallengePurpose, type ChallengeRecord, type MfaStore, type MfaSummary, type PasskeyRecord, type RemoveOutcome, type TotpRecord, type WaysIn } from '../store'
import { json, n, type PgContext, type Row, type Tx } from './context'

const toPasskey = (r: Row): PasskeyRecord => ({
  credentialId: r.credential_id as string,
  userId: r.user_id as string,
  name: r.name as string,
  publicKey: r.public_key as string,
  signCount: n(r.sign_count),
  transports: json(r.transports),
  createdAt: n(r.created_at),
  lastUsedAt: r.last_used_at === null ? null : n(r.last_used_at),
})

/**
 * Passkeys, WebAuthn challenges, TOTP and recovery codes. Removing a way to sign in locks the
 * user's row first, so two removals at once (the password here, the last passkey there) run one
 * after the other and the second sees what the first left.
 */
export class PgMfa implements MfaStore {
  constructor(private readonly ctx: PgContext) {}

  addPasskey(p: PasskeyRecord): Promise<void> {
    return this.ctx.run(
      async (sql) =>
        void (await sql`INSERT INTO passkeys (credential_id, user_id, name, public_key, sign_count, transports, created_at, last_used_at)
          VALUES (${p.credentialId}, ${p.userId}, ${p.name}, ${p.publicKey}, ${p.signCount}, ${JSON.stringify(p.transports)}::jsonb, ${p.createdAt}, ${p.lastUsedAt})`),
    )
  }

  listPasskeys(userId: string): Promise<PasskeyRecord[]> {
    return this.ctx.run(async (sql) => (await sql`SELECT * FROM passkeys WHERE user_id = ${userId} ORDER BY created_at, credential_id`).map(toPasskey))
  }

  findPasskey(credentialId: string): Promise<PasskeyRecord | undefined> {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`SELECT * FROM passkeys WHERE credential_id = ${credentialId}`
      return row && toPasskey(row)
    })
  }

  renamePasskey(userId: string, credentialId: string, name: string): Promise<boolean> {
    return this.ctx.run(async (sql) => (await sql`UPDATE passkeys SET name = ${name} WHERE user_id = ${userId} AND credential_id = ${credentialId}`).count > 0)
  }

  removePasskey(userId: string, credentialId: string): Promise<RemoveOutcome> {
    return this.ctx.tx(async (tx): Promise<RemoveOutcome> => {
      const ways = await lockWaysIn(tx, userId)
      if (!ways || (await tx`SELECT 1 FROM passkeys WHERE user_id = ${userId} AND credential_id = ${credentialId}`).length === 0) return 'unknown'
      if (countWaysIn(ways) <= 1 || countConfirmingWays(ways) <= 1) return 'last'
      await tx`DELETE FROM passkeys WHERE user_id = ${userId} AND credential_id = ${credentialId}`
      return 'removed'
    })
  }

  usePasskey(credentialId: string, signCount: number, now: number): Promise<boolean> {
    return this.ctx.run(async (sql) => {
      const moved = await sql`UPDATE passkeys SET sign_count = ${signCount}, last_used_at = ${now}
        WHERE credential_id = ${credentialId} AND (sign_count < ${signCount} OR (${signCount} = 0 AND sign_count = 0))`
      return moved.count > 0
    })
  }

  putChallenge(browserHash: string, purpose: ChallengePurpose, c: ChallengeRecord): Promise<void> {
    return this.ctx.run(
      async (sql) =>
        void (await sql`INSERT INTO webauthn_challenges (browser_hash, purpose, challenge, user_id, expires_at)
          VALUES (${browserHash}, ${purpose}, ${c.challenge}, ${c.userId}, ${c.expiresAt})
          ON CONFLICT (browser_hash, purpose) DO UPDATE SET challenge = excluded.challenge, user_id = excluded.user_id, expires_at = excluded.expires_at`),
    )
  }

  takeChallenge(browserHash: string, purpose: ChallengePurpose, now: number): Promise<ChallengeRecord | undefined> {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`DELETE FROM webauthn_challenges WHERE browser_hash = ${browserHash} AND purpose = ${purpose}
        RETURNING challenge, user_id, expires_at`
      return row && n(row.expires_at) > now ? { challenge: row.challenge, userId: row.user_id, expiresAt: n(row.expires_at) } : undefined
    })
  }

  findTotp(userId: string): Promise<TotpRecord | undefined> {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`SELECT sealed_secret, confirmed_at, last_step FROM totp_secrets WHERE user_id = ${userId}`
      return row && { sealedSecret: row.sealed_secret, confirmedAt: row.confirmed_at === null ? null : n(row.confirmed_at), lastStep: n(row.last_step) }
    })
  }

  startTotp(userId: string, sealedSecret: string, now: number): Promise<boolean> {
    return this.ctx.run(async (sql) => {
      const rows = await sql`INSERT INTO totp_secrets (user_id, sealed_secret, created_at) VALUES (${userId}, ${sealedSecret}, ${now})
        ON CONFLICT (user_id) DO UPDATE SET sealed_secret = excluded.sealed_secret, created_at = excluded.created_at, last_step = 0
        WHERE totp_secrets.confirmed_at IS NULL`
      return rows.count > 0
    })
  }

  confirmTotp(userId: string, step: number, recoveryHashes: readonly string[], now: number): Promise<boolean> {
    return this.ctx.tx(async (tx) => {
      const confirmed = await tx`UPDATE totp_secrets SET confirmed_at = ${now}, last_step = ${step} WHERE user_id = ${userId} AND confirmed_at IS NULL`
      if (confirmed.count === 0) return false
      await writeRecoveryCodes(tx, userId, recoveryHashes, now)
      return true
    })
  }

  useTotpStep(userId: string, step: number): Promise<boolean> {
    return this.ctx.run(async (sql) => {
      const used = await sql`UPDATE totp_secrets SET last_step = ${step} WHERE user_id = ${userId} AND confirmed_at IS NOT NULL AND last_step < ${step}`
      return used.count > 0
    })
  }

  removeTotp(userId: string): Promise<boolean> {
    return this.ctx.tx(async (tx) => {
      const codes = (await tx`DELETE FROM recovery_codes WHERE user_id = ${userId}`).count
      return (await tx`DELETE FROM totp_secrets WHERE user_id = ${userId}`).count + codes > 0
    })
  }

  replaceRecoveryCodes(userId: string, hashes: readonly string[], now: number): Promise<boolean> {
    return this.ctx.tx(async (tx) => {
      const [on] = await tx`SELECT 1 FROM totp_secrets WHERE user_id = ${userId} AND confirmed_at IS NOT NULL FOR UPDATE`
      if (!on) return false
      await writeRecoveryCodes(tx, userId, hashes, now)
      return true
    })
  }

  useRecoveryCode(userId: string, hash: string): Promise<boolean> {
    return this.ctx.run(async (sql) => (await sql`DELETE FROM recovery_codes WHERE user_id = ${userId} AND code_hash = ${hash}`).count > 0)
  }

  countRecoveryCodes(userId: string): Promise<number> {
    return this.ctx.run(async (sql) => n((await sql`SELECT count(*) AS n FROM recovery_codes WHERE user_id = ${userId}`)[0].n))
  }

  setPassword(userId: string, passwordHash: string): Promise<boolean> {
    return this.ctx.run(async (sql) => (await sql`UPDATE users SET password_hash = ${passwordHash} WHERE id = ${userId}`).count > 0)
  }

  removePassword(userId: string): Promise<RemoveOutcome> {
    return this.ctx.tx(async (tx): Promise<RemoveOutcome> => {
      const ways = await lockWaysIn(tx, userId)
      if (!ways?.password) return 'unknown'
      if (countWaysIn(ways) <= 1 || countConfirmingWays(ways) <= 1) return 'last'
      await tx`UPDATE users SET password_hash = '' WHERE id = ${userId}`
      return 'removed'
    })
  }

  summaries(): Promise<Map<string, MfaSummary>> {
    return this.ctx.run(async (sql) => {
      const rows = await sql`SELECT user_id, bool_or(totp) AS totp, sum(passkeys) AS passkeys FROM (
          SELECT user_id, true AS totp, 0 AS passkeys FROM totp_secrets WHERE confirmed_at IS NOT NULL
          UNION ALL SELECT user_id, false, 1 FROM passkeys) x GROUP BY user_id`
      return new Map(rows.map((r: Row) => [r.user_id as string, { totp: r.totp as boolean, passkeys: n(r.passkeys) }]))
    })
  }
}

/** Locks the user's row; whether they have a password (false also when there is no such user). */
/**
 * The user's row locked, then their ways in counted (WaysIn): in a statement after the lock, so
 * its snapshot sees what a removal that held the lock before committed. Undefined for no such user.
 */
export async function lockWaysIn(tx: Tx, userId: string): Promise<WaysIn | undefined> {
  const [user] = await tx`SELECT password_hash FROM users WHERE id = ${userId} FOR UPDATE`
  if (!user) return undefined
  const [row] = await tx`SELECT (SELECT count(*) FROM passkeys WHERE user_id = ${userId}) AS passkeys, (SELECT count(*) FROM user_identities WHERE user_id = ${userId}) AS identities`
  return { password: !!user.password_hash, passkeys: n(row!.passkeys), identities: n(row!.identities) }
}

async function writeRecoveryCodes(tx: Tx, userId: string, hashes: readonly string[], now: number): Promise<void> {
  await tx`DELETE FROM recovery_codes WHERE user_id = ${userId}`
  if (hashes.length) await tx`INSERT INTO recovery_codes ${tx(hashes.map((code_hash) => ({ code_hash, user_id: userId, created_at: now })))}`
}
