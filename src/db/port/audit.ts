/** The audit log: what happened, when, to whom, through which app, from where — never a secret. */

export interface AuditEvent {
  at: number
  kind: string
  userId: string | null
  clientId: string | null
  address: string | null
  userAgent: string | null
  /** A small JSON object, or null. */
  detail: string | null
}

export interface AuditFilter {
  userId?: string
  clientId?: string
  kind?: string
  since?: number
  limit: number
}

export interface AuditStore {
  /** Many events in one write (the log batches them). */
  record(events: readonly AuditEvent[]): Promise<void>
  /** Newest first. */
  list(filter: AuditFilter): Promise<AuditEvent[]>
}
