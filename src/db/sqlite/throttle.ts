import { eq } from 'drizzle-orm'
import type { ThrottleRow, ThrottleStore } from '../store'
import type { SqliteContext } from './context'
import { loginThrottle } from './schema'

export class SqliteThrottle implements ThrottleStore {
  constructor(private readonly ctx: SqliteContext) {}

  updateThrottle<T>(key: string, decide: (row: ThrottleRow | undefined) => { row: ThrottleRow | null; result: T }): Promise<T> {
    const { db } = this.ctx
    return this.ctx.write(() => {
      const row: ThrottleRow | undefined = db.orm
        .select({ count: loginThrottle.count, startedAt: loginThrottle.startedAt, lastAt: loginThrottle.lastAt })
        .from(loginThrottle)
        .where(eq(loginThrottle.key, key))
        .get()
      const next = decide(row)
      if (next.row === row) return next.result
      if (next.row === null) {
        if (row) db.orm.delete(loginThrottle).where(eq(loginThrottle.key, key)).run()
      } else {
        db.orm
          .insert(loginThrottle)
          .values({ key, ...next.row })
          .onConflictDoUpdate({ target: loginThrottle.key, set: next.row })
          .run()
      }
      return next.result
    })
  }
}
