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
  requests: RequestDurations
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
    const { Counter, Gauge, Registry } = await import('prom-client')
    const registry = new Registry()
    const registers = [registry]
    const sources = this.sources
    const self = this
    this.live = {
      registry,
      requests: new RequestDurations(registry),
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
    this.live?.requests.observe(route, method, status, seconds)
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

const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

/** One route, method and status: its requests in each bucket (the last one past 2.5 s), their sum and count. */
interface Durations {
  labels: { route: string; method: string; status: string }
  buckets: Float64Array
  sum: number
  count: number
}

/**
 * latchkey_http_request_duration_seconds, counted in plain numbers on the request path and shown in
 * prom-client's histogram form when scraped (registered as a metric of the registry): prom-client's
 * Histogram.observe checks and hashes its labels on every request (~0.4 µs, measured; every
 * forward-auth check is a request).
 */
class RequestDurations {
  readonly name = 'latchkey_http_request_duration_seconds'
  readonly help = 'HTTP requests by route (the pattern, not the path), method and status, and how long they took'
  readonly type = 'histogram'
  readonly aggregator = 'sum'
  private readonly series = new Map<string, Durations>()

  constructor(registry: { registerMetric(metric: unknown): void }) {
    registry.registerMetric(this)
  }

  observe(route: string, method: string, status: number, seconds: number): void {
    // Routes are the app's patterns and methods the few it serves: the series are bounded.
    const key = `${status} ${method} ${route}`
    let d = this.series.get(key)
    if (!d) this.series.set(key, (d = { labels: { route, method, status: String(status) }, buckets: new Float64Array(DURATION_BUCKETS.length + 1), sum: 0, count: 0 }))
    let i = 0
    while (i < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[i]!) i++
    d.buckets[i]!++
    d.sum += seconds
    d.count++
  }

  /** What prom-client's Histogram gives its registry for the text: cumulative buckets, +Inf, sum and count per series, its labels shared. */
  getForPromString() {
    type Value = { labels: { le?: number | string }; sharedLabels: Durations['labels']; value: number; metricName: string }
    const values: Value[] = []
    const bucket = `${this.name}_bucket`
    for (const d of this.series.values()) {
      let below = 0
      DURATION_BUCKETS.forEach((le, i) => values.push({ labels: { le }, sharedLabels: d.labels, value: (below += d.buckets[i]!), metricName: bucket }))
      values.push({ labels: { le: '+Inf' }, sharedLabels: d.labels, value: d.count, metricName: bucket })
      values.push({ labels: {}, sharedLabels: d.labels, value: d.sum, metricName: `${this.name}_sum` })
      values.push({ labels: {}, sharedLabels: d.labels, value: d.count, metricName: `${this.name}_count` })
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator }
  }

  /** The same with each value's labels in one (prom-client's JSON form). */
  get() {
    const data = this.getForPromString()
    return { ...data, values: data.values.map(({ labels, sharedLabels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } })) }
  }
}
