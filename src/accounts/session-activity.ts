import type { Store } from '../db/store'
import type { Logger } from '../lib/log'
import { sha256 } from '../lib/crypto'
import type { Session } from './sessions'

/** Pending touches kept at most: past it a touch waits for the next request (memory stays bounded). */
const MAX_PENDING = 10_000
/**
 * Touches written per write, one write after another. On SQLite a write runs on the event loop:
 * 10,000 touches among 100,000 sessions in one held it 100–140 ms (measured: every request
 * waited, the forward-auth bench's p99 at 100,000 site sessions was 58 ms against 3 ms with one);
 * 128 hold it ~1–2 ms, the commits between them cost little, and requests are served in between.
 */
export const TOUCHES_PER_WRITE = 128

/**
 * "Last active" (SPEC "Sessions"): written at most once a minute per session — or per tenth of
 * SESSION_IDLE_TTL when that is shorter — and never on the request path. A request only notes
 * the time in a bounded map; a timer writes the whole map, TOUCHES_PER_WRITE at a time (each a
 * transaction on SQLite, one statement on PostgreSQL). The idle expiry is checked on read against what is written,
 * so a session in use is written at least every `interval` and never times out.
 */
export class SessionActivity {
  private pending = new Map<string, number>()
  private timer: ReturnType<typeof setInterval> | undefined
  private flushing: Promise<void> | undefined
  /** A session's activity is written again once this much older (milliseconds). */
  readonly interval: number

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    idleTtlSeconds: number,
  ) {
    this.interval = Math.min(60_000, (idleTtlSeconds * 1000) / 10)
  }

  /** Notes a request of the session at `now` (no I/O). */
  touch(session: Session, now: number): void {
    this.touchHash(sha256(session.token), session.lastActiveAt, now)
  }

  /** The same, for a sign-in session known by its hash (a site session's check: forward-auth); true when `now` was noted to be written. */
  touchHash(key: string, lastActiveAt: number, now: number): boolean {
    if (now - lastActiveAt < this.interval) return false
    if (this.pending.has(key) || this.pending.size < MAX_PENDING) {
      this.pending.set(key, now)
      return true
    }
    void this.flush()
    return false
  }

  /** Writes every pending touch, TOUCHES_PER_WRITE at a time (touches noted meanwhile wait for the next flush). */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing
    if (this.pending.size === 0) return Promise.resolve()
    const batch = this.pending
    this.pending = new Map()
    this.flushing = this.write(batch).finally(() => (this.flushing = undefined))
    return this.flushing
  }

  private async write(batch: Map<string, number>): Promise<void> {
    let failed: unknown
    let chunk = new Map<string, number>()
    const written = async () => {
      await this.store.sessions.touchSessions(chunk).catch((error: unknown) => void (failed ??= error))
      chunk = new Map()
    }
    for (const [key, at] of batch) {
      chunk.set(key, at)
      if (chunk.size === TOUCHES_PER_WRITE) await written()
    }
    if (chunk.size > 0) await written()
    // One line for the flush, not one per write.
    if (failed !== undefined) this.log.warn('session activity not written', { error: String((failed as Error)?.message ?? failed) })
  }

  get size(): number {
    return this.pending.size
  }

  start(): void {
    this.timer = setInterval(() => void this.flush(), Math.min(this.interval, 15_000))
    this.timer.unref()
  }

  async stop(): Promise<void> {
    clearInterval(this.timer)
    // What was noted while a flush was under way is written by the next.
    await this.flush()
    await this.flush()
  }
}
