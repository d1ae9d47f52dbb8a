import type { AuditEvent, AuditFilter, AuditStore } from '../store'
import type { Db } from './client'
import type { SqliteContext } from './context'
import { prepared } from './prepared'

export class SqliteAudit implements AuditStore {
  constructor(private readonly ctx: SqliteContext) {}

  record(events: readonly AuditEvent[]): Promise<void> {
    return this.ctx.write(() => insertAuditEvents(this.ctx.db, events))
  }

  async list(f: AuditFilter): Promise<AuditEvent[]> {
    const where: string[] = []
    const params: Array<string | number> = []
    if (f.userId !== undefined) where.push('user_id = ?'), params.push(f.userId)
    if (f.clientId !== undefined) where.push('client_id = ?'), params.push(f.clientId)
    if (f.kind !== undefined) where.push('kind = ?'), params.push(f.kind)
    if (f.since !== undefined) where.push('at >= ?'), params.push(f.since)
    const sql = `SELECT at, kind, user_id AS userId, client_id AS clientId, address, user_agent AS userAgent, detail FROM audit_events
      ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY at DESC, id DESC LIMIT ${Math.max(1, Math.min(f.limit, 10_000))}`
    return this.ctx.db.sqlite.prepare(sql).all(...params) as AuditEvent[]
  }
}

/** Inside a write job: the audit log's batches, and the events written with the change they record (a code exchange, a refresh). */
export function insertAuditEvents(db: Db, events: readonly AuditEvent[]): void {
  // Compiled once: a batch is a turn's events (every caller waits for its event), not 100 ms of them.
  const insert = prepared(db, 'auditInsert', () =>
    db.sqlite.prepare<unknown, [number, string, string | null, string | null, string | null, string | null, string | null]>(
      'INSERT INTO audit_events (at, kind, user_id, client_id, address, user_agent, detail) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
  )
  for (const e of events) insert.run(e.at, e.kind, e.userId, e.clientId, e.address, e.userAgent, e.detail)
}
