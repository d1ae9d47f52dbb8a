/**
 * `bun run bench`: Latchkey against the physical limit (a bare Bun.serve) and against a peer
 * (panva's oidc-provider on Node), in one run, with wrk. Prepares users, apps, tokens and codes
 * through the real endpoints, measures each case after a warm-up, prints one table and writes it
 * as JSON under tests/bench/results/. Any non-2xx answer fails the run.
 *
 *   BENCH_SECONDS=10 BENCH_WARMUP=2 BENCH_CONNECTIONS=64 BENCH_THREADS=2 bun run bench
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { connect } from '../../src/db/pg/connect'
import { startHaproxy } from '../haproxy'
import type { Case, Harness, PgCluster, Row, Server, WrkResult } from './harness'
import { measurePasskeySignIn } from './passkeys'
import { measureStreams } from './streams'

const root = join(import.meta.dir, '../..')
const here = import.meta.dir
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64)
const THREADS = Number(process.env.BENCH_THREADS ?? 2)
const CLK_TCK = 100
const REDIRECT_URI = 'http://127.0.0.1:9/callback'

/** Every server this run started; none outlives it, whether it ends well or not. */
const children = new Set<Subprocess>()
/**
 * The folders this run made (servers' databases: up to ~1.5 GB each), deleted as their server
 * stops and whatever is left when the run ends, well or not: each run left four behind.
 */
const madeDirs = new Set<string>()
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL')
  for (const dir of madeDirs) rmSync(dir, { recursive: true, force: true })
})
// Interrupted: exit through the handler above (a signal alone would skip it).
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130))

function fail(message: string): never {
  console.error(`bench: ${message}`)
  process.exit(1)
}

// ---------------------------------------------------------------------------------------------
// Processes

async function freePort(): Promise<number> {
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = probe.port
  probe.stop(true)
  return port
}

async function waitHealthy(url: string, proc: Subprocess, path: string): Promise<number> {
  const started = performance.now()
  for (;;) {
    if (proc.exitCode !== null) fail(`${url} exited with ${proc.exitCode}`)
    try {
      if ((await fetch(url + path)).status === 200) return performance.now() - started
    } catch {}
    if (performance.now() - started > 20_000) fail(`${url}${path} never answered 200`)
    // A millisecond between tries: a loop without one takes a core from the server it waits for (2 here).
    await Bun.sleep(1)
  }
}

/** A server in a folder of its own; `stdoutFile`: its standard output goes to that file there (an access log as operators keep it). */
async function spawnServer(name: string, cmd: string[], env: Record<string, string>, healthPath: string, cwd?: string, stdoutFile?: string): Promise<Server & { env: Record<string, string> }> {
  const port = await freePort()
  const dir = cwd ?? mkdtempSync(join(tmpdir(), `bench-${name}-`))
  if (cwd === undefined) madeDirs.add(dir)
  const proc = Bun.spawn(cmd, {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', HOME: dir, HOST: '127.0.0.1', PORT: String(port), ...env },
    stdout: stdoutFile ? Bun.file(join(dir, stdoutFile)) : 'ignore',
    stderr: 'ignore',
  })
  children.add(proc)
  const url = `http://127.0.0.1:${port}`
  await waitHealthy(url, proc, healthPath)
  return { name, url, proc, dir, env }
}

async function stopServer(s: Server): Promise<void> {
  s.proc.kill('SIGTERM')
  await s.proc.exited
  children.delete(s.proc)
  if (madeDirs.delete(s.dir)) rmSync(s.dir, { recursive: true, force: true })
}

function cpuTicks(pid: number): number {
  const stat = require('node:fs').readFileSync(`/proc/${pid}/stat`, 'utf8') as string
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return Number(fields[11]) + Number(fields[12]) // utime + stime (fields 14 and 15)
}

/** Bytes the process made the disk read and write (not page-cache hits): /proc/PID/io. */
function diskBytes(pid: number): { read: number; write: number } {
  const io = require('node:fs').readFileSync(`/proc/${pid}/io`, 'utf8') as string
  return { read: Number(/read_bytes: (\d+)/.exec(io)![1]), write: Number(/^write_bytes: (\d+)/m.exec(io)![1]) }
}

function rssMb(pid: number): number {
  const status = require('node:fs').readFileSync(`/proc/${pid}/status`, 'utf8') as string
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024
}

// ---------------------------------------------------------------------------------------------
// wrk

function toMs(value: string): number {
  const m = /([\d.]+)(us|ms|s)/.exec(value)
  if (!m) return NaN
  const n = Number(m[1])
  return m[2] === 'us' ? n / 1000 : m[2] === 's' ? n * 1000 : n
}

function parseWrk(out: string): WrkResult {
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN)
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? NaN)
  const p50 = /^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? ''
  const p99 = /^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? ''
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0)
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out)
  const socketErrors = sock ? sock.slice(1).reduce((a, b) => a + Number(b), 0) : 0
  return { requests, rps, p50ms: toMs(p50), p99ms: toMs(p99), non2xx, socketErrors }
}

function wrk(c: Case, seconds: number, extraEnv: Record<string, string>): string {
  const connections = c.connections ?? CONNECTIONS
  const args = ['wrk', `-t${Math.min(THREADS, connections)}`, `-c${connections}`, `-d${seconds}s`, '--latency']
  for (const [k, v] of Object.entries(c.headers ?? {})) args.push('-H', `${k}: ${v}`)
  if (c.script) args.push('-s', join(here, 'lua', c.script))
  args.push(c.server().url + c.path)
  const r = Bun.spawnSync(args, { env: { ...process.env, THREADS: String(Math.min(THREADS, connections)), LUA_PATH: `${join(here, 'lua')}/?.lua;;`, ...c.env, ...extraEnv } })
  if (r.exitCode !== 0) fail(`wrk failed for ${c.name}: ${r.stderr.toString()}`)
  return r.stdout.toString()
}

async function measure(c: Case): Promise<Row> {
  const server = c.server()
  const warm = parseWrk(wrk(c, c.warmup ?? WARMUP, (await c.before?.()) ?? {}))
  const env = (await c.before?.(warm)) ?? {}
  // Behind a balancer: the instances' CPU and memory together (not haproxy's, nor PostgreSQL's).
  const pids = (server.procs ?? [server.proc]).map((p) => p.pid)
  const sum = (f: (pid: number) => number) => pids.reduce((total, pid) => total + f(pid), 0)
  const ticks0 = sum(cpuTicks)
  const disk = () => pids.map(diskBytes).reduce((a, b) => ({ read: a.read + b.read, write: a.write + b.write }))
  const disk0 = disk()
  let maxRss = sum(rssMb)
  const sampler = setInterval(() => (maxRss = Math.max(maxRss, sum(rssMb))), 250)
  const out = await new Promise<string>((resolve) => setTimeout(() => resolve(wrk(c, SECONDS, env)), 0))
  clearInterval(sampler)
  maxRss = Math.max(maxRss, sum(rssMb))
  const result = parseWrk(out)
  const cpuUs = ((sum(cpuTicks) - ticks0) * 1_000_000) / CLK_TCK
  const perReqKb = (bytes: number) => bytes / 1024 / result.requests
  const disk1 = disk()
  const row: Row = {
    name: c.name,
    ...result,
    cpuUsPerReq: cpuUs / result.requests,
    rssMb: maxRss,
    diskReadKbPerReq: perReqKb(disk1.read - disk0.read),
    diskWriteKbPerReq: perReqKb(disk1.write - disk0.write),
  }
  if (!Number.isFinite(result.rps) || result.requests === 0) fail(`could not read wrk's output for ${c.name}:\n${out}`)
  const mismatched = Number(/Mismatched answers: (\d+)/.exec(out)?.[1] ?? NaN)
  if (c.expectStatus !== undefined) {
    const expectedNon2xx = c.expectStatus < 300 ? 0 : result.requests
    if (!(mismatched === 0 && result.non2xx === expectedNon2xx && result.socketErrors === 0)) fail(`${c.name}: ${mismatched} answers were not ${c.expectStatus} as expected — the run is invalid\n${out}`)
    // Every answer was the refusal asked for: none is an error in the table.
    row.non2xx = 0
  } else if (result.non2xx > 0 || result.socketErrors > 0)
    fail(`${c.name}: ${result.non2xx} non-2xx answers and ${result.socketErrors} socket errors — the run is invalid\n${out}`)
  // p99 and CPU per request as each case ends: kept even when a later case (the peer, on a busy machine) fails the run.
  console.error(`  ${c.name}: ${Math.round(result.rps)} req/s, p50 ${result.p50ms.toFixed(2)} ms, p99 ${result.p99ms.toFixed(2)} ms, ${row.cpuUsPerReq.toFixed(1)} CPU µs/req`)
  return row
}

// ---------------------------------------------------------------------------------------------
// Preparation through the real endpoints

function cli(server: Pick<Server, 'dir' | 'url' | 'env'>, bin: string, args: string[], stdin?: string): string {
  const r = Bun.spawnSync([bin, ...args], {
    cwd: server.dir,
    env: { PATH: process.env.PATH ?? '', HOME: server.dir, PORT: new URL(server.url).port, ...(server.env?.DATABASE_URL ? { DATABASE_URL: server.env.DATABASE_URL } : {}) },
    stdin: stdin === undefined ? 'ignore' : new TextEncoder().encode(stdin),
  })
  if (r.exitCode !== 0) fail(`latchkey ${args.join(' ')}: ${r.stderr.toString()}`)
  return r.stdout.toString()
}

async function signIn(url: string, email: string, password: string): Promise<string> {
  const page = await fetch(`${url}/login`)
  const csrfCookie = page.headers.getSetCookie()[0]!.split(';')[0]!
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(await page.text())![1]!
  const res = await fetch(`${url}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: csrfCookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email, password, csrf_token: csrf }),
  })
  if (res.status !== 303) fail(`sign-in failed: ${res.status}`)
  return res.headers.getSetCookie().find((c) => c.startsWith('lk_session='))!.split(';')[0]!
}

/** `count` users (`bench-N@example.com`) with a settings token each, one per line of the file returned. */
async function userTokens(server: Server, bin: string, app: { client_id: string; client_secret: string }, count: number, dir: string, prefix: string): Promise<string> {
  const tokens = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const email = `bench-${i}@example.com`
      cli(server, bin, ['user', 'create', '--email', email, '--name', `Bench ${i}`, '--password-stdin'], 'bench password\n')
      const session = await signIn(server.url, email, 'bench password')
      const [code] = await mintCodes(server.url, session, app.client_id, 1, 'settings:read settings:write')
      return exchange(server.url, app.client_id, app.client_secret, code!)
    }),
  )
  const file = join(dir, `${prefix.replace(/[^a-z0-9]/gi, '')}users-${count}.txt`)
  writeFileSync(file, tokens.join('\n') + '\n')
  return file
}

/** `count` access tokens of one signed-in user for one app (profile email), one per line of the file returned. */
async function tokensOfOneUser(server: Server, app: { client_id: string; client_secret: string }, session: string, count: number, dir: string, prefix: string): Promise<string> {
  const codes = await mintCodes(server.url, session, app.client_id, count)
  const tokens: string[] = []
  let next = 0
  const worker = async () => {
    while (next < codes.length) tokens.push(await exchange(server.url, app.client_id, app.client_secret, codes[next++]!))
  }
  await Promise.all(Array.from({ length: 16 }, worker))
  const file = join(dir, `${prefix.replace(/[^a-z0-9]/gi, '')}tokens-${count}.txt`)
  writeFileSync(file, tokens.join('\n') + '\n')
  return file
}

/** Codes minted through GET /oauth/authorize (a skip-consent app, a signed-in browser). */
async function mintCodes(url: string, cookie: string, clientId: string, count: number, scope = 'profile email', resource?: string): Promise<string[]> {
  const forResource = resource === undefined ? '' : `&resource=${encodeURIComponent(resource)}`
  const authorize = `${url}/oauth/authorize?client_id=${clientId}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&scope=${encodeURIComponent(scope)}&nonce=bench${forResource}`
  const codes: string[] = []
  let next = 0
  const worker = async () => {
    while (next < count) {
      next++
      const res = await fetch(authorize, { redirect: 'manual', headers: { cookie } })
      const code = res.status === 303 ? new URL(res.headers.get('location')!).searchParams.get('code') : null
      if (!code) fail(`minting a code failed: ${res.status}`)
      codes.push(code)
    }
  }
  await Promise.all(Array.from({ length: 64 }, worker))
  return codes
}

async function exchange(url: string, clientId: string, secret: string, code: string): Promise<string> {
  const res = await fetch(`${url}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'authorization_code', code, client_id: clientId, client_secret: secret, redirect_uri: REDIRECT_URI }),
  })
  if (res.status !== 200) fail(`token exchange failed: ${res.status} ${await res.text()}`)
  return ((await res.json()) as { access_token: string }).access_token
}

// ---------------------------------------------------------------------------------------------
// Startup and idle memory of the binary

interface Start {
  ms: number
  idleRssMb: number
}

async function startOnce(bin: string, dir: string): Promise<Start> {
  const port = await freePort()
  const started = performance.now()
  const proc = Bun.spawn([bin], { cwd: dir, env: { PATH: '', HOST: '127.0.0.1', PORT: String(port) }, stdout: 'ignore', stderr: 'ignore' })
  children.add(proc)
  await waitHealthy(`http://127.0.0.1:${port}`, proc, '/healthz')
  const ms = performance.now() - started
  await Bun.sleep(1000)
  const idleRssMb = rssMb(proc.pid)
  proc.kill('SIGTERM')
  await proc.exited
  children.delete(proc)
  return { ms, idleRssMb }
}

/**
 * Each run: a first start in an empty folder (creates and migrates), then a restart there, then a
 * CLI command on that database (`client list`: opens, reads a few rows, closes), wall time.
 */
async function startupRuns(bin: string, runs = 3): Promise<{ first: Start[]; restart: Start[]; cliMs: number[] }> {
  const first: Start[] = []
  const restart: Start[] = []
  const cliMs: number[] = []
  for (let i = 0; i < runs; i++) {
    const dir = mkdtempSync(join(tmpdir(), 'bench-startup-'))
    first.push(await startOnce(bin, dir))
    restart.push(await startOnce(bin, dir))
    const started = performance.now()
    const listed = Bun.spawnSync([bin, 'client', 'list'], { cwd: dir, env: { PATH: '' }, stdout: 'ignore', stderr: 'ignore' })
    cliMs.push(performance.now() - started)
    if (listed.exitCode !== 0) fail('latchkey client list failed')
    rmSync(dir, { recursive: true, force: true })
  }
  return { first, restart, cliMs }
}

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

// ---------------------------------------------------------------------------------------------

function ensureTools(): void {
  if (Bun.spawnSync(['sh', '-c', 'command -v wrk']).exitCode !== 0)
    fail('wrk is not installed. Install it with: apt-get install -y wrk   (Debian package "wrk")')
  if (Bun.spawnSync(['sh', '-c', 'command -v node']).exitCode !== 0) fail('node is needed for the peer (oidc-provider)')
  if (!existsSync(join(here, 'peer/node_modules/oidc-provider'))) {
    console.error('bench: installing the peer (oidc-provider) in tests/bench/peer')
    const r = Bun.spawnSync(['npm', 'ci', '--no-fund', '--no-audit'], { cwd: join(here, 'peer'), stdout: 'inherit', stderr: 'inherit' })
    if (r.exitCode !== 0) fail('npm ci in tests/bench/peer failed')
  }
}

function newestSource(): number {
  let newest = 0
  const walk = (dir: string) => {
    for (const name of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, name.name)
      if (name.isDirectory()) walk(p)
      else newest = Math.max(newest, statSync(p).mtimeMs)
    }
  }
  walk(join(root, 'src'))
  walk(join(root, 'drizzle'))
  walk(join(root, 'scripts'))
  return newest
}

function ensureBinary(): string {
  const bin = join(root, 'dist/latchkey')
  if (existsSync(bin) && statSync(bin).mtimeMs > newestSource()) return bin
  console.error('bench: building dist/latchkey')
  const r = Bun.spawnSync(['bun', 'run', 'build'], { cwd: root, stdout: 'ignore', stderr: 'inherit' })
  if (r.exitCode !== 0) fail('bun run build failed')
  return bin
}

// TRUSTED_PROXIES: wrk stands in for the reverse proxy of the forward-auth cases (only a trusted proxy may ask).
const LATCHKEY_ENV = { SETTINGS_MAX_KEYS: '1000000', CODE_TTL: '3600', LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info', LOGIN_ATTEMPTS_PER_MINUTE: '1000', TRUSTED_PROXIES: '127.0.0.1' }
/** Teardown steps of what main() started besides servers. */
const stops: Array<() => void> = []

/**
 * One Latchkey target (an instance, or instances behind a balancer): an app and a user from the
 * CLI, a token through sign-in, authorize and exchange, ten settings; then its cases, named with
 * `prefix`.
 */
const JWT_RESOURCE = 'https://api.bench.example'
const OPAQUE_RESOURCE = 'https://mcp.bench.example'

async function latchkeyCases(prefix: string, latchkey: Server, bin: string, codesDir: string, mintedPerSecond: number[]): Promise<Case[]> {
  // Latchkey: an app and a user from the CLI, a token through sign-in, authorize and exchange.
  const app = JSON.parse(cli(latchkey, bin, ['client', 'create', '--name', 'Bench', '--redirect-uri', REDIRECT_URI, '--skip-consent']))
  const es256App = JSON.parse(cli(latchkey, bin, ['client', 'create', '--name', 'Bench ES256', '--redirect-uri', REDIRECT_URI, '--skip-consent', '--id-token-alg', 'ES256']))
  cli(latchkey, bin, ['user', 'create', '--email', 'bench@example.com', '--name', 'Bench User', '--password-stdin'], 'bench password\n')
  const session = await signIn(latchkey.url, 'bench@example.com', 'bench password')
  const settingsAuthorize = `${latchkey.url}/oauth/authorize?client_id=${app.client_id}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&scope=profile%20email%20settings%3Aread%20settings%3Awrite`
  const first = await fetch(settingsAuthorize, { redirect: 'manual', headers: { cookie: session } })
  const token = await exchange(latchkey.url, app.client_id, app.client_secret, new URL(first.headers.get('location')!).searchParams.get('code')!)
  const bearer = { Authorization: `Bearer ${token}` }
  for (let i = 0; i < 10; i++) {
    const res = await fetch(`${latchkey.url}/api/settings`, {
      method: 'POST',
      headers: { ...bearer, 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: app.client_id, key: `pref.${i}`, value: { theme: 'dark', size: i, tags: ['a', 'b'] } }),
    })
    if (res.status !== 200) fail(`seeding settings failed: ${res.status}`)
  }

  // Resources (RFC 8707): one with RFC 9068 JWT access tokens, one opaque whose token is introspected.
  cli(latchkey, bin, ['resource', 'create', '--uri', JWT_RESOURCE, '--name', 'JWT API', '--scope', 'tools:read=Read your tools', '--token-format', 'jwt'])
  cli(latchkey, bin, ['resource', 'create', '--uri', OPAQUE_RESOURCE, '--name', 'MCP', '--scope', 'tools:read=Read your tools'])
  const [resourceCode] = await mintCodes(latchkey.url, session, app.client_id, 1, 'tools:read', OPAQUE_RESOURCE)
  const resourceToken = await exchange(latchkey.url, app.client_id, app.client_secret, resourceCode!)

  const codesFor = (scope?: string, resource?: string, clientId: string = app.client_id) => async (warmup?: WrkResult) => {
    // The warm-up gets plenty; the run gets twice what the warm-up's pace needs (a warm-up that made keys or compiled code runs slower than the run). A
    // shortfall would show as non-2xx answers and fail the run.
    const pace = warmup ? (warmup.requests - warmup.non2xx) / WARMUP : 0
    const count = warmup ? Math.ceil(pace * SECONDS * 2) + 5_000 : WARMUP * (scope ? 15_000 : 40_000)
    const started = performance.now()
    const codes = await mintCodes(latchkey.url, session, clientId, count, scope, resource)
    mintedPerSecond.push(count / ((performance.now() - started) / 1000))
    const file = join(codesDir, `${prefix.replace(/[^a-z0-9]/gi, '')}${clientId}${scope ? scope.replace(/[^a-z]/g, '') : ''}${warmup ? 'run' : 'warmup'}.txt`)
    writeFileSync(file, codes.join('\n') + '\n')
    return { CODES: file, REDIRECT_URI: encodeURIComponent(REDIRECT_URI) }
  }
  const basicApp = `Basic ${btoa(`${app.client_id}:${app.client_secret}`)}`
  const refreshFor = async (warmup?: WrkResult) => {
    // Refresh tokens are single-use: each comes from a code exchange made beforehand.
    const pace = warmup ? (warmup.requests - warmup.non2xx) / WARMUP : 0
    const count = warmup ? Math.ceil(pace * SECONDS * 1.5) + 2_000 : WARMUP * 20_000
    const codes = await mintCodes(latchkey.url, session, app.client_id, count)
    const tokens: string[] = []
    let next = 0
    const worker = async () => {
      while (next < codes.length) {
        const code = codes[next++]!
        const res = await fetch(`${latchkey.url}/api/oauth/token`, {
          method: 'POST',
          headers: { authorization: basicApp, 'content-type': 'application/x-www-form-urlencoded' },
          body: `grant_type=authorization_code&code=${code}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`,
        })
        if (res.status !== 200) fail(`preparing refresh tokens failed: ${res.status}`)
        tokens.push(((await res.json()) as { refresh_token: string }).refresh_token)
      }
    }
    await Promise.all(Array.from({ length: 32 }, worker))
    const file = join(codesDir, `${prefix.replace(/[^a-z0-9]/gi, '')}refresh-${warmup ? 'run' : 'warmup'}.txt`)
    writeFileSync(file, tokens.map((t) => `grant_type=refresh_token&refresh_token=${t}`).join('\n') + '\n')
    return { BODIES: file }
  }
  const settingsBody = JSON.stringify({ client_id: app.client_id, key: 'same.key', value: { theme: 'dark', size: 14 } })
  let manyUsers: Promise<string> | undefined
  let manyTokens: Promise<string> | undefined
  return [
    // Issue 34 "Speed": the pages a session is read for — the sign-in page (anonymous, its CSRF
    // cookie) and /account with a session cookie (sessions, activity, apps, passkeys, picture).
    ...(prefix === ''
      ? [
          { name: 'GET /login (sign-in page)', server: () => latchkey, path: '/login' },
          { name: 'GET /account (session cookie)', server: () => latchkey, path: '/account', headers: { Cookie: session } },
        ]
      : []),
    { name: `${prefix}GET /api/oauth/userinfo`, server: () => latchkey, path: '/api/oauth/userinfo', headers: bearer },
    // Issue 38's poll, like for like: 1,000 tokens of one user and app, one drawn by wrk's Lua for
    // each request and each answer checked, as the device poll's 1,000 codes of one app are (one
    // token sent as a constant request is the lightest load wrk makes: measured, a Lua request()
    // and a thousand credentials each cost the server's side ~1–2 µs a request).
    ...(prefix.startsWith('pg')
      ? []
      : [
          // One token, a constant request, each answer checked: as one device's poll is sent.
          {
            name: `${prefix}GET /api/oauth/userinfo (one token, each answer checked)`,
            server: () => latchkey,
            path: '/api/oauth/userinfo',
            headers: bearer,
            script: 'checked.lua',
            expectStatus: 200,
            env: { EXPECT_STATUS: '200', EXPECT_BODY: '"email"' },
          },
          {
            name: `${prefix}GET /api/oauth/userinfo (${HOT_DEVICES.toLocaleString('en')} tokens)`,
            server: () => latchkey,
            path: '/api/oauth/userinfo',
            script: 'tokens.lua',
            // Each answer checked (a 200 with the user's email), as the poll's are.
            expectStatus: 200,
            before: async () => ({ TOKENS: await (manyTokens ??= tokensOfOneUser(latchkey, app, session, HOT_DEVICES, codesDir, prefix)), COUNT: String(HOT_DEVICES), EXPECT_STATUS: '200', EXPECT_BODY: '"email"' }),
          },
        ]),
    // Issue 36: a page in any language renders at ≥ 0.95 × the same page in English.
    { name: `${prefix}GET /login: sign-in page (en)`, server: () => latchkey, path: '/login', headers: { 'Accept-Language': 'en-US,en;q=0.9' } },
    { name: `${prefix}GET /login: sign-in page (de)`, server: () => latchkey, path: '/login', headers: { 'Accept-Language': 'de-DE,de;q=0.9' } },
    { name: `${prefix}GET /api/settings (10 keys)`, server: () => latchkey, path: '/api/settings', headers: bearer },
    { name: `${prefix}GET /api/settings/:key`, server: () => latchkey, path: '/api/settings/pref.3', headers: bearer },
    {
      name: `${prefix}POST /api/settings (new keys)`,
      server: () => latchkey,
      path: '/api/settings',
      headers: { ...bearer, 'Content-Type': 'application/json' },
      script: 'settings-distinct.lua',
      env: { CLIENT_ID: app.client_id },
    },
    {
      name: `${prefix}POST /api/settings (same key)`,
      server: () => latchkey,
      path: '/api/settings',
      headers: { ...bearer, 'Content-Type': 'application/json' },
      script: 'post.lua',
      env: { BODY: settingsBody },
    },
    {
      // One user's writes queue on that user's lock (quotas span the user's apps), each behind the
      // one before's commit; 64 users' writes go side by side, as a server's users do.
      name: `${prefix}POST /api/settings (64 users)`,
      server: () => latchkey,
      path: '/api/settings',
      script: 'tokens.lua',
      before: async () => ({ TOKENS: await (manyUsers ??= userTokens(latchkey, bin, app, 64, codesDir, prefix)), COUNT: '64', METHOD: 'POST', CONTENT_TYPE: 'application/json', BODY: settingsBody }),
    },
    {
      name: `${prefix}POST /api/oauth/token (code exchange)`,
      server: () => latchkey,
      path: '/api/oauth/token',
      headers: { Authorization: basicApp, 'Content-Type': 'application/x-www-form-urlencoded' },
      script: 'token.lua',
      before: codesFor(),
    },
    // RS256 signing dominates this one: compare it with the bare signing rate printed below the table.
    ...(prefix === ''
      ? [
          {
            name: 'POST /api/oauth/token (code exchange, openid)',
            server: () => latchkey,
            path: '/api/oauth/token',
            headers: { Authorization: basicApp, 'Content-Type': 'application/x-www-form-urlencoded' },
            script: 'token.lua',
            before: codesFor('openid profile email'),
          },
          {
            // The same for a client created with --id-token-alg ES256 (P-256 signing, ~40 µs a signature).
            name: 'POST /api/oauth/token (code exchange, openid, ES256)',
            server: () => latchkey,
            path: '/api/oauth/token',
            headers: { Authorization: `Basic ${btoa(`${es256App.client_id}:${es256App.client_secret}`)}`, 'Content-Type': 'application/x-www-form-urlencoded' },
            script: 'token.lua',
            before: codesFor('openid profile email', undefined, es256App.client_id),
          },
          {
            name: 'POST /api/oauth/token (code exchange, jwt resource)',
            server: () => latchkey,
            path: '/api/oauth/token',
            headers: { Authorization: basicApp, 'Content-Type': 'application/x-www-form-urlencoded' },
            script: 'token.lua',
            before: codesFor('tools:read', JWT_RESOURCE),
          },
          // The resource server's check: client authentication, then the token through the cache userinfo uses.
          {
            name: 'POST /api/oauth/introspect (resource token)',
            server: () => latchkey,
            path: '/api/oauth/introspect',
            headers: { Authorization: basicApp, 'Content-Type': 'application/x-www-form-urlencoded' },
            script: 'post.lua',
            env: { BODY: `token=${resourceToken}` },
          },
        ]
      : []),
    {
      name: `${prefix}POST /api/oauth/token (refresh)`,
      server: () => latchkey,
      path: '/api/oauth/token',
      headers: { Authorization: basicApp, 'Content-Type': 'application/x-www-form-urlencoded' },
      script: 'bodies.lua',
      before: refreshFor,
    },
    ...(prefix === '' || prefix === 'pg: ' ? forwardAuthCases(prefix, latchkey, bin, session, codesDir) : []),
    ...(prefix === '' ? machineCases(latchkey, bin, codesDir) : []),
  ]
}

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'
const HOT_DEVICES = 1_000
/** Issue 38's like-for-like pairs (a device poll that finds nothing, a userinfo), measured again in alternated rounds. */
const POLL_PAIRS = [
  ['POST /api/oauth/token (device poll, one device polling again)', 'GET /api/oauth/userinfo (one token, each answer checked)'],
  [`POST /api/oauth/token (device poll, ${HOT_DEVICES.toLocaleString('en')} devices polling again)`, `GET /api/oauth/userinfo (${HOT_DEVICES.toLocaleString('en')} tokens)`],
] as const
const PAIR_ROUNDS = Number(process.env.BENCH_PAIR_ROUNDS ?? 4)

/**
 * Machines (issue 38 "Speed"): a client_credentials token with client_secret_basic (against
 * oidc-provider's, same body shape) and with private_key_jwt (an ES256 assertion each, every jti
 * used once), and a device's poll that finds nothing (400 authorization_pending; against
 * userinfo). The pending device codes are inserted straight into the database (as forward-auth's
 * 100,000 sessions are): the endpoint lets a client have 100 pending, a run polls each once.
 */
function machineCases(latchkey: Server, bin: string, codesDir: string): Case[] {
  const job = JSON.parse(cli(latchkey, bin, ['client', 'create', '--name', 'Bench job', '--grant', 'client_credentials', '--allowed-scope', 'tools:read'])) as { client_id: string; client_secret: string }
  const ccBody = `grant_type=client_credentials&scope=tools%3Aread&resource=${encodeURIComponent(OPAQUE_RESOURCE)}`
  const signed = (async () => {
    const { exportJWK, generateKeyPair, SignJWT } = await import('jose')
    const pair = await generateKeyPair('ES256')
    const jwksFile = join(codesDir, 'bench-jwks.json')
    writeFileSync(jwksFile, JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'bench', alg: 'ES256', use: 'sig' }] }))
    const client = JSON.parse(cli(latchkey, bin, ['client', 'create', '--name', 'Bench signed job', '--grant', 'client_credentials', '--allowed-scope', 'tools:read', '--auth-method', 'private_key_jwt', '--jwks-file', jwksFile])) as { client_id: string }
    const issuer = ((await (await fetch(`${latchkey.url}/.well-known/openid-configuration`)).json()) as { issuer: string }).issuer
    const sign = () =>
      new SignJWT({ jti: crypto.randomUUID() })
        .setProtectedHeader({ alg: 'ES256', kid: 'bench' })
        .setIssuer(client.client_id)
        .setSubject(client.client_id)
        .setAudience(issuer)
        .setIssuedAt()
        .setExpirationTime('290s')
        .sign(pair.privateKey)
    return { sign }
  })()
  const assertionsFor = async (warmup?: WrkResult) => {
    const { sign } = await signed
    const pace = warmup ? (warmup.requests - warmup.non2xx) / WARMUP : 0
    // Three times the warm-up's pace: a warm run verifies faster than a cold warm-up, and a thread that runs out answers errors.
    const count = warmup ? Math.ceil(pace * SECONDS * 3) + 5_000 : WARMUP * 8_000
    const lines: string[] = []
    for (let i = 0; i < count; i++)
      lines.push(`${ccBody}&client_assertion_type=${encodeURIComponent('urn:ietf:params:oauth:client-assertion-type:jwt-bearer')}&client_assertion=${await sign()}`)
    const file = join(codesDir, `assertions-${warmup ? 'run' : 'warmup'}.txt`)
    writeFileSync(file, lines.join('\n') + '\n')
    return { BODIES: file }
  }
  let tv: string | undefined
  /**
   * Cold: every poll the first of its code, among as many pending codes as the run needs (each
   * row read from disk pages). Hot (HOT_DEVICES devices, as many pending at once as a busy
   * household's TVs): the same rows polled again and again, so their pages are in memory — as a
   * device's every poll after its first. Their interval is 0 so that a poll sooner than 5 s is
   * still a nothing-found poll, not a slow_down (which writes).
   */
  const pollsFor = (hot: boolean | 'one') => async (warmup?: WrkResult): Promise<Record<string, string>> => {
    tv ??= (JSON.parse(cli(latchkey, bin, ['client', 'create', '--name', 'Bench TV', '--public', '--grant', DEVICE_GRANT])) as { client_id: string }).client_id
    const pace = warmup ? warmup.requests / WARMUP : 0
    // Three times the warm-up's pace, as the assertions': a poll answered faster than the warm-up's ran out of codes ("grant_type=exhausted", counted as mismatched).
    const count = warmup ? Math.ceil(pace * SECONDS * 3) + 5_000 : WARMUP * 20_000
    const { Database } = await import('bun:sqlite')
    const { randomToken, sha256 } = await import('../../src/lib/crypto')
    const db = new Database(join(latchkey.dir, 'data/latchkey.sqlite'))
    db.run('PRAGMA busy_timeout = 5000')
    const insert = db.prepare(
      `INSERT INTO device_codes (device_code_hash, user_code_hash, client_id, scope, resource, created_at, expires_at, interval, status, address) VALUES (?, ?, ?, 'openid', NULL, ?, ?, ${hot ? 0 : 5}, 'pending', '127.0.0.1')`,
    )
    const codes = Array.from({ length: hot === 'one' ? 1 : hot ? HOT_DEVICES : count }, () => randomToken('lk_dc_'))
    const now = Date.now()
    db.transaction(() => {
      for (const code of codes) insert.run(sha256(code), sha256(`bench:${code}`), tv!, now, now + 600_000)
    })()
    db.run('PRAGMA wal_checkpoint(TRUNCATE)')
    db.close()
    const poll = (code: string) => `grant_type=${encodeURIComponent(DEVICE_GRANT)}&device_code=${code}&client_id=${tv}`
    // One device: its poll sent as a constant request, as the one-token userinfo is.
    if (hot === 'one') return { BODY: poll(codes[0]!), EXPECT_STATUS: '400', EXPECT_BODY: '"authorization_pending"' }
    const file = join(codesDir, `polls-${hot ? 'hot-' : ''}${warmup ? 'run' : 'warmup'}.txt`)
    const polled = hot ? Array.from({ length: count }, (_, i) => codes[i % codes.length]!) : codes
    writeFileSync(file, polled.map(poll).join('\n') + '\n')
    return { BODIES: file, EXPECT_STATUS: '400', EXPECT_BODY: '"authorization_pending"' }
  }
  const form = { 'Content-Type': 'application/x-www-form-urlencoded' }
  return [
    {
      name: 'POST /api/oauth/token (client credentials, client_secret_basic)',
      server: () => latchkey,
      path: '/api/oauth/token',
      headers: { ...form, Authorization: `Basic ${btoa(`${job.client_id}:${job.client_secret}`)}` },
      script: 'post.lua',
      env: { BODY: ccBody },
    },
    { name: 'POST /api/oauth/token (client credentials, private_key_jwt)', server: () => latchkey, path: '/api/oauth/token', headers: form, script: 'bodies.lua', before: assertionsFor },
    // The held codes first: the cold case leaves hundreds of thousands of pending codes behind (a
    // real server holds at most 100 per app), and the held case measured after it paid for that
    // heap (27.0 against 23.5 CPU µs/req alone, one run each).
    { name: 'POST /api/oauth/token (device poll, one device polling again)', server: () => latchkey, path: '/api/oauth/token', headers: form, script: 'post-refused.lua', expectStatus: 400, before: pollsFor('one') },
    { name: `POST /api/oauth/token (device poll, ${HOT_DEVICES.toLocaleString('en')} devices polling again)`, server: () => latchkey, path: '/api/oauth/token', headers: form, script: 'polls.lua', expectStatus: 400, before: pollsFor(true) },
    { name: 'POST /api/oauth/token (device poll, authorization_pending)', server: () => latchkey, path: '/api/oauth/token', headers: form, script: 'polls.lua', expectStatus: 400, before: pollsFor(false) },
  ]
}

const SITE_HOST = 'app.bench.example'
const SITE_SESSIONS = 100_000

/**
 * Forward-auth (issue 35 "Speed"): the check a proxy makes before every request to a protected
 * app, with a valid site cookie — one got through the real sign-in (/authz/start, the site's
 * /.latchkey/callback), and on SQLite the same among 100,000 site sessions (each of its own
 * sign-in session, inserted in one transaction with the same hash scheme), drawn at random.
 */
function forwardAuthCases(prefix: string, latchkey: Server, bin: string, session: string, codesDir: string): Case[] {
  const forwarded = { 'X-Forwarded-Method': 'GET', 'X-Forwarded-Proto': 'http', 'X-Forwarded-Host': SITE_HOST, 'X-Forwarded-Uri': '/photos/1?size=2', 'X-Forwarded-For': '203.0.113.7' }
  let cookie: Promise<string> | undefined
  const siteCookie = () =>
    (cookie ??= (async () => {
      cli(latchkey, bin, ['site', 'create', '--host', SITE_HOST, '--name', 'Bench app'])
      // Two rules a site commonly has, both tried (and missed) by every check: their paths' matching is in the case's cost.
      cli(latchkey, bin, ['site', 'rule', 'add', SITE_HOST, '--path', '^/public/', '--policy', 'bypass'])
      cli(latchkey, bin, ['site', 'rule', 'add', SITE_HOST, '--path', '\\.(css|js|png|svg)$', '--path', '^/favicon', '--policy', 'bypass'])
      const rd = `http://${SITE_HOST}/`
      // The browser's state at the site (what /.latchkey/start would set), named to /authz/start and shown at the callback.
      const state = 'bench-state-'.padEnd(43, 'x')
      const start = await fetch(`${latchkey.url}/authz/start?rd=${encodeURIComponent(rd)}&state=${state}`, { redirect: 'manual', headers: { cookie: session } })
      const callback = start.headers.get('location')
      if (start.status !== 302 || !callback?.startsWith(`${rd}.latchkey/callback?`)) fail(`/authz/start answered ${start.status} ${callback}`)
      const made = await fetch(latchkey.url + callback.slice(rd.length - 1), { redirect: 'manual', headers: { 'x-forwarded-host': SITE_HOST, cookie: `lk_state=${state}` } })
      const value = made.headers.getSetCookie().find((c) => c.startsWith('lk_site='))?.split(';')[0]?.slice('lk_site='.length)
      if (made.status !== 302 || !value) fail(`/.latchkey/callback answered ${made.status}`)
      return value
    })())
  let many: Promise<string> | undefined
  const manyCookies = () =>
    (many ??= (async () => {
      const { Database } = await import('bun:sqlite')
      const { randomToken, sha256 } = await import('../../src/lib/crypto')
      const db = new Database(join(latchkey.dir, 'data/latchkey.sqlite'))
      db.run('PRAGMA busy_timeout = 5000')
      // A site session's hash is of its scheme and cookie value (src/authz/site-sessions.ts siteSessionHash).
      const model = sha256(`http ${await siteCookie()}`)
      const copySession = db.prepare(
        `INSERT INTO sessions (id_hash, user_id, expires_at, auth_time, amr, pending, sid, created_at, last_active_at)
          SELECT ?, s.user_id, s.expires_at, s.auth_time, s.amr, s.pending, ?, s.created_at, ? FROM sessions s JOIN site_sessions ss ON ss.session_hash = s.id_hash WHERE ss.id_hash = ?`,
      )
      const copySiteSession = db.prepare('INSERT INTO site_sessions (id_hash, session_hash, host, expires_at) SELECT ?, ?, host, expires_at FROM site_sessions WHERE id_hash = ?')
      const tokens = Array.from({ length: SITE_SESSIONS }, () => randomToken())
      db.transaction(() => {
        for (const token of tokens) {
          const sessionHash = sha256(randomToken())
          // Sessions in use were last noted active within the last minute (SessionActivity writes each at most once a minute), spread evenly.
          copySession.run(sessionHash, randomToken(), Date.now() - Math.floor(Math.random() * 60_000), model)
          copySiteSession.run(sha256(`http ${token}`), sessionHash, model)
        }
      })()
      // Into the database file now: the run measures the checks, not the checkpointer copying 100,000 rows out of the WAL.
      db.run('PRAGMA wal_checkpoint(TRUNCATE)')
      db.close()
      const file = join(codesDir, 'site-cookies.txt')
      writeFileSync(file, tokens.join('\n') + '\n')
      return file
    })())
  const oneCookie = async () => {
    const file = join(codesDir, `${prefix.replace(/[^a-z0-9]/gi, '')}site-cookie.txt`)
    writeFileSync(file, (await siteCookie()) + '\n')
    return { COOKIES: file, COOKIE_NAME: 'lk_site', COUNT: '1' }
  }
  const check = { server: () => latchkey, path: '/api/authz/forward-auth', headers: forwarded, script: 'cookies.lua' }
  return [
    { name: `${prefix}GET /api/authz/forward-auth (site cookie)`, ...check, before: oneCookie },
    ...(prefix === ''
      ? [
          {
            name: 'GET /api/authz/forward-auth (100,000 site sessions)',
            ...check,
            // The steady state of 100,000 sessions in use: the warm-up asks once for each (in
            // order, then at random), as a server up for a while has seen them; the run draws at
            // random. A cold miss is one indexed read (~6,000 a second here), so 2 s would see a
            // sixth of them and measure the cold start instead.
            warmup: Number(process.env.BENCH_SITE_SESSIONS_WARMUP ?? 25),
            before: async (warmup?: WrkResult) => ({ COOKIES: await manyCookies(), COOKIE_NAME: 'lk_site', COUNT: String(SITE_SESSIONS), ...(warmup ? {} : { ORDER: 'each-then-random' }) }),
          },
        ]
      : []),
  ]
}

/** A throwaway PostgreSQL cluster from pg_virtualenv (Debian's postgresql), alive until stop(). */
async function startPgCluster(): Promise<PgCluster> {
  if (!Bun.which('pg_virtualenv')) fail('pg_virtualenv is not installed (apt-get install -y postgresql), or set BENCH_POSTGRES=0')
  const url = 'postgres://${PGUSER}:${PGPASSWORD}@${PGHOST}:${PGPORT:-5432}/${PGDATABASE:-postgres}'
  // The cluster lives while its command reads standard input; closing it ends the command, and
  // pg_virtualenv then stops and drops the cluster.
  // Its output goes to a file, not a pipe: writing its last lines ("Dropping cluster") into a pipe
  // nobody reads any more would kill it before it dropped the cluster.
  const logDir = mkdtempSync(join(tmpdir(), 'bench-pg-'))
  madeDirs.add(logDir)
  const log = join(logDir, 'pg_virtualenv.log')
  const proc = Bun.spawn(['pg_virtualenv', '-t', '-o', 'max_connections=200', 'sh', '-c', `echo "cluster-url ${url}"; exec cat >/dev/null`], {
    stdin: 'pipe',
    stdout: Bun.file(log),
    stderr: 'ignore',
  })
  // Not in `children`: killing pg_virtualenv would leave its cluster running. However this run
  // ends, its standard input closes with it, and pg_virtualenv drops the cluster.
  // pg_virtualenv prints its own progress too: the URL is the marked line.
  let text = ''
  const started = performance.now()
  while (!/^cluster-url (\S+)$/m.test(text)) {
    if (proc.exitCode !== null || performance.now() - started > 60_000) fail('pg_virtualenv ended or hung before its cluster was up')
    await Bun.sleep(50)
    text = existsSync(log) ? readFileSync(log, 'utf8') : ''
  }
  const url0 = /^cluster-url (\S+)$/m.exec(text)![1]!
  return {
    url: url0,
    async database(name: string) {
      const admin = connect(url0, { max: 1 })
      await admin.unsafe(`CREATE DATABASE "${name}"`)
      await admin.close()
      const u = new URL(url0)
      u.pathname = `/${name}`
      return u.href
    },
    stop() {
      proc.stdin.end()
    },
  }
}

/**
 * RS256 signatures per second with the key imported once, eight in flight (WebCrypto signs off
 * the event loop, so this uses every core): the ceiling of an openid exchange.
 */
async function bareSigningRate(seconds = 3): Promise<number> {
  const pair = (await crypto.subtle.generateKey(
    { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) },
    false,
    ['sign'],
  )) as CryptoKeyPair
  const data = new TextEncoder().encode('x'.repeat(400))
  const until = performance.now() + seconds * 1000
  let n = 0
  const worker = async () => {
    while (performance.now() < until) {
      await crypto.subtle.sign('RSASSA-PKCS1-v1_5', pair.privateKey, data)
      n++
    }
  }
  await Promise.all(Array.from({ length: 8 }, worker))
  return n / seconds
}

async function main() {
  ensureTools()
  const bin = ensureBinary()
  const binarySizeMb = statSync(bin).size / 1024 / 1024
  console.error(`bench: ${THREADS} threads, ${CONNECTIONS} connections, ${WARMUP}s warm-up + ${SECONDS}s per case`)

  const startup = await startupRuns(bin)
  const signingRate = await bareSigningRate()

  const bare = await spawnServer('bare', ['bun', join(here, 'bare.ts')], {}, '/')
  // With its metrics listener on and its access log (LOG_LEVEL=info) going to a file, as a
  // deployment runs: their cost is in every case. A second instance with LOG_LEVEL=warn gives
  // the log's cost on the read and write paths, in the same run.
  const latchkey = await spawnServer('latchkey', [bin], { ...LATCHKEY_ENV, METRICS_ADDRESS: `127.0.0.1:${await freePort()}` }, '/healthz', undefined, 'latchkey.log')
  const quiet = await spawnServer('latchkey-quiet', [bin], { ...LATCHKEY_ENV, LOG_LEVEL: 'warn', METRICS_ADDRESS: `127.0.0.1:${await freePort()}` }, '/healthz', undefined, 'latchkey.log')
  const peer = await spawnServer('peer', ['node', join(here, 'peer/server.mjs')], { NODE_ENV: 'production' }, '/.well-known/openid-configuration')

  // The peer: a client_credentials token to introspect.
  const peerAuth = `Basic ${btoa('bench:bench-secret-that-is-long-enough-0123456789')}`
  const peerToken = (await (
    await fetch(`${peer.url}/token`, {
      method: 'POST',
      headers: { authorization: peerAuth, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&scope=api',
    })
  ).json()) as { access_token: string }

  // BENCH_ONLY: cases whose name contains one of its |-separated parts (the ceiling and the peer always run).
  const only = process.env.BENCH_ONLY?.split('|')
  const codesDir = mkdtempSync(join(tmpdir(), 'bench-codes-'))
  madeDirs.add(codesDir)
  const mintedPerSecond: number[] = []
  const sqliteCases = await latchkeyCases('', latchkey, bin, codesDir, mintedPerSecond)
  const LOGGED = /userinfo$|settings \(10 keys\)|POST \/api\/settings \(same key\)/
  const quietCases = (await latchkeyCases('LOG_LEVEL=warn: ', quiet, bin, codesDir, [])).filter((c) => LOGGED.test(c.name))
  // Passkey sign-ins need ISSUER's origin (localhost by default): not behind the balancer's IP address.
  const passkeyTargets: Array<{ prefix: string; server: Server }> = [{ prefix: '', server: latchkey }]

  // PostgreSQL on this machine (a throwaway cluster), one instance, then two behind haproxy.
  const pgCases: Case[] = []
  const extra: Server[] = []
  let pg: PgCluster | undefined
  if (process.env.BENCH_POSTGRES !== '0') {
    pg = await startPgCluster()
    const single = await spawnServer('latchkey-pg', [bin], { ...LATCHKEY_ENV, DATABASE_URL: await pg.database('bench_one'), DATABASE_POOL_SIZE: '16' }, '/healthz')
    extra.push(single)
    pgCases.push(...(await latchkeyCases('pg: ', single, bin, codesDir, mintedPerSecond)))
    passkeyTargets.push({ prefix: 'pg: ', server: single })
    const lbPort = await freePort()
    const pgEnv = { ...LATCHKEY_ENV, DATABASE_URL: await pg.database('bench_two'), DATABASE_POOL_SIZE: '16', ISSUER: `http://127.0.0.1:${lbPort}` }
    const pair = [await spawnServer('latchkey-pg-a', [bin], pgEnv, '/healthz'), await spawnServer('latchkey-pg-b', [bin], pgEnv, '/healthz')]
    extra.push(...pair)
    const balancer = await startHaproxy(lbPort, pair.map((p) => new URL(p.url).host))
    children.add(balancer.proc)
    const behind: Server = { name: 'haproxy', url: balancer.url, proc: balancer.proc, dir: pair[0]!.dir, procs: pair.map((p) => p.proc), env: pgEnv }
    pgCases.push(...(await latchkeyCases('pg ×2 haproxy: ', behind, bin, codesDir, mintedPerSecond)))
    stops.push(balancer.stop)
  }

  const cases: Case[] = [
    { name: 'bare Bun.serve (ceiling)', server: () => bare, path: '/' },
    {
      name: 'bare Bun.serve: a POSTed form read, a constant 400 (a poll\'s floor)',
      server: () => bare,
      path: '/',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      script: 'post-refused.lua',
      expectStatus: 400,
      env: { EXPECT_STATUS: '400', EXPECT_BODY: '"authorization_pending"', BODY: `grant_type=${encodeURIComponent(DEVICE_GRANT)}&device_code=lk_dc_${'x'.repeat(43)}&client_id=${'c'.repeat(24)}` },
    },
    // Each logged case followed by its LOG_LEVEL=warn twin: the pair meets the machine in the same state.
    ...sqliteCases.flatMap((c) => [c, ...quietCases.filter((q) => q.name === `LOG_LEVEL=warn: ${c.name}`)]),
    ...pgCases,
    {
      name: 'peer: client_credentials',
      server: () => peer,
      path: '/token',
      headers: { Authorization: peerAuth, 'Content-Type': 'application/x-www-form-urlencoded' },
      script: 'post.lua',
      env: { BODY: 'grant_type=client_credentials&scope=api' },
    },
    {
      name: 'peer: introspection',
      server: () => peer,
      path: '/token/introspection',
      headers: { Authorization: peerAuth, 'Content-Type': 'application/x-www-form-urlencoded' },
      script: 'post.lua',
      env: { BODY: `token=${peerToken.access_token}` },
    },
  ]

  const picked = (name: string) => !only || only.some((part) => name.includes(part))
  const rows: Row[] = []
  for (const c of cases) if (picked(c.name) || c.name === cases[0]!.name || c.name.startsWith('peer')) rows.push(await measure(c))
  // Issue 38: a poll that finds nothing against a userinfo, like for like, measured again in
  // alternated rounds (A B, then B A): one run of each differs by up to ±10 % on these shared
  // machines, more than what is compared. The medians are printed below the table.
  const pairs = POLL_PAIRS.map(([poll, userinfo]) => [cases.find((c) => c.name === poll), cases.find((c) => c.name === userinfo)] as const).filter(
    (pair): pair is readonly [Case, Case] => pair[0] !== undefined && pair[1] !== undefined && picked(pair[0].name) && picked(pair[1].name),
  )
  const rounds: Array<{ poll: string; userinfo: string; pollUs: number[]; userinfoUs: number[] }> = []
  for (const [poll, userinfo] of pairs) {
    const round = { poll: poll.name, userinfo: userinfo.name, pollUs: [] as number[], userinfoUs: [] as number[] }
    for (let i = 0; i < PAIR_ROUNDS; i++)
      for (const c of i % 2 === 0 ? [poll, userinfo] : [userinfo, poll]) (c === poll ? round.pollUs : round.userinfoUs).push((await measure(c)).cpuUsPerReq)
    rounds.push(round)
  }
  for (const { prefix, server } of passkeyTargets) {
    const name = `${prefix}POST /login/passkey (options + assertion)`
    if (!picked(name)) continue
    const session = await signIn(server.url, 'bench@example.com', 'bench password')
    const timing = { warmup: WARMUP, seconds: SECONDS, cpuTicks, rssMb, clkTck: CLK_TCK }
    rows.splice(rows.length - 2, 0, await measurePasskeySignIn(name, server, `http://localhost:${new URL(server.url).port}`, session, timing))
  }

  // Settings streams (issue 22): fan-out, idle streams' memory and lag, the POST rate with streams open.
  const streams = picked('stream')
    ? await measureStreams(latchkey, JSON.parse(cli(latchkey, bin, ['client', 'create', '--name', 'Streams', '--redirect-uri', REDIRECT_URI])).client_id, rssMb, measure)
    : undefined

  for (const stop of stops) stop()
  for (const s of [bare, latchkey, quiet, peer, ...extra]) await stopServer(s)
  pg?.stop()
  rmSync(codesDir, { recursive: true, force: true })

  const ceiling = rows[0]!.rps
  const peerCc = rows.find((r) => r.name === 'peer: client_credentials')!.rps
  const peerIntrospect = rows.find((r) => r.name === 'peer: introspection')!.rps
  const report = {
    date: new Date().toISOString(),
    machine: { cores: navigator.hardwareConcurrency, bun: Bun.version, node: Bun.spawnSync(['node', '--version']).stdout.toString().trim() },
    settings: { seconds: SECONDS, warmup: WARMUP, threads: THREADS, connections: CONNECTIONS, logLevel: process.env.BENCH_LOG_LEVEL ?? 'info' },
    binary: {
      sizeMb: binarySizeMb,
      firstStartMs: startup.first.map((s) => s.ms),
      firstStartIdleRssMb: startup.first.map((s) => s.idleRssMb),
      restartMs: startup.restart.map((s) => s.ms),
      restartIdleRssMb: startup.restart.map((s) => s.idleRssMb),
      cliClientListMs: startup.cliMs,
    },
    codesMintedPerSecond: mintedPerSecond,
    pollPairRounds: rounds,
    streams,
    bareRs256SignaturesPerSecond: signingRate,
    cases: rows.map((r) => ({
      ...r,
      ofBare: r.rps / ceiling,
      // The peer's nearest equivalent: issuing a token for the token endpoint, checking one otherwise.
      ofPeer: r.name.includes('POST /api/oauth/token') ? r.rps / peerCc : r.rps / peerIntrospect,
    })),
  }

  const resultsDir = join(here, 'results')
  const file = join(resultsDir, `${report.date.replace(/[:.]/g, '-')}.json`)
  writeFileSync(file, JSON.stringify(report, null, 2) + '\n')

  const pad = (s: string, n: number) => s.padEnd(n)
  const num = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d })
  const lines = [
    `| case | req/s | p50 ms | p99 ms | errors | CPU µs/req | RSS MB | × bare | × peer |`,
    `| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |`,
    ...report.cases.map(
      (r) =>
        `| ${pad(r.name, 52)} | ${num(r.rps)} | ${num(r.p50ms, 2)} | ${num(r.p99ms, 2)} | ${r.non2xx + r.socketErrors} | ${num(r.cpuUsPerReq, 1)} | ${num(r.rssMb, 1)} | ${num(r.ofBare * 100)} % | ${num(r.ofPeer, 2)} |`,
    ),
    '',
    `binary: ${num(binarySizeMb, 1)} MB`,
    ...(['first', 'restart'] as const).map((kind) => {
      const runs = startup[kind]
      const label = kind === 'first' ? 'first start (empty folder)' : 'restart (existing database)'
      return `${label}: spawn → first /healthz 200 ${runs.map((s) => num(s.ms, 1)).join(', ')} ms (median ${num(median(runs.map((s) => s.ms)), 1)}); idle RSS ${runs.map((s) => num(s.idleRssMb, 1)).join(', ')} MB (median ${num(median(runs.map((s) => s.idleRssMb)), 1)})`
    }),
    ...report.cases
      .filter((r) => r.name.startsWith('LOG_LEVEL=warn: '))
      .flatMap((quietRow) => {
        const logged = report.cases.find((r) => r.name === quietRow.name.slice('LOG_LEVEL=warn: '.length))
        return logged ? [`access log (LOG_LEVEL=info to a file) vs LOG_LEVEL=warn: ${quietRow.name.slice(16)} ${num((logged.rps / quietRow.rps) * 100)} % of the throughput`] : []
      }),
    ...(() => {
      // Issue 38: a poll that finds nothing against a userinfo: like for like (a thousand credentials
      // of one app, drawn by wrk's Lua), against the one-token userinfo, and above each one's floor —
      // a poll is a POSTed form (RFC 8628 §3.4), whose reading Bun charges before any code runs.
      const find = (name: string) => report.cases.find((r) => r.name === name)
      const poll = find(`POST /api/oauth/token (device poll, ${HOT_DEVICES.toLocaleString('en')} devices polling again)`)
      const onePoll = find('POST /api/oauth/token (device poll, one device polling again)')
      const userinfo = find('GET /api/oauth/userinfo')
      const checkedUserinfo = find('GET /api/oauth/userinfo (one token, each answer checked)')
      const manyUserinfo = find(`GET /api/oauth/userinfo (${HOT_DEVICES.toLocaleString('en')} tokens)`)
      const getFloor = find('bare Bun.serve (ceiling)')
      const postFloor = find("bare Bun.serve: a POSTed form read, a constant 400 (a poll's floor)")
      if (!poll) return []
      const cpu = (r: typeof poll) => num(r.cpuUsPerReq, 1)
      const ratio = (a: number, b: number) => `${num(a / b, 2)} ×`
      const above = (r: typeof poll, floor: typeof poll) => r.cpuUsPerReq - floor.cpuUsPerReq
      return [
        ...(manyUserinfo ? [`device poll (${HOT_DEVICES.toLocaleString('en')} held codes) vs userinfo (${HOT_DEVICES.toLocaleString('en')} tokens), each drawn by wrk's Lua, each answer checked, CPU µs/req: ${cpu(poll)} vs ${cpu(manyUserinfo)} (${ratio(poll.cpuUsPerReq, manyUserinfo.cpuUsPerReq)})`] : []),
        ...(checkedUserinfo && onePoll ? [`device poll (one device) vs userinfo (one token), each a constant request, each answer checked, CPU µs/req: ${cpu(onePoll)} vs ${cpu(checkedUserinfo)} (${ratio(onePoll.cpuUsPerReq, checkedUserinfo.cpuUsPerReq)})`] : []),
        ...(userinfo ? [`device poll (${HOT_DEVICES.toLocaleString('en')} held codes) vs userinfo (one token, a constant request), CPU µs/req: ${cpu(poll)} vs ${cpu(userinfo)} (${ratio(poll.cpuUsPerReq, userinfo.cpuUsPerReq)})`] : []),
        ...(userinfo && getFloor && postFloor
          ? [`  above their floors (a POSTed form read; a bare GET): ${num(above(poll, postFloor), 1)} vs ${num(above(userinfo, getFloor), 1)} (${ratio(above(poll, postFloor), above(userinfo, getFloor))})`]
          : []),
      ]
    })(),
    ...rounds.map(
      (r) =>
        `alternated, ${PAIR_ROUNDS} rounds: ${r.poll} ${r.pollUs.map((us) => num(us, 1)).join(', ')} (median ${num(median(r.pollUs), 1)}) vs ${r.userinfo} ${r.userinfoUs.map((us) => num(us, 1)).join(', ')} (median ${num(median(r.userinfoUs), 1)}) CPU µs/req: ${num(median(r.pollUs) / median(r.userinfoUs), 2)} ×`,
    ),
    `CLI: client list on that database, wall ${startup.cliMs.map((ms) => num(ms, 1)).join(', ')} ms (median ${num(median(startup.cliMs), 1)})`,
    ...(() => {
      const plain = report.cases.find((r) => r.name === 'POST /api/oauth/token (code exchange)')
      const es = report.cases.find((r) => r.name === 'POST /api/oauth/token (code exchange, openid, ES256)')
      return plain && es ? [`the openid exchange for an ES256 client: ${num((es.rps / plain.rps) * 100)} % of the plain exchange's throughput`] : []
    })(),
    `bare RS256 signing (key imported once, 8 in flight): ${num(signingRate)} signatures/s; the openid exchange reached ${num(((report.cases.find((r) => r.name.includes('openid'))?.rps ?? 0) / signingRate) * 100)} % of it.`,
    `× peer: the token endpoint against oidc-provider's client_credentials (${num(peerCc)} req/s), the other cases against its introspection (${num(peerIntrospect)} req/s).`,
    ...(streams
      ? [
          `settings streams: one write per user to 1,000 open streams (50 users × 20): sent → received p50 ${num(streams.fanOut.p50ms, 2)} ms, p99 ${num(streams.fanOut.p99ms, 2)} ms over ${num(streams.fanOut.deliveries)} deliveries`,
          `settings streams: 10,000 idle: RSS ${num(streams.idle.rssBeforeMb, 1)} → ${num(streams.idle.rssWithMb, 1)} MB (${num(streams.idle.kbPerStream, 1)} KB per stream); /healthz p50/p99 ${num(streams.idle.healthz.withoutP50, 3)}/${num(streams.idle.healthz.withoutP99, 3)} ms without, ${num(streams.idle.healthz.withP50, 3)}/${num(streams.idle.healthz.withP99, 3)} ms with them`,
          `settings streams: POST /api/settings (same key) ${num(streams.post.without.rps)} req/s without streams, ${num(streams.post.with.rps)} req/s with 1,000 open (the writer's 20 among them): ${num((streams.post.with.rps / streams.post.without.rps) * 100)} %`,
        ]
      : []),
    `results: ${file.slice(root.length + 1)}`,
  ]
  console.log(lines.join('\n'))
}

if (process.argv.includes('--scale')) {
  const { scale } = await import('./scale')
  const harness: Harness = { ensureBinary, fail, spawnServer, stopServer, cli, measure, signIn, startPgCluster }
  await scale(harness)
} else await main()
