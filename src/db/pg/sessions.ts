import type { SQL } from 'bun'
import type { LogoutDelivery, NewMail, NewSession, SessionListing, SessionRecord, SessionStore } from '../store'
import { emitting, n, toUser, type PgContext, type Row } from './context'
import { insertMail } from './mail'

export class PgSessions implements SessionStore {
  constructor(private readonly ctx: PgContext) {}

  /**
   * The user's row is read FOR SHARE: a disabling that holds it is waited for, and then seen —
   * so no session starts for a user being disabled, whatever the timing across instances.
   */
  createSession(s: NewSession, replacing?: string, newDevice?: NewMail): Promise<boolean> {
    const insert = async (sql: SQL, sid = s.sid) =>
      (
        await sql`WITH u AS (SELECT id FROM users WHERE id = ${s.userId} AND disabled_at IS NULL FOR SHARE)
          INSERT INTO sessions (id_hash, sid, user_id, expires_at, auth_time, amr, pending, created_at, last_active_at, user_agent, address, device_hash)
          SELECT ${s.idHash}, ${sid}, id, ${s.expiresAt}, ${s.authTime}, ${s.amr.join(' ')}, ${s.pending}, ${s.authTime}, ${s.authTime}, ${s.userAgent}, ${s.address}, ${s.deviceHash ?? null} FROM u`
      ).count > 0
    const remembersDevice = s.deviceHash !== undefined && !s.pending
    if (!replacing && !remembersDevice) return this.ctx.run(insert)
    let ended: string[] = []
    return this.ctx.tx(async (tx) => {
      // The same person signing in again in this browser (prompt=login, a step-up) goes on in the same
      // session under a new token: its sid and apps are kept, so no app is told it ended (its rows are
      // moved off before the delete, which the logout trigger then finds without any).
      let kept: { sid: string; apps: string[] } | undefined
      if (replacing) {
        const [old] = await tx`SELECT sid FROM sessions WHERE id_hash = ${replacing} AND user_id = ${s.userId} FOR UPDATE`
        if (old) {
          const apps = await tx`DELETE FROM session_clients WHERE sid = ${old.sid} RETURNING client_id`
          kept = { sid: old.sid as string, apps: apps.map((a: Row) => a.client_id as string) }
        }
        ended = (await tx`DELETE FROM sessions WHERE id_hash = ${replacing} RETURNING user_id`).map((r: Row) => r.user_id as string)
      }
      if (!(await insert(tx, kept?.sid))) return false
      if (kept?.apps.length) await tx`INSERT INTO session_clients ${tx(kept.apps.map((client_id) => ({ sid: kept.sid, client_id })))}`
      if (remembersDevice) {
        const added = await tx`INSERT INTO user_devices (user_id, device_hash, created_at) VALUES (${s.userId}, ${s.deviceHash!}, ${s.authTime}) ON CONFLICT DO NOTHING`
        if (added.count > 0 && newDevice) await insertMail(tx, [newDevice], s.authTime)
      }
      return true
    }).then((made) => emitting(this.ctx, made, ended.length ? { sessions: ended } : undefined))
  }

  findSession(idHash: string, now: number, idleSince: number): Promise<SessionRecord | undefined> {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`SELECT u.id, u.email, u.full_name, u.avatar_url, u.email_verified, u.locale, u.time_zone, u.is_admin, s.auth_time, s.amr, s.pending, s.sid, s.last_active_at
        FROM sessions s JOIN users u ON u.id = s.user_id
        WHERE s.id_hash = ${idHash} AND s.expires_at > ${now} AND s.last_active_at > ${idleSince}`
      return (
        row && {
          user: toUser(row),
          admin: row.is_admin as boolean,
          authTime: n(row.auth_time),
          amr: (row.amr as string).split(' '),
          pending: row.pending as boolean,
          sid: row.sid as string,
          lastActiveAt: n(row.last_active_at),
        }
      )
    })
  }

  deleteSession(idHash: string): Promise<void> {
    return this.ctx.run(async (sql) => void this.ended(await sql`DELETE FROM sessions WHERE id_hash = ${idHash} RETURNING user_id`))
  }

  reauthenticated(idHash: string, now: number): Promise<void> {
    return this.ctx.run(async (sql) => void (await sql`UPDATE sessions SET auth_time = ${now} WHERE id_hash = ${idHash}`))
  }

  deleteSessionsOf(userId: string, except?: string): Promise<void> {
    return this.ctx.run(async (sql) => void this.ended(await sql`DELETE FROM sessions WHERE user_id = ${userId} AND id_hash <> ${except ?? ''} RETURNING user_id`))
  }

  /**
   * Sign-in sessions deleted (rows of their user ids): the site-session cache here drops their
   * users' at once (other instances hear the trigger's NOTIFY, drizzle/pg/0021). How many.
   */
  private ended(rows: Row[]): number {
    if (rows.length) this.ctx.emit({ sessions: [...new Set(rows.map((r) => r.user_id as string))] })
    return rows.length
  }

  listSessions(userId: string, now: number, idleSince: number): Promise<SessionListing[]> {
    return this.ctx.run(async (sql) => {
      const rows = await sql`SELECT sid, created_at, last_active_at, user_agent, address FROM sessions
        WHERE user_id = ${userId} AND NOT pending AND expires_at > ${now} AND last_active_at > ${idleSince}
        ORDER BY last_active_at DESC, created_at DESC`
      return rows.map((r: Row) => ({
        sid: r.sid as string,
        createdAt: n(r.created_at),
        lastActiveAt: n(r.last_active_at),
        userAgent: r.user_agent as string,
        address: r.address as string,
      }))
    })
  }

  deleteSessionOf(userId: string, sid: string): Promise<boolean> {
    return this.ctx.run(async (sql) => this.ended(await sql`DELETE FROM sessions WHERE user_id = ${userId} AND sid = ${sid} RETURNING user_id`) > 0)
  }

  /** One statement for the whole batch (a JSON array of [id_hash, at] unpacked by the server). */
  /**
   * The batch's rows are taken in one order (their key's) and a row another transaction holds is
   * skipped: two instances writing overlapping batches, each in the order its requests came, had
   * each waited for a row the other held — a deadlock, one batch aborted and its touches lost
   * (tests/db/touch-sessions-two-instances.test.ts). A skipped row is being written by the other
   * (a touch, as recent) or a sign-out: nothing is lost that "last active" needs.
   */
  touchSessions(touches: ReadonlyMap<string, number>): Promise<void> {
    const batch = JSON.stringify([...touches].map(([h, at]) => ({ h, at })))
    return this.ctx.run(
      async (sql) =>
        void (await sql`WITH t AS (SELECT h, at FROM jsonb_to_recordset(CAST(${batch} AS text)::jsonb) AS t(h text, at bigint)),
          held AS (SELECT s.id_hash, t.at FROM sessions s JOIN t ON s.id_hash = t.h ORDER BY s.id_hash FOR UPDATE OF s SKIP LOCKED)
          UPDATE sessions s SET last_active_at = greatest(s.last_active_at, held.at) FROM held WHERE s.id_hash = held.id_hash`),
    )
  }

  /**
   * The foreign key's KEY SHARE lock orders this with a sign-out on another instance: one that
   * deletes the session after this commits waits for it and its trigger sees the row; one that
   * deleted it first makes the key check fail (23503) — the session is gone, there is nothing to record.
   */
  async recordIdToken(sid: string, clientId: string): Promise<void> {
    try {
      await this.ctx.run(async (sql) => void (await sql`INSERT INTO session_clients (sid, client_id) SELECT sid, ${clientId} FROM sessions WHERE sid = ${sid} ON CONFLICT DO NOTHING`))
    } catch (error) {
      if ((error as { errno?: string }).errno !== '23503') throw error
    }
  }

  /** FOR UPDATE SKIP LOCKED and a lease: with senders on several instances, each delivery is held by one. */
  claimLogouts(now: number, leaseUntil: number, limit: number): Promise<LogoutDelivery[]> {
    return this.ctx.run(async (sql) => {
      const rows = await sql`WITH claimed AS (
          UPDATE logout_deliveries SET lease_until = ${leaseUntil}, created_at = coalesce(created_at, ${now}) WHERE id IN (
            SELECT id FROM logout_deliveries WHERE sent_at IS NULL AND failed_at IS NULL AND next_attempt_at <= ${now}
              AND (lease_until IS NULL OR lease_until <= ${now})
            ORDER BY next_attempt_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)
          RETURNING id, client_id, sid, user_id, created_at, attempts)
        SELECT d.*, c.backchannel_logout_uri, c.registration_token_hash IS NOT NULL AS dynamic, c.id_token_alg FROM claimed d JOIN clients c ON c.id = d.client_id`
      return rows.map((r: Row) => ({
        id: n(r.id),
        clientId: r.client_id as string,
        sid: r.sid as string,
        userId: r.user_id as string,
        createdAt: n(r.created_at),
        attempts: n(r.attempts),
        uri: (r.backchannel_logout_uri as string | null) ?? null,
        dynamic: r.dynamic as boolean,
        idTokenAlg: r.id_token_alg as string,
      }))
    })
  }

  logoutSent(id: number, now: number): Promise<void> {
    return this.ctx.run(async (sql) => void (await sql`UPDATE logout_deliveries SET sent_at = ${now}, lease_until = NULL, attempts = attempts + 1 WHERE id = ${id}`))
  }

  logoutRetryLater(id: number, nextAttemptAt: number, error: string): Promise<void> {
    return this.ctx.run(
      async (sql) =>
        void (await sql`UPDATE logout_deliveries SET next_attempt_at = ${nextAttemptAt}, lease_until = NULL, last_error = ${error}, attempts = attempts + 1
          WHERE id = ${id} AND sent_at IS NULL`),
    )
  }

  logoutFailed(id: number, now: number, error: string): Promise<void> {
    return this.ctx.run(
      async (sql) => void (await sql`UPDATE logout_deliveries SET failed_at = ${now}, lease_until = NULL, last_error = ${error}, attempts = attempts + 1 WHERE id = ${id}`),
    )
  }

  logoutCounts() {
    return this.ctx.run(async (sql) => {
      const [r] = await sql`SELECT count(*) FILTER (WHERE sent_at IS NULL AND failed_at IS NULL) AS waiting, count(sent_at) AS sent, count(failed_at) AS failed FROM logout_deliveries`
      return { waiting: n(r.waiting), sent: n(r.sent), failed: n(r.failed) }
    })
  }
}
