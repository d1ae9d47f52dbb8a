/**
 * The soak of `bun run bench -- --scale` (issue 12): the compiled binary under a steady mix of
 * whole OAuth flows for BENCH_SOAK_SECONDS (600 by default), sampled every BENCH_SOAK_EVERY
 * seconds (30): the server's resident memory and the database's size, with the rows that come
 * and go. Tokens live a minute and refresh tokens two, so the minute's purge must keep up:
 * both series should flatten once the first expired rows are purged and their pages reused.
 *
 * One flow, SOAK_WORKERS of them at a time, over HTTP as an app would: GET /oauth/authorize
 * (a signed-in browser, a skip-consent app) → code exchange → five userinfo → a settings write
 * (one of 50 keys) and the list → a refresh → revoking the new refresh token every other flow.
 */
import { Database } from 'bun:sqlite'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { Harness } from './harness'

const SECONDS = Number(process.env.BENCH_SOAK_SECONDS ?? 600)
const EVERY = Number(process.env.BENCH_SOAK_EVERY ?? 30)
const SOAK_WORKERS = 32
const REDIRECT_URI = 'http://127.0.0.1:9/callback'

type SoakHarness = Pick<Harness, 'fail' | 'spawnServer' | 'stopServer' | 'cli' | 'signIn'>

export interface SoakSample {
  seconds: number
  flowsPerSecond: number
  rssMb: number
  fileMb: number
  walMb: number
  freePages: number
  accessTokens: number
  refreshTokens: number
  codes: number
}

export async function soak(h: SoakHarness, bin: string, scaleRoot: string): Promise<{ samples: SoakSample[]; failures: number; flows: number }> {
  const dir = mkdtempSync(join(scaleRoot, 'soak-'))
  try {
    const env = { LOG_LEVEL: 'info', ACCESS_TOKEN_TTL: '60', REFRESH_TOKEN_TTL: '120' }
    const server = await h.spawnServer('latchkey-soak', [bin], env, '/healthz', dir)
    const app = JSON.parse(h.cli(server, bin, ['client', 'create', '--name', 'Soak', '--redirect-uri', REDIRECT_URI, '--skip-consent']))
    h.cli(server, bin, ['user', 'create', '--email', 'soak@example.com', '--name', 'Soak User', '--password-stdin'], 'soak password\n')
    const cookie = await h.signIn(server.url, 'soak@example.com', 'soak password')
    const authorize = `${server.url}/oauth/authorize?client_id=${app.client_id}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&scope=${encodeURIComponent('profile email settings:read settings:write')}`
    const client = { client_id: app.client_id, client_secret: app.client_secret }
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(server.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })

    let flows = 0
    let failures = 0
    let lastError = ''
    const expect = async (res: Response, status: number, what: string) => {
      if (res.status === status) return res
      failures++
      lastError = `${what}: ${res.status} ${(await res.text()).slice(0, 200)}`
      throw new Error(lastError)
    }
    const flow = async (n: number) => {
      const redirect = await expect(await fetch(authorize, { redirect: 'manual', headers: { cookie } }), 303, 'authorize')
      const code = new URL(redirect.headers.get('location')!).searchParams.get('code')!
      const tokens = (await (await expect(await post('/api/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, ...client }), 200, 'exchange')).json()) as { access_token: string; refresh_token: string }
      const bearer = { authorization: `Bearer ${tokens.access_token}` }
      for (let i = 0; i < 5; i++) await (await expect(await fetch(`${server.url}/api/oauth/userinfo`, { headers: bearer }), 200, 'userinfo')).arrayBuffer()
      await (await expect(await post('/api/settings', { client_id: app.client_id, key: `pref.${n % 50}`, value: { n, theme: 'dark' } }, bearer), 200, 'settings write')).arrayBuffer()
      await (await expect(await fetch(`${server.url}/api/settings`, { headers: bearer }), 200, 'settings list')).arrayBuffer()
      const next = (await (await expect(await post('/api/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...client }), 200, 'refresh')).json()) as { refresh_token: string }
      if (n % 2 === 0) await (await expect(await post('/api/oauth/revoke', { token: next.refresh_token, ...client }), 200, 'revoke')).arrayBuffer()
      flows++
    }

    const database = join(dir, 'data/latchkey.sqlite')
    const reader = new Database(database, { readonly: true })
    const count = (table: string) => (reader.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n
    const mb = (path: string) => {
      try {
        return statSync(path).size / 1024 / 1024
      } catch {
        return 0
      }
    }
    const samples: SoakSample[] = []
    const started = performance.now()
    let flowsAtLast = 0
    let lastAt = started
    const sample = () => {
      const now = performance.now()
      const status = readFileSync(`/proc/${server.proc.pid}/status`, 'utf8')
      samples.push({
        seconds: Math.round((now - started) / 1000),
        flowsPerSecond: ((flows - flowsAtLast) * 1000) / Math.max(now - lastAt, 1),
        rssMb: Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024,
        fileMb: mb(database),
        walMb: mb(`${database}-wal`),
        freePages: (reader.query('PRAGMA freelist_count').get() as { freelist_count: number }).freelist_count,
        accessTokens: count('access_tokens'),
        refreshTokens: count('refresh_tokens'),
        codes: count('auth_codes'),
      })
      flowsAtLast = flows
      lastAt = now
      const s = samples.at(-1)!
      console.error(`  soak ${s.seconds} s: ${Math.round(s.flowsPerSecond)} flows/s, RSS ${s.rssMb.toFixed(1)} MB, file ${s.fileMb.toFixed(1)} MB, ${s.accessTokens} access tokens`)
    }
    sample()
    const timer = setInterval(sample, EVERY * 1000)
    const until = started + SECONDS * 1000
    let n = 0
    await Promise.all(
      Array.from({ length: SOAK_WORKERS }, async () => {
        while (performance.now() < until && failures === 0) await flow(n++).catch(() => {})
      }),
    )
    clearInterval(timer)
    // A last sample unless one was just taken (its rate would be over a sliver of time).
    if (performance.now() - lastAt > (EVERY * 1000) / 2) sample()
    reader.close()
    await h.stopServer(server)
    if (failures) h.fail(`soak: ${failures} failed requests, the last: ${lastError}`)
    return { samples, failures, flows }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
