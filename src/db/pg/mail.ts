import type { Change, EmailPurpose, EmailToken, MailStore, NewMail, OutboxMessage, RecoveryRemoved, TokenOutcome, TokenUse, TokenUser } from '../store'
import { UniqueViolation } from '../store'
import { emitting, n, type PgContext, type Row, type Tx } from './context'

/** Queues messages in the caller's transaction. */
export async function insertMail(tx: Tx, mail: readonly NewMail[], now: number): Promise<void> {
  if (mail.length === 0) return
  const rows = mail.map((m) => ({ recipient: m.to, subject: m.subject, text_body: m.text, html_body: m.html, created_at: now, next_attempt_at: now }))
  await tx`INSERT INTO mail_outbox ${tx(rows)}`
}

/** A link, replacing the user's earlier ones of the same purpose, and its message, in the caller's transaction. */
export async function insertToken(tx: Tx, t: EmailToken, mail: NewMail | null, now: number): Promise<void> {
  await tx`DELETE FROM email_tokens WHERE user_id = ${t.userId} AND purpose = ${t.purpose}`
  await tx`INSERT INTO email_tokens (token_hash, user_id, purpose, email, created_at, expires_at) VALUES (${t.tokenHash}, ${t.userId}, ${t.purpose}, ${t.email}, ${now}, ${t.expiresAt})`
  if (mail) await insertMail(tx, [mail], now)
}

const toToken = (r: Row): EmailToken => ({
  tokenHash: r.token_hash as string,
  userId: r.user_id as string,
  purpose: r.purpose as EmailPurpose,
  email: r.email as string,
  expiresAt: n(r.expires_at),
})

/** The user's passkeys (by name) and whether TOTP is on. */
async function securityOf(tx: Tx, userId: string): Promise<Pick<TokenUser, 'passkeys' | 'totp'>> {
  const passkeys = await tx`SELECT name FROM passkeys WHERE user_id = ${userId} ORDER BY created_at, credential_id`
  const [totp] = await tx`SELECT confirmed_at IS NOT NULL AS totp_on FROM totp_secrets WHERE user_id = ${userId}`
  return { passkeys: passkeys.map((p: Row) => p.name as string), totp: totp?.totp_on === true }
}

/**
 * Account recovery, in the link's transaction: what the user held is listed, then removed —
 * codes and families first, the grant lock order (as disabling a user), so an exchange or a
 * refresh that holds one is waited for, and its tokens are then removed too.
 */
async function recover(tx: Tx, userId: string): Promise<RecoveryRemoved> {
  const apps = await tx`SELECT name FROM clients WHERE id IN (SELECT client_id FROM consents WHERE user_id = ${userId}
      UNION SELECT client_id FROM refresh_families WHERE user_id = ${userId}) ORDER BY name`
  const [counts] = await tx`SELECT (SELECT count(*) FROM recovery_codes WHERE user_id = ${userId}) AS codes,
      (SELECT count(*) FROM sessions WHERE user_id = ${userId}) AS sessions`
  const removed: RecoveryRemoved = {
    ...(await securityOf(tx, userId)),
    recoveryCodes: n(counts.codes),
    apps: apps.map((a: Row) => a.name as string),
    sessions: n(counts.sessions),
    identities: (await tx`SELECT p.name AS provider, i.email FROM user_identities i JOIN providers p ON p.id = i.provider_id WHERE i.user_id = ${userId} ORDER BY p.name`).map((r: Row) => ({
      provider: r.provider as string,
      email: (r.email as string | null) ?? null,
    })),
  }
  await tx`DELETE FROM auth_codes WHERE user_id = ${userId}`
  await tx`DELETE FROM refresh_families WHERE user_id = ${userId}`
  await tx`DELETE FROM refresh_tokens WHERE user_id = ${userId}`
  await tx`DELETE FROM access_tokens WHERE user_id = ${userId}`
  await tx`DELETE FROM consents WHERE user_id = ${userId}`
  await tx`DELETE FROM passkeys WHERE user_id = ${userId}`
  await tx`DELETE FROM webauthn_challenges WHERE user_id = ${userId}`
  await tx`DELETE FROM totp_secrets WHERE user_id = ${userId}`
  await tx`DELETE FROM recovery_codes WHERE user_id = ${userId}`
  await tx`DELETE FROM sessions WHERE user_id = ${userId}`
  await tx`DELETE FROM email_tokens WHERE user_id = ${userId}`
  // A provider account connected by whoever set the account up signs in as surely as a passkey.
  await tx`DELETE FROM user_identities WHERE user_id = ${userId}`
  return removed
}

/**
 * The outbox and the links. Senders on several instances claim with FOR UPDATE SKIP LOCKED and a
 * lease: a message another sender holds is skipped, never sent twice while its lease runs.
 */
export class PgMail implements MailStore {
  constructor(private readonly ctx: PgContext) {}

  enqueue(mail: readonly NewMail[], now: number): Promise<void> {
    return this.ctx.tx((tx) => insertMail(tx, mail, now))
  }

  issueToken(token: EmailToken, mail: NewMail | null, now: number): Promise<void> {
    return this.ctx.tx((tx) => insertToken(tx, token, mail, now))
  }

  findToken(tokenHash: string, purposes: readonly EmailPurpose[], now: number): Promise<EmailToken | undefined> {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`SELECT * FROM email_tokens WHERE token_hash = ${tokenHash} AND expires_at > ${now}`
      return row && purposes.includes(row.purpose) ? toToken(row) : undefined
    })
  }

  useToken(tokenHash: string, purposes: readonly EmailPurpose[], now: number, use: (token: EmailToken, user: TokenUser) => TokenUse): Promise<TokenOutcome> {
    // A changed email or email_verified: the caches hear of the user once it committed; a recovery
    // (tokens, sessions and grants deleted) tells them that anything may have changed.
    let changed: Change | undefined
    return this.ctx
      .tx(async (tx): Promise<TokenOutcome> => {
        changed = undefined
        // The row lock makes a second use, on any instance, wait and then find it gone.
        const [row] = await tx`SELECT t.*, u.email AS current_email, u.email_verified FROM email_tokens t JOIN users u ON u.id = t.user_id
          WHERE t.token_hash = ${tokenHash} FOR UPDATE OF t`
        if (!row || !purposes.includes(row.purpose) || n(row.expires_at) <= now) return { ok: false, reason: 'unknown' }
        const token = toToken(row)
        const user = { email: row.current_email as string, emailVerified: row.email_verified as boolean, ...(await securityOf(tx, token.userId)) }
        const change = use(token, user)
        if (change.passwordHash !== undefined) await tx`UPDATE users SET password_hash = ${change.passwordHash} WHERE id = ${token.userId}`
        if (change.email !== undefined) await tx`UPDATE users SET email = ${change.email} WHERE id = ${token.userId}`
        if (change.emailVerified !== undefined) await tx`UPDATE users SET email_verified = ${change.emailVerified} WHERE id = ${token.userId}`
        changed = change.recover ? {} : change.email !== undefined || change.emailVerified !== undefined ? { users: [token.userId] } : undefined
        // A new address: every other link of the user (a reset or invitation sent to the old one) goes too.
        if (change.email !== undefined) await tx`DELETE FROM email_tokens WHERE user_id = ${token.userId}`
        else await tx`DELETE FROM email_tokens WHERE token_hash = ${tokenHash}`
        const removed = change.recover ? await recover(tx, token.userId) : undefined
        // Sessions ended: the site-session cache drops the user's (a recovery's `{}` already says anything changed).
        if (change.endSessions && (await tx`DELETE FROM sessions WHERE user_id = ${token.userId}`).count > 0 && !change.recover) changed = { ...changed, sessions: [token.userId] }
        await insertMail(tx, change.mail ?? [], now)
        return { ok: true, token, removed }
      })
      .then((outcome) => emitting(this.ctx, outcome, changed))
      .catch((error) => {
        if (error instanceof UniqueViolation) return { ok: false, reason: 'taken' } as const
        throw error
      })
  }

  claim(now: number, leaseUntil: number, limit: number): Promise<OutboxMessage[]> {
    return this.ctx.run(async (sql) => {
      const rows = await sql`UPDATE mail_outbox SET lease_until = ${leaseUntil} WHERE id IN (
          SELECT id FROM mail_outbox WHERE sent_at IS NULL AND failed_at IS NULL AND next_attempt_at <= ${now}
            AND (lease_until IS NULL OR lease_until <= ${now})
          ORDER BY next_attempt_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)
        RETURNING id, recipient, subject, text_body, html_body, created_at, attempts`
      return rows.map((r: Row) => ({
        id: n(r.id),
        to: r.recipient as string,
        subject: r.subject as string,
        text: r.text_body as string,
        html: r.html_body as string,
        createdAt: n(r.created_at),
        attempts: n(r.attempts),
      }))
    })
  }

  markSent(id: number, now: number): Promise<void> {
    return this.ctx.run(async (sql) => void (await sql`UPDATE mail_outbox SET sent_at = ${now}, lease_until = NULL, attempts = attempts + 1 WHERE id = ${id}`))
  }

  retryLater(id: number, nextAttemptAt: number, error: string): Promise<void> {
    return this.ctx.run(
      async (sql) =>
        void (await sql`UPDATE mail_outbox SET next_attempt_at = ${nextAttemptAt}, lease_until = NULL, last_error = ${error}, attempts = attempts + 1
          WHERE id = ${id} AND sent_at IS NULL`),
    )
  }

  markFailed(id: number, now: number, error: string): Promise<void> {
    return this.ctx.run(
      async (sql) => void (await sql`UPDATE mail_outbox SET failed_at = ${now}, lease_until = NULL, last_error = ${error}, attempts = attempts + 1 WHERE id = ${id}`),
    )
  }

  outboxCounts() {
    return this.ctx.run(async (sql) => {
      const [r] = await sql`SELECT count(*) FILTER (WHERE sent_at IS NULL AND failed_at IS NULL) AS waiting, count(sent_at) AS sent, count(failed_at) AS failed FROM mail_outbox`
      return { waiting: n(r.waiting), sent: n(r.sent), failed: n(r.failed) }
    })
  }
}
