export type SignInMethod = 'password' | 'passkey' | 'two_step' | 'recovery_code' | 'provider'
export type SignInResult = 'success' | 'failure' | 'throttled'

type PromClient = typeof import('prom-client')

export interface MetricSources {
  tokenCache: () => { hits: number; misses: number }
  streams: () => number
  outbox: () => Promise<{ pending: number }>
  db: () => { inUse: number; size: number; operations: number; seconds: number }
}

/** What exists once metrics are on. */
interface Live {
  registry: InstanceType<PromClient['Registry']>
  requests: InstanceType<PromClient['Histogram']>
  signIns: InstanceType<PromClient['Counter']>
  tokens: InstanceType<PromClient['Counter']>
  reuse: InstanceType<PromClient['Counter']>
}

/**
 * What `GET /metrics` shows (Prometheus text, on METRICS_ADDRESS only): request durations by
 * route and status, sign-ins by method and result, tokens issued by grant, refresh-token reuse,
 * the token cache's hits and misses, event-loop lag, open settings streams, the mail outbox's
 * backlog, the database pool's use and its operations' time. Counting costs a hot path an increment
 * (the cache's counters are plain numbers read at scrape time); the rest is read when scraped.
 */
export class Metrics {
  /** Off until `enable()`: prom-client is loaded only by a server that serves /metrics (~13 MB of memory otherwise). */
  private live: Live | undefined
  private lag = 0
  private lagTimer: ReturnType<typeof setTimeout> | undefined

  /** Read at scrape time: the token cache's counters, the open streams, the outbox, the database. */
  constructor(private readonly sources: MetricSources) {}

  /** METRICS_ADDRESS is set: load prom-client, make the metrics, start measuring event-loop lag. */
  async enable(): Promise<void> {
    if (this.live) return
    const { Counter, Gauge, Histogram, Registry } = await import('prom-client')
    const registry = new Registry()
    const registers = [registry]
    const sources = this.sources
    const self = this
    this.live = {
      registry,
      requests: new Histogram({
        name: 'latchkey_http_request_duration_seconds',
        help: 'HTTP requests by route (the pattern, not the path), method and status, and how long they took',
        labelNames: ['route', 'method', 'status'],
        buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
        registers,
      }),
      signIns: new Counter({ name: 'latchkey_sign_ins_total', help: 'Sign-in attempts by method and result', labelNames: ['method', 'result'], registers }),
      tokens: new Counter({ name: 'latchkey_tokens_issued_total', help: 'Access tokens issued by the token endpoint, by grant', labelNames: ['grant'], registers }),
      reuse: new Counter({ name: 'latchkey_refresh_reuse_detected_total', help: 'Rotated refresh tokens presented again (the family was revoked)', registers }),
    }
    new Counter({ name: 'latchkey_token_cache_hits_total', help: 'Access tokens answered from the in-process cache', registers, collect() { this.reset(); this.inc(sources.tokenCache().hits) } })
    new Counter({ name: 'latchkey_token_cache_misses_total', help: 'Access tokens looked up in the database', registers, collect() { this.reset(); this.inc(sources.tokenCache().misses) } })
    new Gauge({ name: 'latchkey_event_loop_lag_seconds', help: 'How late a 100 ms timer fired, last time', registers, collect() { this.set(self.lag) } })
    new Gauge({ name: 'latchkey_settings_streams_open', help: 'Settings event streams open on this instance', registers, collect() { this.set(sources.streams()) } })
    new Gauge({ name: 'latchkey_db_pool_in_use', help: 'Database connections in use (SQLite: writes waiting for the one writer)', registers, collect() { this.set(sources.db().inUse) } })
    new Gauge({ name: 'latchkey_db_pool_size', help: 'Database connections the pool may open (SQLite: 1, the writer)', registers, collect() { this.set(sources.db().size) } })
    new Counter({ name: 'latchkey_db_operations_total', help: 'Database operations done (SQLite: writes)', registers, collect() { this.reset(); this.inc(sources.db().operations) } })
    new Counter({ name: 'latchkey_db_operation_seconds_total', help: 'Time spent in database operations; divided by latchkey_db_operations_total, the mean', registers, collect() { this.reset(); this.inc(sources.db().seconds) } })
    new Gauge({ name: 'latchkey_outbox_backlog', help: 'Messages waiting in the mail outbox', registers, async collect() { this.set((await sources.outbox()).pending) } })
    this.startLagProbe()
  }

  request(route: string, method: string, status: number, seconds: number): void {
    this.live?.requests.observe({ route, method, status: String(status) }, seconds)
  }

  signIn(method: SignInMethod, result: SignInResult): void {
    this.live?.signIns.inc({ method, result })
  }

  tokenIssued(grant: string): void {
    this.live?.tokens.inc({ grant })
  }

  reuseDetected(): void {
    this.live?.reuse.inc()
  }

  /** Measures event-loop lag: a 100 ms timer, and how late it fires. */
  private startLagProbe(): void {
    const tick = () => {
      const expected = performance.now() + 100
      this.lagTimer = setTimeout(() => {
        this.lag = Math.max(0, performance.now() - expected) / 1000
        tick()
      }, 100)
      this.lagTimer.unref?.()
    }
    if (!this.lagTimer) tick()
  }

  stop(): void {
    clearTimeout(this.lagTimer)
  }

  text(): Promise<string> {
    if (!this.live) throw new Error('metrics are off')
    return this.live.registry.metrics()
  }

  get contentType(): string {
    return this.live?.registry.contentType ?? 'text/plain'
  }
}
