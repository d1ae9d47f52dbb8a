import type { ThrottleRow, ThrottleStore } from '../store'
import { lock, n, type PgContext } from './context'

export class PgThrottle implements ThrottleStore {
  constructor(private readonly ctx: PgContext) {}

  updateThrottle<T>(key: string, decide: (row: ThrottleRow | undefined) => { row: ThrottleRow | null; result: T }): Promise<T> {
    return this.ctx.tx(async (tx) => {
      await lock(tx, `throttle:${key}`)
      const [found] = await tx`SELECT count, started_at, last_at FROM login_throttle WHERE key = ${key}`
      const row = found && { count: n(found.count), startedAt: n(found.started_at), lastAt: n(found.last_at) }
      const next = decide(row)
      if (next.row === row) return next.result
      if (next.row === null) {
        if (row) await tx`DELETE FROM login_throttle WHERE key = ${key}`
      } else {
        await tx`INSERT INTO login_throttle (key, count, started_at, last_at) VALUES (${key}, ${next.row.count}, ${next.row.startedAt}, ${next.row.lastAt})
          ON CONFLICT (key) DO UPDATE SET count = excluded.count, started_at = excluded.started_at, last_at = excluded.last_at`
      }
      return next.result
    })
  }
}
