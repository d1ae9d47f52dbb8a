import type { AuditEvent, AuditFilter, AuditStore } from '../store'
import { n, type PgContext, type Row } from './context'

export class PgAudit implements AuditStore {
  constructor(private readonly ctx: PgContext) {}

  record(events: readonly AuditEvent[]): Promise<void> {
    if (events.length === 0) return Promise.resolve()
    return this.ctx.run(async (sql) => {
      const rows = events.map((e) => ({ at: e.at, kind: e.kind, user_id: e.userId, client_id: e.clientId, address: e.address, user_agent: e.userAgent, detail: e.detail }))
      await sql`INSERT INTO audit_events ${sql(rows)}`
    })
  }

  list(f: AuditFilter): Promise<AuditEvent[]> {
    const where: string[] = []
    const params: Array<string | number> = []
    const add = (clause: string, value: string | number) => (params.push(value), where.push(clause.replace('?', `$${params.length}`)))
    if (f.userId !== undefined) add('user_id = ?', f.userId)
    if (f.clientId !== undefined) add('client_id = ?', f.clientId)
    if (f.kind !== undefined) add('kind = ?', f.kind)
    if (f.since !== undefined) add('at >= ?', f.since)
    return this.ctx.run(async (sql) =>
      (
        await sql.unsafe(
          `SELECT at, kind, user_id, client_id, address, user_agent, detail FROM audit_events ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
            ORDER BY at DESC, id DESC LIMIT ${Math.max(1, Math.min(f.limit, 10_000))}`,
          params,
        )
      ).map((r: Row) => ({
        at: n(r.at),
        kind: r.kind as string,
        userId: r.user_id as string | null,
        clientId: r.client_id as string | null,
        address: r.address as string | null,
        userAgent: r.user_agent as string | null,
        detail: r.detail as string | null,
      })),
    )
  }
}
