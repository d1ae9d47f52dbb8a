import type { SQL } from 'bun'
import type { NewSession, SessionRecord, SessionStore } from '../store'
import { n, toUser, type PgContext } from './context'

export class PgSessions implements SessionStore {
  constructor(private readonly ctx: PgContext) {}

  /**
   * The user's row is read FOR SHARE: a disabling that holds it is waited for, and then seen —
   * so no session starts for a user being disabled, whatever the timing across instances.
   */
  createSession(s: NewSession, replacing?: string): Promise<boolean> {
    const insert = async (sql: SQL) =>
      (
        await sql`WITH u AS (SELECT id FROM users WHERE id = ${s.userId} AND disabled_at IS NULL FOR SHARE)
          INSERT INTO sessions (id_hash, user_id, expires_at, auth_time, amr, pending)
          SELECT ${s.idHash}, id, ${s.expiresAt}, ${s.authTime}, ${s.amr.join(' ')}, ${s.pending} FROM u`
      ).count > 0
    if (!replacing) return this.ctx.run(insert)
    return this.ctx.tx(async (tx) => {
      await tx`DELETE FROM sessions WHERE id_hash = ${replacing}`
      return insert(tx)
    })
  }

  findSession(idHash: string, now: number): Promise<SessionRecord | undefined> {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`SELECT u.id, u.email, u.full_name, u.avatar_url, u.email_verified, u.is_admin, s.auth_time, s.amr, s.pending FROM sessions s JOIN users u ON u.id = s.user_id
        WHERE s.id_hash = ${idHash} AND s.expires_at > ${now}`
      return row && { user: toUser(row), admin: row.is_admin as boolean, authTime: n(row.auth_time), amr: (row.amr as string).split(' '), pending: row.pending as boolean }
    })
  }

  deleteSession(idHash: string): Promise<void> {
    return this.ctx.run(async (sql) => void (await sql`DELETE FROM sessions WHERE id_hash = ${idHash}`))
  }

  reauthenticated(idHash: string, now: number): Promise<void> {
    return this.ctx.run(async (sql) => void (await sql`UPDATE sessions SET auth_time = ${now} WHERE id_hash = ${idHash}`))
  }

  deleteSessionsOf(userId: string, except?: string): Promise<void> {
    return this.ctx.run(async (sql) => void (await sql`DELETE FROM sessions WHERE user_id = ${userId} AND id_hash <> ${except ?? ''}`))
  }
}
