import type { Clock } from '../lib/clock'

const FREE_FAILURES = 5
const MAX_WAIT_MS = 15 * 60 * 1000
const FORGET_AFTER_MS = 60 * 60 * 1000
const WINDOW_MS = 60 * 1000

/** A Map that holds at most `max` entries: when full, it drops expired ones, then the oldest. */
class BoundedMap<V> extends Map<string, V> {
  constructor(
    private readonly max: number,
    private readonly expired: (value: V) => boolean,
  ) {
    super()
  }

  override set(key: string, value: V): this {
    if (!this.has(key) && this.size >= this.max) {
      for (const [k, v] of this) if (this.expired(v)) this.delete(k)
      for (const k of this.keys()) {
        if (this.size < this.max) break
        this.delete(k)
      }
    }
    return super.set(key, value)
  }
}

/**
 * Slows password guessing per account (as Keycloak's brute-force detection does): after five
 * failures in a row an account must wait 1 s, then 2 s, 4 s … up to 15 minutes between tries.
 * Keyed by a hash of the normalized email (fixed size whatever was typed); unknown emails are
 * counted the same way, so the answer reveals nothing. Every attempt is counted as a failure
 * before its password is checked and forgiven on success, so parallel guesses get no more
 * checks than sequential ones. In memory, at most `maxTracked` accounts.
 */
export class AccountThrottle {
  private readonly failures: BoundedMap<{ count: number; last: number }>

  constructor(
    private readonly clock: Clock,
    maxTracked = 10_000,
  ) {
    this.failures = new BoundedMap(maxTracked, (entry) => this.clock.now() - entry.last >= FORGET_AFTER_MS)
  }

  /** Seconds this account must still wait; 0 when it may try now. */
  retryAfter(key: string): number {
    const entry = this.failures.get(key)
    if (!entry || entry.count < FREE_FAILURES) return 0
    const wait = Math.min(1000 * 2 ** (entry.count - FREE_FAILURES), MAX_WAIT_MS)
    const remaining = entry.last + wait - this.clock.now()
    return remaining > 0 ? Math.ceil(remaining / 1000) : 0
  }

  /** Counts an attempt as failed, before its password is checked. */
  attempt(key: string): void {
    const now = this.clock.now()
    const entry = this.failures.get(key)
    if (entry && now - entry.last < FORGET_AFTER_MS) {
      entry.count++
      entry.last = now
      return
    }
    this.failures.set(key, { count: 1, last: now })
  }

  succeeded(key: string): void {
    this.failures.delete(key)
  }

  get trackedCount(): number {
    return this.failures.size
  }
}

/**
 * `LOGIN_ATTEMPTS_PER_MINUTE` password checks per client address (SPEC): a fixed one-minute
 * window per address, taken before any hashing, so one client cannot keep the CPUs busy with
 * argon2. Keys are addresses (IPv6 by /64), at most `maxTracked` of them.
 */
export class AddressLimiter {
  private readonly windows: BoundedMap<{ start: number; count: number }>

  constructor(
    private readonly clock: Clock,
    private readonly perMinute: number,
    maxTracked = 50_000,
  ) {
    this.windows = new BoundedMap(maxTracked, (w) => this.clock.now() - w.start >= WINDOW_MS)
  }

  /** Takes one check for the address: 0 when allowed, else the seconds until it may try again. */
  take(key: string): number {
    const now = this.clock.now()
    const window = this.windows.get(key)
    if (!window || now - window.start >= WINDOW_MS) {
      this.windows.set(key, { start: now, count: 1 })
      return 0
    }
    if (window.count >= this.perMinute) return Math.max(1, Math.ceil((window.start + WINDOW_MS - now) / 1000))
    window.count++
    return 0
  }

  get trackedCount(): number {
    return this.windows.size
  }
}
