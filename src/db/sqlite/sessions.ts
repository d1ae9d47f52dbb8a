import { and, eq, gt, sql } from 'drizzle-orm'
import type { SessionRecord, SessionStore } from '../store'
import type { SqliteContext } from './context'
import { prepared } from './prepared'
import { sessions, users } from './schema'
import { toUser } from './users'

const p = (name: string) => sql.placeholder(name)

export class SqliteSessions implements SessionStore {
  constructor(private readonly ctx: SqliteContext) {}

  createSession(idHash: string, userId: string, expiresAt: number, authTime: number, replacing?: string): Promise<void> {
    const { db } = this.ctx
    return this.ctx.write(() => {
      if (replacing) db.orm.delete(sessions).where(eq(sessions.idHash, replacing)).run()
      db.orm.insert(sessions).values({ idHash, userId, expiresAt, authTime }).run()
    })
  }

  async findSession(idHash: string, now: number): Promise<SessionRecord | undefined> {
    const { db } = this.ctx
    const row = prepared(db, 'sessionByHash', () =>
      db.orm
        .select({ user: users, authTime: sessions.authTime })
        .from(sessions)
        .innerJoin(users, eq(users.id, sessions.userId))
        .where(and(eq(sessions.idHash, p('hash')), gt(sessions.expiresAt, p('now'))))
        .prepare(),
    ).get({ hash: idHash, now })
    return row && { user: toUser(row.user), authTime: row.authTime }
  }

  deleteSession(idHash: string): Promise<void> {
    const { db } = this.ctx
    return this.ctx.write(() => void db.orm.delete(sessions).where(eq(sessions.idHash, idHash)).run())
  }

  deleteSessionsOf(userId: string): Promise<void> {
    const { db } = this.ctx
    return this.ctx.write(() => void db.orm.delete(sessions).where(eq(sessions.userId, userId)).run())
  }
}
