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
  'recovery_codes.regenerated',
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
  'user.reset_link_made',
  'user.deleted',
  'client.created',
  'client.updated',
  'client.secret_rotated',
  'client.deleted',
  'registration_token.issued',
  'group.created',
  'group.deleted',
  'group.member_added',
  'group.member_removed',
  'resource.created',
  'resource.deleted',
  'site.created',
  'site.rule_added',
  'site.deleted',
  'site.sign_in',
  'provider.created',
  'provider.updated',
  'provider.deleted',
  'identity.linked',
  'identity.unlinked',
  'key.rotated',
  'key.removed',
  'config.applied',
]

/**
 * The kinds that are an operator's own work or record (apps, groups, resources, sites, providers,
 * keys, configuration; a deleted user; an app revoking its token): /account does not word them.
 * Every other kind is the user's own activity and /account shows it in the catalog's words
 * (`activity.<kind>`, in every locale: tests/accounts/activity.test.ts), so a new kind added above
 * is either listed here or given words — it cannot be forgotten.
 */
export const OPERATOR_KINDS: ReadonlySet<string> = new Set([
  'token.revoked',
  'user.deleted',
  'client.created',
  'client.updated',
  'client.secret_rotated',
  'client.deleted',
  'registration_token.issued',
  'group.created',
  'group.deleted',
  'resource.created',
  'resource.deleted',
  'site.created',
  'site.rule_added',
  'site.deleted',
  'provider.created',
  'provider.updated',
  'provider.deleted',
  'key.rotated',
  'key.removed',
  'config.applied',
])

/** The kinds /account shows a user in their own words ("Recent activity"): AUDIT_KINDS but the operator's. */
export const ACCOUNT_KINDS: readonly string[] = AUDIT_KINDS.filter((kind) => !OPERATOR_KINDS.has(kind))

export interface AuditFields {
  userId?: string | null
  clientId?: string | null
  /** The request it came from: its client address and user agent are kept. */
  request?: Request
  /** A few words, never a secret: the sign-in method, the grant, the actor. */
  detail?: Record<string, string | number | boolean>
}

/** SPEC "Audit log": failed sign-ins from one client address beyond 10 a minute are folded into one event with a count. */
export const FOLD_AFTER = 10
const FOLD_WINDOW_MS = 60_000
/** In-memory state per client is bounded (SPEC): past this many addresses, the oldest window is closed. */
const FOLD_ADDRESSES = 10_000

interface Window {
  start: number
  seen: number
  /** Failures past FOLD_AFTER, not written yet, and the last of them (its time and user agent go in the folded event). */
  folded: number
  last?: AuditEvent
}

/**
 * The audit log's writer. SPEC: an event is committed before the change it records is
 * acknowledged — `record()` resolves once its event is in the database, and every caller awaits
 * it before answering. Events recorded in the same turn go in one write (one job of the SQLite
 * writer, whose group commit shares its COMMIT with the other writes of that turn; one INSERT
 * on PostgreSQL), so a request pays a row in a batch, not a transaction of its own. A failed
 * write is logged and rejects the callers' promises: their answer is an error, not a success
 * whose event was lost. The token endpoint's hot paths (code exchange, refresh) take `event()`
 * instead and write it in their own transaction, with the tokens.
 *
 * Failed sign-ins are the exception: past FOLD_AFTER a minute from one address they are only
 * counted, and written as one 'sign_in.failed' event with `detail.folded` when the address's
 * minute ends (a timer), when it is pushed out of the bounded map, or on `flush()`.
 */
export class AuditLog {
  private batch: { events: AuditEvent[]; written: Promise<void> } | undefined
  private readonly windows = new Map<string, Window>()
  private sweep: ReturnType<typeof setTimeout> | undefined
  private writes = new Set<Promise<void>>()

  constructor(
    private readonly deps: { store: Store; clock: Clock; log: Logger; config: Pick<Config, 'trustedProxies'> },
    private readonly maxAddresses = FOLD_ADDRESSES,
  ) {}

  record(kind: string, fields: AuditFields = {}): Promise<void> {
    const event = this.event(kind, fields)
    if (kind === 'sign_in.failed' && event.address !== null && this.folds(event, event.address)) return Promise.resolve()
    return this.write(event)
  }

  /** An event as stored, for a change that writes it in its own transaction (a code exchange, a refresh: the hot paths). */
  event(kind: string, fields: AuditFields = {}): AuditEvent {
    const { request } = fields
    return {
      at: this.deps.clock.now(),
      kind,
      userId: fields.userId ?? null,
      clientId: fields.clientId ?? null,
      address: request ? clientAddressOf(request, this.deps.config.trustedProxies) : null,
      userAgent: request?.headers.get('user-agent')?.slice(0, 256) ?? null,
      detail: fields.detail ? JSON.stringify(fields.detail) : null,
    }
  }

  /** Writes every folded count now (shutdown; tests). Never rejects. */
  async flush(): Promise<void> {
    for (const [address, window] of this.windows) this.closeFold(address, window)
    await Promise.allSettled([...this.writes])
  }

  /** Whether a failed sign-in is past its address's allowance this minute (then it is counted, not written). */
  private folds(event: AuditEvent, address: string): boolean {
    const now = event.at
    let window = this.windows.get(address)
    if (window && now - window.start >= FOLD_WINDOW_MS) {
      this.closeFold(address, window)
      this.windows.delete(address)
      window = undefined
    }
    if (!window) {
      // A new window goes last: the map stays in the order of the windows' starts, oldest first.
      if (this.windows.size >= this.maxAddresses) {
        const [oldest, evicted] = this.windows.entries().next().value!
        this.closeFold(oldest, evicted)
        this.windows.delete(oldest)
      }
      this.windows.set(address, { start: now, seen: 1, folded: 0 })
      return false
    }
    if (window.seen < FOLD_AFTER) {
      window.seen++
      return false
    }
    window.folded++
    window.last = event
    this.sweep ??= setTimeout(this.sweepEnded, FOLD_WINDOW_MS)
    this.sweep.unref?.()
    return true
  }

  /** The folded failures of an address, as one event (written, not awaited: nothing waits to answer on it). */
  private closeFold(address: string, window: Window): void {
    if (window.folded === 0) return
    const last = window.last!
    void this.write({ ...last, userId: null, detail: JSON.stringify({ folded: window.folded }), address }).catch(() => {})
    window.folded = 0
    window.last = undefined
  }

  private readonly sweepEnded = (): void => {
    this.sweep = undefined
    const now = this.deps.clock.now()
    let open = false
    for (const [address, window] of this.windows) {
      if (now - window.start >= FOLD_WINDOW_MS) {
        this.closeFold(address, window)
        this.windows.delete(address)
      } else open ||= window.folded > 0
    }
    if (open) {
      this.sweep = setTimeout(this.sweepEnded, FOLD_WINDOW_MS)
      this.sweep.unref?.()
    }
  }

  /** Adds the event to this turn's batch, written once the turn's synchronous code is done. */
  private write(event: AuditEvent): Promise<void> {
    if (this.batch) {
      this.batch.events.push(event)
      return this.batch.written
    }
    const events = [event]
    const written = Promise.resolve()
      .then(() => {
        this.batch = undefined
        return this.deps.store.audit.record(events)
      })
      .catch((error: unknown) => {
        this.deps.log.warn('audit write failed', { events: events.length, error: (error as Error).message })
        throw error
      })
      .finally(() => this.writes.delete(written))
    // Handled here too, so a caller that does not await (a folded count) is never an unhandled rejection.
    written.catch(() => {})
    this.writes.add(written)
    this.batch = { events, written }
    return written
  }
}
