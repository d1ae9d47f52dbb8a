import { and, eq, inArray, isNull, sql } from 'drizzle-orm'
import type { EmailPurpose, EmailToken, MailStore, NewMail, OutboxMessage, RecoveryRemoved, TokenOutcome, TokenUse, TokenUser } from '../store'
import { UniqueViolation } from '../store'
import { changes, type Db } from './client'
import { unique, type SqliteContext } from './context'
import { emailTokens, mailOutbox, sessions, users } from './schema'

/** Queues messages inside a write job. */
export function insertMail(db: Db, mail: readonly NewMail[], now: number): void {
  if (mail.length === 0) return
  const rows = mail.map((m) => ({ recipient: m.to, subject: m.subject, textBody: m.text, htmlBody: m.html, createdAt: now, nextAttemptAt: now }))
  db.orm.insert(mailOutbox).values(rows).run()
}

/** A link, replacing the user's earlier ones of the same purpose, and its message; inside a write job. */
export function insertToken(db: Db, token: EmailToken, mail: NewMail | null, now: number): void {
  db.orm.delete(emailTokens).where(and(eq(emailTokens.userId, token.userId), eq(emailTokens.purpose, token.purpose))).run()
  db.orm.insert(emailTokens).values({ ...token, createdAt: now }).run()
  if (mail) insertMail(db, [mail], now)
}

/** The outbox and the links, on the single writer: a claim is one job, so no two senders hold a message. */
export class SqliteMail implements MailStore {
  constructor(private readonly ctx: SqliteContext) {}

  enqueue(mail: readonly NewMail[], now: number): Promise<void> {
    return this.ctx.write(() => insertMail(this.ctx.db, mail, now))
  }

  issueToken(token: EmailToken, mail: NewMail | null, now: number): Promise<void> {
    return this.ctx.write(() => insertToken(this.ctx.db, token, mail, now))
  }

  async findToken(tokenHash: string, purposes: readonly EmailPurpose[], now: number): Promise<EmailToken | undefined> {
    const row = this.ctx.db.orm.select().from(emailTokens).where(eq(emailTokens.tokenHash, tokenHash)).get()
    return row && purposes.includes(row.purpose as EmailPurpose) && row.expiresAt > now ? toToken(row) : undefined
  }

  useToken(tokenHash: string, purposes: readonly EmailPurpose[], now: number, use: (token: EmailToken, user: TokenUser) => TokenUse): Promise<TokenOutcome> {
    const { db } = this.ctx
    return this.ctx.write((): TokenOutcome => {
      const row = db.orm.select().from(emailTokens).where(eq(emailTokens.tokenHash, tokenHash)).get()
      if (!row || !purposes.includes(row.purpose as EmailPurpose) || row.expiresAt <= now) return { ok: false, reason: 'unknown' }
      const user = db.orm.select({ email: users.email, emailVerified: users.emailVerified }).from(users).where(eq(users.id, row.userId)).get()
      if (!user) return { ok: false, reason: 'unknown' }
      const token = toToken(row)
      const change = use(token, { ...user, ...securityOf(db, row.userId) })
      const set: Partial<typeof users.$inferInsert> = {}
      if (change.passwordHash !== undefined) set.passwordHash = change.passwordHash
      if (change.email !== undefined) set.email = change.email
      if (change.emailVerified !== undefined) set.emailVerified = change.emailVerified
      if (Object.keys(set).length) {
        try {
          unique(() => db.orm.update(users).set(set).where(eq(users.id, row.userId)).run())
          if (set.email !== undefined || set.emailVerified !== undefined) this.ctx.emit({ users: [row.userId] })
        } catch (error) {
          if (error instanceof UniqueViolation) return { ok: false, reason: 'taken' }
          throw error
        }
      }
      // A new address: every other link of the user (a reset or invitation sent to the old one) goes too.
      if (set.email !== undefined) db.orm.delete(emailTokens).where(eq(emailTokens.userId, row.userId)).run()
      else db.orm.delete(emailTokens).where(eq(emailTokens.tokenHash, tokenHash)).run()
      const removed = change.recover ? recover(db, row.userId) : undefined
      // A recovery deleted tokens, sessions and grants: anything cached may be stale.
      if (removed) this.ctx.emit({})
      if (change.endSessions && changes(db.orm.delete(sessions).where(eq(sessions.userId, row.userId)).run()) > 0) this.ctx.emit({ sessions: [row.userId] })
      insertMail(db, change.mail ?? [], now)
      return { ok: true, token, removed }
    })
  }

  claim(now: number, leaseUntil: number, limit: number): Promise<OutboxMessage[]> {
    const { db } = this.ctx
    // A cheap read first: most ticks find nothing due and need no write job.
    const due = sql`${mailOutbox.sentAt} IS NULL AND ${mailOutbox.failedAt} IS NULL AND ${mailOutbox.nextAttemptAt} <= ${now} AND (${mailOutbox.leaseUntil} IS NULL OR ${mailOutbox.leaseUntil} <= ${now})`
    if (!db.orm.select({ id: mailOutbox.id }).from(mailOutbox).where(due).limit(1).get()) return Promise.resolve([])
    return this.ctx.write(() => {
      const rows = db.orm.select().from(mailOutbox).where(due).orderBy(mailOutbox.nextAttemptAt).limit(limit).all()
      if (rows.length) db.orm.update(mailOutbox).set({ leaseUntil }).where(inArray(mailOutbox.id, rows.map((r) => r.id))).run()
      return rows.map((r) => ({ id: r.id, to: r.recipient, subject: r.subject, text: r.textBody, html: r.htmlBody, createdAt: r.createdAt, attempts: r.attempts }))
    })
  }

  markSent(id: number, now: number): Promise<void> {
    return this.ctx.write(() => void this.ctx.db.orm.update(mailOutbox).set({ sentAt: now, leaseUntil: null, attempts: sql`${mailOutbox.attempts} + 1` }).where(eq(mailOutbox.id, id)).run())
  }

  retryLater(id: number, nextAttemptAt: number, error: string): Promise<void> {
    return this.ctx.write(
      () =>
        void this.ctx.db.orm
          .update(mailOutbox)
          .set({ nextAttemptAt, leaseUntil: null, lastError: error, attempts: sql`${mailOutbox.attempts} + 1` })
          .where(and(eq(mailOutbox.id, id), isNull(mailOutbox.sentAt)))
          .run(),
    )
  }

  markFailed(id: number, now: number, error: string): Promise<void> {
    return this.ctx.write(
      () => void this.ctx.db.orm.update(mailOutbox).set({ failedAt: now, leaseUntil: null, lastError: error, attempts: sql`${mailOutbox.attempts} + 1` }).where(eq(mailOutbox.id, id)).run(),
    )
  }

  async outboxCounts() {
    const row = this.ctx.db.sqlite
      .prepare<{ waiting: number; sent: number; failed: number }, []>(
        'SELECT count(*) FILTER (WHERE sent_at IS NULL AND failed_at IS NULL) AS waiting, count(sent_at) AS sent, count(failed_at) AS failed FROM mail_outbox',
      )
      .get()!
    return row
  }
}

/** The user's passkeys (by name) and whether TOTP is on. */
function securityOf(db: Db, userId: string): Pick<TokenUser, 'passkeys' | 'totp'> {
  const passkeys = db.sqlite.prepare<{ name: string }, [string]>('SELECT name FROM passkeys WHERE user_id = ? ORDER BY created_at, credential_id').all(userId)
  const totp = db.sqlite.prepare<{ totp_on: number }, [string]>('SELECT confirmed_at IS NOT NULL AS totp_on FROM totp_secrets WHERE user_id = ?').get(userId)
  return { passkeys: passkeys.map((p) => p.name), totp: totp?.totp_on === 1 }
}

/** Account recovery, inside the link's write job: what the user held is listed, then removed. */
function recover(db: Db, userId: string): RecoveryRemoved {
  const { sqlite } = db
  const count = (sql: string) => sqlite.prepare<{ n: number }, [string]>(sql).get(userId)!.n
  const apps = sqlite
    .prepare<{ name: string }, [string, string]>(
      `SELECT DISTINCT c.name FROM clients c WHERE c.id IN (SELECT client_id FROM consents WHERE user_id = ? UNION SELECT client_id FROM refresh_families WHERE user_id = ?) ORDER BY c.name`,
    )
    .all(userId, userId)
  const removed: RecoveryRemoved = {
    ...securityOf(db, userId),
    recoveryCodes: count('SELECT count(*) AS n FROM recovery_codes WHERE user_id = ?'),
    apps: apps.map((a) => a.name),
    sessions: count('SELECT count(*) AS n FROM sessions WHERE user_id = ?'),
    identities: sqlite
      .prepare<{ provider: string; email: string | null }, [string]>('SELECT p.name AS provider, i.email FROM user_identities i JOIN providers p ON p.id = i.provider_id WHERE i.user_id = ? ORDER BY p.name')
      .all(userId),
  }
  for (const table of RECOVERED) sqlite.prepare(`DELETE FROM ${table} WHERE user_id = ?`).run(userId)
  return removed
}

/** What a recovery removes: every way in the user (or anyone who held their account) set up. */
export const RECOVERED = [
  'passkeys',
  'webauthn_challenges',
  'totp_secrets',
  'recovery_codes',
  'consents',
  'auth_codes',
  'refresh_tokens',
  'refresh_families',
  'access_tokens',
  'sessions',
  'email_tokens',
  // A provider account connected by whoever set the account up signs in as surely as a passkey.
  'user_identities',
] as const

export const toToken = (row: typeof emailTokens.$inferSelect): EmailToken => ({
  tokenHash: row.tokenHash,
  userId: row.userId,
  purpose: row.purpose as EmailPurpose,
  email: row.email,
  expiresAt: row.expiresAt,
})
