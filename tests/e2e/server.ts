import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Subprocess } from 'bun'
import { connect } from '../../src/db/pg/connect'
import { Database } from 'bun:sqlite'
import { freshPgDatabase } from '../pg-store'
import { testEngine } from '../store'

const root = join(import.meta.dir, '../..')
let built: Promise<string> | undefined

/**
 * Builds `dist/latchkey` once per test run and copies it into a folder of its own, so every
 * end-to-end test drives the compiled binary with no source or node_modules beside it.
 */
export function binary(): Promise<string> {
  built ??= (async () => {
    const proc = Bun.spawn(['bun', 'run', 'build'], { cwd: root, stdout: 'pipe', stderr: 'pipe' })
    if ((await proc.exited) !== 0) throw new Error(`bun run build failed: ${await new Response(proc.stderr).text()}`)
    const dir = mkdtempSync(join(tmpdir(), 'latchkey-bin-'))
    // Removed when the run ends (tests/preload.ts): a copy per run would fill a developer's disk.
    ;((globalThis as { latchkeyRunFolders?: string[] }).latchkeyRunFolders ??= []).push(dir)
    const path = join(dir, 'latchkey')
    copyFileSync(join(root, 'dist/latchkey'), path)
    return path
  })()
  return built
}

/**
 * Ports the tests choose come from below Linux's ephemeral range (32768-60999): the kernel hands
 * those to every outgoing connection and every listener on port 0 (the test mail servers), so a
 * port probed free there may be taken again before the binary listens on it — what once failed a
 * CI run. Nothing gives these out but freePort.
 */
const CHOSEN_PORTS = { from: 20_000, to: 32_767 }
const handedOut = new Set<number>()
let nextPort = CHOSEN_PORTS.from + Math.floor(Math.random() * (CHOSEN_PORTS.to - CHOSEN_PORTS.from))

/**
 * A loopback port nothing listens on now, never one this process was given before. Another
 * program may still take it before it is used: startBinary starts again on another one then.
 */
export async function freePort(): Promise<number> {
  for (let tried = 0; tried <= CHOSEN_PORTS.to - CHOSEN_PORTS.from; tried++) {
    const port = nextPort
    nextPort = port === CHOSEN_PORTS.to ? CHOSEN_PORTS.from : port + 1
    if (handedOut.has(port)) continue
    try {
      Bun.listen({ hostname: '127.0.0.1', port, socket: { data() {} } }).stop(true)
    } catch {
      continue // something listens there
    }
    handedOut.add(port)
    return port
  }
  throw new Error(`no free loopback port left in ${CHOSEN_PORTS.from}-${CHOSEN_PORTS.to}`)
}

export interface RunningBinary {
  /** ISSUER: what browsers and clients use. */
  url: string
  /** The same server by its loopback address (fetch from tests; `localhost` may resolve to ::1 first). */
  direct: string
  /** GET /metrics on METRICS_ADDRESS, with `{ metrics: true }`. */
  metricsUrl?: string
  dir: string
  /** The SQLite file (meaningless on PostgreSQL). */
  dbPath: string
  /** What DATABASE_URL the binary runs with: pass it again to restart on the same data. */
  databaseUrl: string
  proc: Subprocess<'ignore', 'pipe', 'pipe'>
  output(): string
  /** Runs SQL on the binary's database (`?` placeholders), as an operator with psql or sqlite3 would. */
  query(sql: string, ...params: unknown[]): Promise<Array<Record<string, unknown>>>
  /** Runs the binary with these arguments, in its folder and environment (`env` added to it). */
  cli(args: string[], stdin?: string, env?: Record<string, string>): { code: number; out: string; err: string }
  stop(signal?: NodeJS.Signals): Promise<number>
  cleanup(): void
}

/**
 * Starts the binary in an empty folder on a free loopback port and waits for /healthz. In the
 * suite's PostgreSQL pass it runs on a fresh database of its own unless `env` names one.
 */
export async function startBinary(env: Record<string, string> = {}, dir?: string, opts: LaunchOptions = {}): Promise<RunningBinary> {
  if (testEngine === 'postgres' && env.DATABASE_URL === undefined) env = { ...env, DATABASE_URL: await freshPgDatabase() }
  const bin = await binary()
  const cwd = dir ?? mkdtempSync(join(tmpdir(), 'latchkey-run-'))
  mkdirSync(cwd, { recursive: true })
  // The ports were free when chosen, but another test's process may take one first: then the
  // binary says so and exits, and it is started again on others.
  let launched: Awaited<ReturnType<typeof launch>>
  for (let attempt = 1; ; attempt++) {
    try {
      launched = await launch(bin, cwd, env, opts)
      break
    } catch (error) {
      if (attempt === 3 || !(error instanceof PortTaken)) throw error
    }
  }
  const { direct, url, fullEnv, proc, output, metricsUrl } = launched
  const dbPath = resolve(cwd, env.DATABASE_URL ?? 'data/latchkey.sqlite') // absolute when restarting on `databaseUrl`
  return {
    url,
    direct,
    metricsUrl,
    dir: cwd,
    dbPath,
    databaseUrl: env.DATABASE_URL ?? dbPath,
    proc,
    output,
    async query(sql, ...params) {
      const databaseUrl = env.DATABASE_URL ?? dbPath
      if (/^postgres/.test(databaseUrl)) {
        const client = connect(databaseUrl, { max: 1 })
        try {
          let n = 0
          return (await client.unsafe(sql.replace(/\?/g, () => `$${++n}`), params as [])) as Array<Record<string, unknown>>
        } finally {
          await client.close()
        }
      }
      const db = new Database(dbPath, { readonly: true })
      try {
        return db.query(sql).all(...(params as [])) as Array<Record<string, unknown>>
      } finally {
        db.close()
      }
    },
    cli(args, stdin, extra) {
      const r = Bun.spawnSync([bin, ...args], {
        cwd,
        env: { ...fullEnv, ...extra },
        stdin: stdin === undefined ? 'ignore' : new TextEncoder().encode(stdin),
      })
      return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() }
    },
    async stop(signal = 'SIGTERM') {
      if (proc.exitCode === null) proc.kill(signal)
      return proc.exited
    },
    cleanup() {
      if (proc.exitCode === null) proc.kill('SIGKILL')
      rmSync(cwd, { recursive: true, force: true })
    },
  }
}

class PortTaken extends Error {}

interface LaunchOptions {
  /** ISSUER=http://localhost:PORT: WebAuthn needs a domain (Chromium refuses an IP origin). */
  localhost?: boolean
  /** Serve /metrics on a METRICS_ADDRESS port of its own (RunningBinary.metricsUrl). */
  metrics?: boolean
}

/** Starts `latchkey serve` on ports of its own and waits until it, not another process, answers. */
async function launch(bin: string, cwd: string, env: Record<string, string>, opts: LaunchOptions) {
  const port = await freePort()
  const direct = `http://127.0.0.1:${port}`
  const url = opts.localhost ? `http://localhost:${port}` : direct
  const metricsPort = opts.metrics ? await freePort() : undefined
  const metrics = metricsPort === undefined ? {} : { METRICS_ADDRESS: `127.0.0.1:${metricsPort}` }
  const fullEnv = { PATH: process.env.PATH ?? '', HOME: cwd, HOST: '127.0.0.1', PORT: String(port), ISSUER: url, ...metrics, ...env }
  const proc = Bun.spawn([bin, 'serve'], { cwd, env: fullEnv, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  let out = ''
  const decoder = new TextDecoder()
  const read = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) out += decoder.decode(chunk)
  }
  const reading = Promise.all([read(proc.stdout), read(proc.stderr)])
  // At the default level the binary says it listens on this port once its listeners are up; a
  // /healthz answer alone could come from another process that took the port.
  const quiet = env.LOG_LEVEL === 'warn' || env.LOG_LEVEL === 'error'
  const listening = `"msg":"listening","url":"${direct}"`
  const deadline = Date.now() + 15_000
  for (;;) {
    if (proc.exitCode !== null) {
      await reading
      const taken = [`127.0.0.1:${port}:`, `127.0.0.1:${metricsPort} for METRICS_ADDRESS:`].some((what) => out.includes(`cannot listen on ${what} the address is already in use`))
      if (taken) throw new PortTaken(out)
      throw new Error(`latchkey exited with ${proc.exitCode}: ${out}`)
    }
    try {
      if ((quiet || out.includes(listening)) && (await fetch(`${direct}/healthz`)).status === 200) break
    } catch {}
    if (Date.now() > deadline) throw new Error(`latchkey did not become healthy: ${out}`)
    await Bun.sleep(20)
  }
  return { direct, url, fullEnv, proc, output: () => out, metricsUrl: metricsPort === undefined ? undefined : `http://127.0.0.1:${metricsPort}/metrics` }
}

/** A process's resident memory in MB, from /proc (what the reviews measured). */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024
}

/** A tiny cookie-keeping browser stand-in for flows the real-browser test does not cover. */
export class CookieClient {
  jar: Record<string, string> = {}
  constructor(readonly base: string) {}

  async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers)
    const cookie = Object.entries(this.jar)
      .map(([k, v]) => `${k}=${v}`)
      .join('; ')
    if (cookie) headers.set('cookie', cookie)
    const res = await fetch(new URL(path, this.base), { ...init, headers, redirect: 'manual' })
    for (const line of res.headers.getSetCookie()) {
      const [name, value] = line.split(';')[0]!.split('=') as [string, string]
      if (value) this.jar[name] = value
      else delete this.jar[name]
    }
    return res
  }
}

/** Debian's Chromium, headless, as every browser test launches it. */
export function launchChromium() {
  return import('playwright-core').then(({ chromium }) =>
    chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-dev-shm-usage'],
    }),
  )
}
