import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { parsePrometheus, presentValue, valueOf } from '../ops/prometheus'
import { until } from '../wait'
import { discover, obtainToken, registerClient, registerUser } from './flow'
import { freePort, startBinary, type RunningBinary } from './server'

setDefaultTimeout(60_000)

let server: RunningBinary
let metricsUrl: string

beforeAll(async () => {
  server = await startBinary({}, undefined, { metrics: true })
  metricsUrl = server.metricsUrl!
})
afterAll(() => server?.cleanup())

async function scrape() {
  const res = await fetch(metricsUrl)
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toStartWith('text/plain; version=0.0.4')
  return parsePrometheus(await res.text())
}

describe('GET /metrics on METRICS_ADDRESS (Prometheus text)', () => {
  test('counters move after a sign-in and a token exchange; the histogram labels routes by their pattern', async () => {
    const before = await scrape()
    expect(before.types.get('latchkey_http_request_duration_seconds')).toBe('histogram')
    expect(before.types.get('latchkey_sign_ins_total')).toBe('counter')
    for (const name of ['latchkey_tokens_issued_total', 'latchkey_refresh_reuse_detected_total', 'latchkey_token_cache_hits_total', 'latchkey_token_cache_misses_total', 'latchkey_event_loop_lag_seconds', 'latchkey_settings_streams_open', 'latchkey_outbox_backlog', 'latchkey_db_pool_in_use', 'latchkey_db_pool_size', 'latchkey_db_operations_total', 'latchkey_db_operation_seconds_total'])
      expect(before.types.has(name)).toBe(true)

    const client = registerClient(server)
    registerUser(server, 'metrics@example.com')
    const tokens = await obtainToken(server, await discover(server), client, 'metrics@example.com', 'email settings:read')
    for (let i = 0; i < 3; i++) expect((await fetch(`${server.url}/api/oauth/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(200)
    expect((await fetch(`${server.url}/api/settings/some.key`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(404)

    const after = await scrape()
    // A labelled counter has no sample before its first increment (0); after the traffic it must be there.
    const delta = (name: string, labels: Record<string, string> = {}) => presentValue(after.samples, name, labels) - valueOf(before.samples, name, labels)
    expect(delta('latchkey_sign_ins_total', { method: 'password', result: 'success' })).toBe(1)
    expect(delta('latchkey_tokens_issued_total', { grant: 'authorization_code' })).toBe(1)
    expect(delta('latchkey_http_request_duration_seconds_count', { route: '/api/oauth/userinfo', method: 'GET', status: '200' })).toBe(3)
    expect(delta('latchkey_http_request_duration_seconds_count', { route: '/api/settings/:key', method: 'GET', status: '404' })).toBe(1)
    expect(delta('latchkey_token_cache_hits_total') + delta('latchkey_token_cache_misses_total')).toBeGreaterThanOrEqual(4)
    expect(after.samples.some((s) => s.labels.route === '/api/settings/some.key')).toBe(false)
    // The sign-in, the consent and the exchange wrote to the database, and took some time doing it.
    expect(delta('latchkey_db_operations_total')).toBeGreaterThanOrEqual(3)
    expect(delta('latchkey_db_operation_seconds_total')).toBeGreaterThan(0)
    expect(presentValue(after.samples, 'latchkey_db_pool_size')).toBe(process.env.LATCHKEY_TEST_DATABASE_URL ? 10 : 1)
    // Every request has been answered: once the audit log's batch (written every 100 ms) is in,
    // no connection is in use — the gauge goes back to 0, it does not only count up.
    let inUse = presentValue(after.samples, 'latchkey_db_pool_in_use')
    await until(async () => (inUse = presentValue((await scrape()).samples, 'latchkey_db_pool_in_use')) === 0, 'an idle pool')
    expect(inUse).toBe(0)
  })

  test('the metrics listener serves only /metrics; the app never serves it', async () => {
    expect((await fetch(metricsUrl.replace('/metrics', '/healthz'))).status).toBe(404)
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404)
    expect(server.output()).toContain(`"metrics":"${metricsUrl}"`)
  })
})

describe('METRICS_ADDRESS already taken', () => {
  test('exit 1 and one line naming METRICS_ADDRESS; nothing else is said (the app never listened)', async () => {
    const taken = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
    const appPort = await freePort()
    try {
      const r = server.cli(['serve'], undefined, { PORT: String(appPort), METRICS_ADDRESS: `127.0.0.1:${taken.port}`, DATABASE_URL: server.databaseUrl })
      expect(r).toEqual({
        code: 1,
        out: '',
        err: `latchkey: cannot listen on 127.0.0.1:${taken.port} for METRICS_ADDRESS: the address is already in use (another process listens there; set METRICS_ADDRESS)\n`,
      })
    } finally {
      taken.stop(true)
    }
  })
})
