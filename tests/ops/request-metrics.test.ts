import { describe, expect, test } from 'bun:test'
import { Histogram, Registry } from 'prom-client'
import { Metrics } from '../../src/metrics'

describe('request durations (GET /metrics)', () => {
  test("counted in plain numbers, shown exactly as prom-client's histogram shows them", async () => {
    const metrics = new Metrics({ tokenCache: () => ({ hits: 0, misses: 0 }), streams: () => 0, outbox: async () => ({ pending: 0 }), db: () => ({ inUse: 0, size: 1, operations: 0, seconds: 0 }) })
    await metrics.enable()
    const registry = new Registry()
    const reference = new Histogram({
      name: 'latchkey_http_request_duration_seconds',
      help: 'HTTP requests by route (the pattern, not the path), method and status, and how long they took',
      labelNames: ['route', 'method', 'status'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    })
    // On a bound, between bounds, past the last, and a label value that needs escaping.
    const seen: Array<[string, string, number, number]> = [
      ['/api/authz/forward-auth', 'GET', 200, 0.0005],
      ['/api/authz/forward-auth', 'GET', 200, 0.0004],
      ['/api/authz/forward-auth', 'GET', 200, 3],
      ['/api/settings/:key', 'PUT', 404, 0.7],
      ['/api/authz/forward-auth', 'GET', 403, 2.5],
      ['/a"b\\c', 'GET', 200, 0.01],
    ]
    for (const [route, method, status, seconds] of seen) {
      metrics.request(route, method, status, seconds)
      reference.observe({ route, method, status: String(status) }, seconds)
    }
    const text = await metrics.text()
    expect(text.slice(0, text.indexOf('\n\n'))).toBe(await registry.metrics().then((t) => t.trim()))
    metrics.stop()
  })
})
