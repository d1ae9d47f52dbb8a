import { and, eq, gt, ne, sql } from 'drizzle-orm'
import type { NewSession, SessionRecord, SessionStore } from '../store'
import type { SqliteContext } from './context'
import { prepared } from './prepared'
import { sessions, users } from './schema'
import { toUser } from './users'

const p = (name: string) => sql.placeholder(name)

export class SqliteSessions implements SessionStore {
  constructor(private readonly ctx: SqliteContext) {}

  createSession(session: NewSession, replacing?: string): Promise<boolean> {
    const { db } = this.ctx
    return this.ctx.write(() => {
      const user = db.sqlite.prepare('SELECT disabled_at AS disabledAt FROM users WHERE id = ?').get(session.userId) as { disabledAt: number | null } | null
      if (!user || user.disabledAt !== null) return false
      if (replacing) db.orm.delete(sessions).where(eq(sessions.idHash, replacing)).run()
      db.orm.insert(sessions).values({ ...session, amr: session.amr.join(' ') }).run()
      return true
    })
  }

  async findSession(idHash: string, now: number): Promise<SessionRecord | undefined> {
    const { db } = this.ctx
    const row = prepared(db, 'sessionByHash', () =>
      db.orm
        .select({ user: users, authTime: sessions.authTime, amr: sessions.amr, pending: sessions.pending })
        .from(sessions)
        .innerJoin(users, eq(users.id, sessions.userId))
        .where(and(eq(sessions.idHash, p('hash')), gt(sessions.expiresAt, p('now'))))
        .prepare(),
    ).get({ hash: idHash, now })
    return row && { user: toUser(row.user), admin: row.user.isAdmin, authTime: row.authTime, amr: row.amr.split(' '), pending: row.pending }
  }

  deleteSession(idHash: string): Promise<void> {
    const { db } = this.ctx
    return this.ctx.write(() => void db.orm.delete(sessions).where(eq(sessions.idHash, idHash)).run())
  }

  reauthenticated(idHash: string, now: number): Promise<void> {
    const { db } = this.ctx
    return this.ctx.write(() => void db.orm.update(sessions).set({ authTime: now }).where(eq(sessions.idHash, idHash)).run())
  }

  deleteSessionsOf(userId: string, except?: string): Promise<void> {
    const { db } = this.ctx
    const others = except === undefined ? eq(sessions.userId, userId) : and(eq(sessions.userId, userId), ne(sessions.idHash, except))
    return this.ctx.write(() => void db.orm.delete(sessions).where(others).run())
  }
}
