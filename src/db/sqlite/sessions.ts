import { and, eq, gt, ne, sql } from 'drizzle-orm'
import type { LogoutDelivery, NewMail, NewSession, SessionListing, SessionRecord, SessionStore } from '../store'
import { changes } from './client'
import type { SqliteContext } from './context'
import { insertMail } from './mail'
import { prepared } from './prepared'
import { sessions, users } from './schema'
import { toUser } from './users'

const p = (name: string) => sql.placeholder(name)

export class SqliteSessions implements SessionStore {
  constructor(private readonly ctx: SqliteContext) {}

  createSession(session: NewSession, replacing?: string, newDevice?: NewMail): Promise<boolean> {
    const { db } = this.ctx
    return this.ctx.write(() => {
      const user = db.sqlite.prepare('SELECT disabled_at AS disabledAt FROM users WHERE id = ?').get(session.userId) as { disabledAt: number | null } | null
      if (!user || user.disabledAt !== null) return false
      // The same person signing in again in this browser (prompt=login, a step-up) goes on in the same
      // session under a new token: its sid and apps are kept, so no app is told it ended (its rows are
      // moved off before the delete, which the logout trigger then finds without any).
      const kept = replacing ? this.keptOnReplace(replacing, session.userId) : undefined
      if (replacing) this.ended(db.sqlite.query<{ user_id: string }, [string]>('DELETE FROM sessions WHERE id_hash = ? RETURNING user_id').all(replacing))
      const { deviceHash } = session
      db.orm.insert(sessions).values({ ...session, sid: kept?.sid ?? session.sid, amr: session.amr.join(' '), createdAt: session.authTime, lastActiveAt: session.authTime }).run()
      if (kept) for (const clientId of kept.apps) db.sqlite.prepare('INSERT INTO session_clients (sid, client_id) VALUES (?, ?)').run(kept.sid, clientId)
      if (deviceHash && !session.pending) {
        const known = db.sqlite.prepare('INSERT OR IGNORE INTO user_devices (user_id, device_hash, created_at) VALUES (?, ?, ?)').run(session.userId, deviceHash, session.authTime)
        if (known.changes > 0 && newDevice) insertMail(db, [newDevice], session.authTime)
      }
      return true
    })
  }

  /** Inside the writer: the replaced session's sid and apps when it is the same user's (taken off it), else undefined. */
  private keptOnReplace(replacing: string, userId: string): { sid: string; apps: string[] } | undefined {
    const { sqlite } = this.ctx.db
    const old = sqlite.prepare<{ sid: string }, [string, string]>('SELECT sid FROM sessions WHERE id_hash = ? AND user_id = ?').get(replacing, userId)
    if (!old) return undefined
    const apps = sqlite.prepare<{ clientId: string }, [string]>('DELETE FROM session_clients WHERE sid = ? RETURNING client_id AS clientId').all(old.sid)
    return { sid: old.sid, apps: apps.map((a) => a.clientId) }
  }

  async findSession(idHash: string, now: number, idleSince: number): Promise<SessionRecord | undefined> {
    const { db } = this.ctx
    const row = prepared(db, 'sessionByHash', () =>
      db.orm
        .select({ user: users, authTime: sessions.authTime, amr: sessions.amr, pending: sessions.pending, sid: sessions.sid, lastActiveAt: sessions.lastActiveAt })
        .from(sessions)
        .innerJoin(users, eq(users.id, sessions.userId))
        .where(and(eq(sessions.idHash, p('hash')), gt(sessions.expiresAt, p('now')), gt(sessions.lastActiveAt, p('idleSince'))))
        .prepare(),
    ).get({ hash: idHash, now, idleSince })
    return (
      row && { user: toUser(row.user), admin: row.user.isAdmin, authTime: row.authTime, amr: row.amr.split(' '), pending: row.pending, sid: row.sid, lastActiveAt: row.lastActiveAt }
    )
  }

  deleteSession(idHash: string): Promise<void> {
    return this.ctx.write(() => this.ended(this.ctx.db.sqlite.query<{ user_id: string }, [string]>('DELETE FROM sessions WHERE id_hash = ? RETURNING user_id').all(idHash)))
  }

  /** Sign-in sessions deleted: the site-session cache drops their users' (src/authz/cache.ts). */
  private ended(rows: ReadonlyArray<{ user_id: string }>): void {
    if (rows.length) this.ctx.emit({ sessions: [...new Set(rows.map((r) => r.user_id))] })
  }

  reauthenticated(idHash: string, now: number): Promise<void> {
    const { db } = this.ctx
    return this.ctx.write(() => void db.orm.update(sessions).set({ authTime: now }).where(eq(sessions.idHash, idHash)).run())
  }

  deleteSessionsOf(userId: string, except?: string): Promise<void> {
    const { db } = this.ctx
    const others = except === undefined ? eq(sessions.userId, userId) : and(eq(sessions.userId, userId), ne(sessions.idHash, except))
    return this.ctx.write(() => {
      if (changes(db.orm.delete(sessions).where(others).run()) > 0) this.ctx.emit({ sessions: [userId] })
    })
  }

  async listSessions(userId: string, now: number, idleSince: number): Promise<SessionListing[]> {
    return this.ctx.db.sqlite
      .prepare<SessionListing, [string, number, number]>(
        `SELECT sid, created_at AS createdAt, last_active_at AS lastActiveAt, user_agent AS userAgent, address FROM sessions
          WHERE user_id = ? AND NOT pending AND expires_at > ? AND last_active_at > ? ORDER BY last_active_at DESC, created_at DESC`,
      )
      .all(userId, now, idleSince)
  }

  deleteSessionOf(userId: string, sid: string): Promise<boolean> {
    return this.ctx.write(() => {
      const found = this.ctx.db.sqlite.prepare('DELETE FROM sessions WHERE user_id = ? AND sid = ?').run(userId, sid).changes > 0
      if (found) this.ctx.emit({ sessions: [userId] })
      return found
    })
  }

  touchSessions(touches: ReadonlyMap<string, number>): Promise<void> {
    const update = this.ctx.db.sqlite.prepare('UPDATE sessions SET last_active_at = max(last_active_at, ?) WHERE id_hash = ?')
    return this.ctx.write(() => {
      for (const [idHash, at] of touches) update.run(at, idHash)
    })
  }

  recordIdToken(sid: string, clientId: string): Promise<void> {
    return this.ctx.write(
      () => void this.ctx.db.sqlite.prepare('INSERT OR IGNORE INTO session_clients (sid, client_id) SELECT sid, ? FROM sessions WHERE sid = ?').run(clientId, sid),
    )
  }

  claimLogouts(now: number, leaseUntil: number, limit: number): Promise<LogoutDelivery[]> {
    const { sqlite } = this.ctx.db
    return this.ctx.write(() => {
      const rows = sqlite
        .prepare<{ id: number; clientId: string; sid: string; userId: string; createdAt: number | null; attempts: number; uri: string | null; dynamic: number; idTokenAlg: string }, [number, number]>(
          `SELECT d.id, d.client_id AS clientId, d.sid, d.user_id AS userId, d.created_at AS createdAt, d.attempts, c.backchannel_logout_uri AS uri,
              c.registration_token_hash IS NOT NULL AS dynamic, c.id_token_alg AS idTokenAlg
            FROM logout_deliveries d JOIN clients c ON c.id = d.client_id
            WHERE d.sent_at IS NULL AND d.failed_at IS NULL AND d.next_attempt_at <= ?1 AND (d.lease_until IS NULL OR d.lease_until <= ?1)
            ORDER BY d.next_attempt_at LIMIT ?2`,
        )
        .all(now, limit)
      const lease = sqlite.prepare('UPDATE logout_deliveries SET lease_until = ?, created_at = coalesce(created_at, ?) WHERE id = ?')
      for (const r of rows) lease.run(leaseUntil, now, r.id)
      return rows.map((r) => ({ ...r, createdAt: r.createdAt ?? now, dynamic: r.dynamic === 1 }))
    })
  }

  logoutSent(id: number, now: number): Promise<void> {
    return this.ctx.write(() => void this.ctx.db.sqlite.prepare('UPDATE logout_deliveries SET sent_at = ?, lease_until = NULL, attempts = attempts + 1 WHERE id = ?').run(now, id))
  }

  logoutRetryLater(id: number, nextAttemptAt: number, error: string): Promise<void> {
    return this.ctx.write(
      () =>
        void this.ctx.db.sqlite
          .prepare('UPDATE logout_deliveries SET next_attempt_at = ?, lease_until = NULL, last_error = ?, attempts = attempts + 1 WHERE id = ? AND sent_at IS NULL')
          .run(nextAttemptAt, error, id),
    )
  }

  logoutFailed(id: number, now: number, error: string): Promise<void> {
    return this.ctx.write(
      () => void this.ctx.db.sqlite.prepare('UPDATE logout_deliveries SET failed_at = ?, lease_until = NULL, last_error = ?, attempts = attempts + 1 WHERE id = ?').run(now, error, id),
    )
  }

  async logoutCounts() {
    return this.ctx.db.sqlite
      .prepare<{ waiting: number; sent: number; failed: number }, []>(
        'SELECT count(*) FILTER (WHERE sent_at IS NULL AND failed_at IS NULL) AS waiting, count(sent_at) AS sent, count(failed_at) AS failed FROM logout_deliveries',
      )
      .get()!
  }
}
