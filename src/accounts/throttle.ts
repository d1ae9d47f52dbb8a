import type { Clock } from '../lib/clock'

const FREE_FAILURES = 5
const MAX_WAIT_MS = 15 * 60 * 1000
const FORGET_AFTER_MS = 60 * 60 * 1000

/**
 * Slows password guessing per account (as Keycloak's brute-force detection does): after five
 * failures in a row an email must wait 1 s, then 2 s, 4 s … up to 15 minutes between tries.
 * Unknown emails are counted the same way, so the answer reveals nothing. In memory and bounded.
 */
export class LoginThrottle {
  private readonly failures = new Map<string, { count: number; last: number }>()

  constructor(
    private readonly clock: Clock,
    private readonly maxTracked = 10_000,
  ) {}

  /** Seconds this email must still wait; 0 when it may try now. */
  retryAfter(email: string): number {
    const entry = this.failures.get(email)
    if (!entry || entry.count < FREE_FAILURES) return 0
    const wait = Math.min(1000 * 2 ** (entry.count - FREE_FAILURES), MAX_WAIT_MS)
    const remaining = entry.last + wait - this.clock.now()
    return remaining > 0 ? Math.ceil(remaining / 1000) : 0
  }

  failed(email: string): void {
    const now = this.clock.now()
    const entry = this.failures.get(email)
    if (entry && now - entry.last < FORGET_AFTER_MS) {
      entry.count++
      entry.last = now
      return
    }
    if (this.failures.size >= this.maxTracked) this.prune(now)
    this.failures.set(email, { count: 1, last: now })
  }

  succeeded(email: string): void {
    this.failures.delete(email)
  }

  private prune(now: number): void {
    for (const [email, entry] of this.failures) if (now - entry.last >= FORGET_AFTER_MS) this.failures.delete(email)
    // Still full: drop the oldest entries rather than grow without bound.
    for (const email of this.failures.keys()) {
      if (this.failures.size < this.maxTracked) break
      this.failures.delete(email)
    }
  }
}
