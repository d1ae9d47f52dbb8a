import type { Config } from './config'
import type { AuditEvent, Store } from './db/store'
import type { Clock } from './lib/clock'
import type { Logger } from './lib/log'
import { clientAddressOf } from './web/client-address'

/** Every kind of event the log holds (the admin page filters by them). */
export const AUDIT_KINDS: readonly string[] = [
  'sign_in.succeeded',
  'sign_in.failed',
  'consent.granted',
  'consent.revoked',
  'token.issued',
  'token.refreshed',
  'token.revoked',
  'refresh.reuse_detected',
  'passkey.added',
  'passkey.removed',
  'two_step.enabled',
  'two_step.disabled',
  'password.changed',
  'password.removed',
  'password.reset',
  'email.change_requested',
  'email.changed',
  'user.created',
  'user.invited',
  'user.updated',
  'user.signed_out',
  'user.two_step_reset',
  'user.deleted',
  'client.created',
  'client.updated',
  'client.secret_rotated',
  'client.deleted',
  'group.created',
  'group.deleted',
  'group.member_added',
  'group.member_removed',
  'resource.created',
  'resource.deleted',
  'key.rotated',
  'config.applied',
]

export interface AuditFields {
  userId?: string | null
  clientId?: string | null
  /** The request it came from: its client address and user agent are kept. */
  request?: Request
  /** A few words, never a secret: the sign-in method, the grant, the actor. */
  detail?: Record<string, string | number | boolean>
}

/**
 * The audit log's writer: events are queued and written together every 100 ms (one write job
 * on SQLite, one INSERT on PostgreSQL), so a request pays a push, not a write — and no extra
 * fsync. The queue is bounded: past 10,000 waiting events (the database gone), the oldest are
 * dropped and counted. Stopping writes what is queued.
 */
export class AuditLog {
  private queue: AuditEvent[] = []
  private timer: ReturnType<typeof setTimeout> | undefined
  private writing: Promise<void> = Promise.resolve()
  dropped = 0

  constructor(
    private readonly deps: { store: Store; clock: Clock; log: Logger; config: Pick<Config, 'trustedProxies'> },
    private readonly maxQueued = 10_000,
    private readonly delayMs = 100,
  ) {}

  record(kind: string, fields: AuditFields = {}): void {
    const { request } = fields
    if (this.queue.length >= this.maxQueued) {
      this.queue.shift()
      this.dropped++
    }
    this.queue.push({
      at: this.deps.clock.now(),
      kind,
      userId: fields.userId ?? null,
      clientId: fields.clientId ?? null,
      address: request ? clientAddressOf(request, this.deps.config.trustedProxies) : null,
      userAgent: request?.headers.get('user-agent')?.slice(0, 256) ?? null,
      detail: fields.detail ? JSON.stringify(fields.detail) : null,
    })
    this.timer ??= setTimeout(() => void this.flush(), this.delayMs)
  }

  /** Writes what is queued (in order, one batch after another). */
  flush(): Promise<void> {
    clearTimeout(this.timer)
    this.timer = undefined
    const batch = this.queue
    this.queue = []
    if (batch.length === 0) return this.writing
    // Never a rejection: a failing write (the database gone, or closed under a late batch) is logged, not thrown.
    this.writing = this.writing.then(async () => {
      try {
        await this.deps.store.audit.record(batch)
      } catch (error) {
        this.deps.log.warn('audit write failed', { events: batch.length, error: (error as Error).message })
      }
    })
    return this.writing
  }
}
