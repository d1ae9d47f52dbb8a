import { and, asc, count, eq, sql } from 'drizzle-orm'
import type { Database } from 'bun:sqlite'
import { countConfirmingWays, countWaysIn, type ChallengePurpose, type ChallengeRecord, type MfaStore, type MfaSummary, type PasskeyRecord, type RemoveOutcome, type TotpRecord, type WaysIn } from '../store'
import { changes } from './client'
import { unique, type SqliteContext } from './context'
import { passkeys, recoveryCodes, totpSecrets, users, webauthnChallenges } from './schema'

/**
 * Passkeys, WebAuthn challenges, TOTP and recovery codes. Every read-check-write runs as one job
 * of the single writer, so "the last way to sign in" cannot be removed by two requests at once.
 */
export class SqliteMfa implements MfaStore {
  constructor(private readonly ctx: SqliteContext) {}

  private get orm() {
    return this.ctx.db.orm
  }

  addPasskey(passkey: PasskeyRecord): Promise<void> {
    return this.ctx.write(() => void unique(() => this.orm.insert(passkeys).values(passkey).run()))
  }

  async listPasskeys(userId: string): Promise<PasskeyRecord[]> {
    return this.orm.select().from(passkeys).where(eq(passkeys.userId, userId)).orderBy(asc(passkeys.createdAt), asc(passkeys.credentialId)).all()
  }

  async findPasskey(credentialId: string): Promise<PasskeyRecord | undefined> {
    return this.orm.select().from(passkeys).where(eq(passkeys.credentialId, credentialId)).get()
  }

  renamePasskey(userId: string, credentialId: string, name: string): Promise<boolean> {
    return this.ctx.write(() => changes(this.orm.update(passkeys).set({ name }).where(this.ownPasskey(userId, credentialId)).run()) > 0)
  }

  removePasskey(userId: string, credentialId: string): Promise<RemoveOutcome> {
    return this.ctx.write((): RemoveOutcome => {
      const ways = waysIn(this.ctx.db.sqlite, userId)
      if (!ways || !this.orm.select({ id: passkeys.credentialId }).from(passkeys).where(this.ownPasskey(userId, credentialId)).get()) return 'unknown'
      if (countWaysIn(ways) <= 1 || countConfirmingWays(ways) <= 1) return 'last'
      this.orm.delete(passkeys).where(this.ownPasskey(userId, credentialId)).run()
      return 'removed'
    })
  }

  usePasskey(credentialId: string, signCount: number, now: number): Promise<boolean> {
    return this.ctx.write(() => {
      const moved = this.orm
        .update(passkeys)
        .set({ signCount, lastUsedAt: now })
        // A counter of 0 is an authenticator that does not count (WebAuthn §6.1.1): it stays 0.
        .where(and(eq(passkeys.credentialId, credentialId), sql`(${passkeys.signCount} < ${signCount} OR (${signCount} = 0 AND ${passkeys.signCount} = 0))`))
        .run()
      return changes(moved) > 0
    })
  }

  putChallenge(browserHash: string, purpose: ChallengePurpose, challenge: ChallengeRecord): Promise<void> {
    const row = { browserHash, purpose, ...challenge }
    return this.ctx.write(
      () =>
        void this.orm
          .insert(webauthnChallenges)
          .values(row)
          .onConflictDoUpdate({ target: [webauthnChallenges.browserHash, webauthnChallenges.purpose], set: challenge })
          .run(),
    )
  }

  takeChallenge(browserHash: string, purpose: ChallengePurpose, now: number): Promise<ChallengeRecord | undefined> {
    return this.ctx.write(() => {
      const [row] = this.orm
        .delete(webauthnChallenges)
        .where(and(eq(webauthnChallenges.browserHash, browserHash), eq(webauthnChallenges.purpose, purpose)))
        .returning({ challenge: webauthnChallenges.challenge, userId: webauthnChallenges.userId, expiresAt: webauthnChallenges.expiresAt })
        .all()
      return row && row.expiresAt > now ? row : undefined
    })
  }

  async findTotp(userId: string): Promise<TotpRecord | undefined> {
    return this.orm
      .select({ sealedSecret: totpSecrets.sealedSecret, confirmedAt: totpSecrets.confirmedAt, lastStep: totpSecrets.lastStep })
      .from(totpSecrets)
      .where(eq(totpSecrets.userId, userId))
      .get()
  }

  startTotp(userId: string, sealedSecret: string, now: number): Promise<boolean> {
    return this.ctx.write(() => {
      const existing = this.orm.select({ confirmedAt: totpSecrets.confirmedAt }).from(totpSecrets).where(eq(totpSecrets.userId, userId)).get()
      if (existing?.confirmedAt != null) return false
      const row = { userId, sealedSecret, createdAt: now, confirmedAt: null, lastStep: 0 }
      this.orm.insert(totpSecrets).values(row).onConflictDoUpdate({ target: totpSecrets.userId, set: row }).run()
      return true
    })
  }

  confirmTotp(userId: string, step: number, recoveryHashes: readonly string[], now: number): Promise<boolean> {
    return this.ctx.write(() => {
      const confirmed = this.orm
        .update(totpSecrets)
        .set({ confirmedAt: now, lastStep: step })
        .where(and(eq(totpSecrets.userId, userId), sql`${totpSecrets.confirmedAt} IS NULL`))
        .run()
      if (changes(confirmed) === 0) return false
      this.writeRecoveryCodes(userId, recoveryHashes, now)
      return true
    })
  }

  useTotpStep(userId: string, step: number): Promise<boolean> {
    return this.ctx.write(() => {
      const used = this.orm
        .update(totpSecrets)
        .set({ lastStep: step })
        .where(and(eq(totpSecrets.userId, userId), sql`${totpSecrets.confirmedAt} IS NOT NULL`, sql`${totpSecrets.lastStep} < ${step}`))
        .run()
      return changes(used) > 0
    })
  }

  removeTotp(userId: string): Promise<boolean> {
    return this.ctx.write(() => {
      const codes = changes(this.orm.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId)).run())
      return changes(this.orm.delete(totpSecrets).where(eq(totpSecrets.userId, userId)).run()) + codes > 0
    })
  }

  replaceRecoveryCodes(userId: string, hashes: readonly string[], now: number): Promise<boolean> {
    return this.ctx.write(() => {
      const on = this.orm.select({ at: totpSecrets.confirmedAt }).from(totpSecrets).where(eq(totpSecrets.userId, userId)).get()
      if (on?.at == null) return false
      this.writeRecoveryCodes(userId, hashes, now)
      return true
    })
  }

  useRecoveryCode(userId: string, hash: string): Promise<boolean> {
    return this.ctx.write(
      () => changes(this.orm.delete(recoveryCodes).where(and(eq(recoveryCodes.userId, userId), eq(recoveryCodes.codeHash, hash))).run()) > 0,
    )
  }

  async countRecoveryCodes(userId: string): Promise<number> {
    return this.orm.select({ n: count() }).from(recoveryCodes).where(eq(recoveryCodes.userId, userId)).get()!.n
  }

  setPassword(userId: string, passwordHash: string): Promise<boolean> {
    return this.ctx.write(() => changes(this.orm.update(users).set({ passwordHash }).where(eq(users.id, userId)).run()) > 0)
  }

  removePassword(userId: string): Promise<RemoveOutcome> {
    return this.ctx.write((): RemoveOutcome => {
      const ways = waysIn(this.ctx.db.sqlite, userId)
      if (!ways?.password) return 'unknown'
      if (countWaysIn(ways) <= 1 || countConfirmingWays(ways) <= 1) return 'last'
      this.orm.update(users).set({ passwordHash: '' }).where(eq(users.id, userId)).run()
      return 'removed'
    })
  }

  async summaries(): Promise<Map<string, MfaSummary>> {
    const rows = this.ctx.db.sqlite
      .prepare<{ user_id: string; totp: number; passkeys: number }, []>(
        `SELECT user_id, max(totp) AS totp, sum(passkeys) AS passkeys FROM (
          SELECT user_id, 1 AS totp, 0 AS passkeys FROM totp_secrets WHERE confirmed_at IS NOT NULL
          UNION ALL SELECT user_id, 0, 1 FROM passkeys) GROUP BY user_id`,
      )
      .all()
    return new Map(rows.map((r) => [r.user_id, { totp: r.totp === 1, passkeys: r.passkeys }]))
  }

  private ownPasskey(userId: string, credentialId: string) {
    return and(eq(passkeys.userId, userId), eq(passkeys.credentialId, credentialId))
  }

  private writeRecoveryCodes(userId: string, hashes: readonly string[], now: number): void {
    this.orm.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId)).run()
    if (hashes.length) this.orm.insert(recoveryCodes).values(hashes.map((codeHash) => ({ codeHash, userId, createdAt: now }))).run()
  }
}

/** The user's ways in (WaysIn), read inside the writer's job that removes one; undefined for no such user. */
export function waysIn(sqlite: Database, userId: string): WaysIn | undefined {
  const row = sqlite
    .query<{ password: number; passkeys: number; identities: number }, [string]>(
      `SELECT password_hash <> '' AS password, (SELECT count(*) FROM passkeys WHERE user_id = ?1) AS passkeys,
        (SELECT count(*) FROM user_identities WHERE user_id = ?1) AS identities FROM users WHERE id = ?1`,
    )
    .get(userId)
  return row ? { password: row.password === 1, passkeys: row.passkeys, identities: row.identities } : undefined
}
