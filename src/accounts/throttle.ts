import type { AppContext } from '../context'
import type { Store, ThrottleRow } from '../db/store'
import type { Clock } from '../lib/clock'
import { clientAddressOf, rateLimitKey } from '../web/client-address'

const FREE_FAILURES = 5
const MAX_WAIT_MS = 15 * 60 * 1000
export const FORGET_AFTER_MS = 60 * 60 * 1000
const WINDOW_MS = 60 * 1000

type Decision = { row: ThrottleRow | null; result: number }

/**
 * Per account (as Keycloak's brute-force detection): after five failures in a row an account
 * must wait 1 s, then 2 s, 4 s … up to 15 minutes between tries. The attempt is counted before
 * its password is checked (and forgiven on success), so parallel guesses get no more checks
 * than sequential ones. Returns the seconds to wait, or 0 when this attempt may go ahead.
 */
export function decideAccountAttempt(row: ThrottleRow | undefined, now: number): Decision {
  const live = row && now - row.lastAt < FORGET_AFTER_MS ? row : undefined
  if (live && live.count >= FREE_FAILURES) {
    const wait = Math.min(1000 * 2 ** (live.count - FREE_FAILURES), MAX_WAIT_MS)
    const remaining = live.lastAt + wait - now
    if (remaining > 0) return { row: live, result: Math.ceil(remaining / 1000) }
  }
  return { row: { count: (live?.count ?? 0) + 1, startedAt: live?.startedAt ?? now, lastAt: now }, result: 0 }
}

/** Per client address: a fixed one-minute window of `perMinute` password checks. */
export function decideAddressAttempt(row: ThrottleRow | undefined, now: number, perMinute: number): Decision {
  if (!row || now - row.startedAt >= WINDOW_MS) return { row: { count: 1, startedAt: now, lastAt: now }, result: 0 }
  if (row.count >= perMinute) return { row, result: Math.max(1, Math.ceil((row.startedAt + WINDOW_MS - now) / 1000)) }
  return { row: { count: row.count + 1, startedAt: row.startedAt, lastAt: now }, result: 0 }
}

const MAILS_PER_HOUR = 3
const CHANGES_PER_HOUR = 3
const HOUR_MS = 60 * 60 * 1000

/** At most `limit` events per fixed window: 0, or the seconds until the window ends. */
export function decideWindowAttempt(row: ThrottleRow | undefined, now: number, limit: number, windowMs: number): Decision {
  if (!row || now - row.startedAt >= windowMs) return { row: { count: 1, startedAt: now, lastAt: now }, result: 0 }
  if (row.count >= limit) return { row, result: Math.max(1, Math.ceil((row.startedAt + windowMs - now) / 1000)) }
  return { row: { count: row.count + 1, startedAt: row.startedAt, lastAt: now }, result: 0 }
}

/** Per address: at most three messages an hour (a fixed window), so no one can flood a mailbox. */
export function decideMailAttempt(row: ThrottleRow | undefined, now: number): Decision {
  return decideWindowAttempt(row, now, MAILS_PER_HOUR, HOUR_MS)
}

/**
 * The sign-in limits, kept in the database (one row per account hash and per address) so every
 * instance shares them and each decision is one atomic read-and-write. Keys are fixed-size
 * hashes and addresses; the purge drops rows an hour after their last attempt.
 */
export class SignInLimits {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly perMinute: number,
  ) {}

  /** One password check for this address: 0, or the seconds it must wait. */
  takeAddress(address: string): Promise<number> {
    return this.store.throttle.updateThrottle(`addr:${address}`, (row) => decideAddressAttempt(row, this.clock.now(), this.perMinute))
  }

  /** One check (a password or a code) for the request's client address, or the seconds it must wait; a wait is logged as `event`. */
  async takeAddressCheck(ctx: AppContext, request: Request, event: string): Promise<number> {
    const address = clientAddressOf(request, ctx.config.trustedProxies)
    const wait = await this.takeAddress(rateLimitKey(address))
    if (wait > 0) ctx.log.warn(event, { limit: 'address', client: address, retry_after: wait })
    return wait
  }

  /**
   * Both budgets of one guess (a password or a code), before any checking: the address's first,
   * then the account's back-off. Undefined when it may go ahead; otherwise which one must wait and
   * how long (logged as `event`).
   */
  async takeAttempt(ctx: AppContext, request: Request, accountHash: string, event: string): Promise<{ limit: 'address' | 'account'; wait: number } | undefined> {
    const addressWait = await this.takeAddressCheck(ctx, request, event)
    if (addressWait > 0) return { limit: 'address', wait: addressWait }
    const wait = await this.takeAccount(accountHash)
    if (wait === 0) return undefined
    ctx.log.warn(event, { limit: 'account', email_hash: accountHash, client: clientAddressOf(request, ctx.config.trustedProxies), retry_after: wait })
    return { limit: 'account', wait }
  }

  /** One attempt at this account, counted as failed until `succeeded`: 0, or the seconds it must wait. */
  takeAccount(accountHash: string): Promise<number> {
    return this.store.throttle.updateThrottle(`acct:${accountHash}`, (row) => decideAccountAttempt(row, this.clock.now()))
  }

  /** One message to this address (by the hash of it): 0, or the seconds until another may go. */
  takeMail(addressHash: string): Promise<number> {
    return this.store.throttle.updateThrottle(`mail:${addressHash}`, (row) => decideMailAttempt(row, this.clock.now()))
  }

  /**
   * One email change request (SPEC "Change email"): three an hour per account and per client
   * address, so no one signed in (or one network) can send confirmation links in bulk. 0, or the
   * seconds until another may go.
   */
  async takeEmailChange(ctx: AppContext, request: Request, userId: string): Promise<number> {
    const address = rateLimitKey(clientAddressOf(request, ctx.config.trustedProxies))
    const decide = (row: ThrottleRow | undefined) => decideWindowAttempt(row, this.clock.now(), CHANGES_PER_HOUR, HOUR_MS)
    const wait = await this.store.throttle.updateThrottle(`chg:addr:${address}`, decide)
    return wait > 0 ? wait : this.store.throttle.updateThrottle(`chg:acct:${userId}`, decide)
  }

  succeeded(accountHash: string): Promise<void> {
    return this.store.throttle.updateThrottle(`acct:${accountHash}`, () => ({ row: null, result: undefined }))
  }
}
