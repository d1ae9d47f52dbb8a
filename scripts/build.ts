#!/usr/bin/env bun
/**
 * `bun run build`: dist/latchkey, the one self-contained executable (`bun build --compile`, bytecode).
 *
 * ESM with code splitting: what a module imports lazily stays in a chunk of its own, node builtins
 * too (one bundle hoists every `import … from "node:…"` to its top, so a server loaded node:crypto,
 * node:http, node:tls, node:zlib, node:child_process … at start for nodemailer and the metadata
 * fetcher, which most servers never use).
 *
 * Built twice. The first binary is run the ways it starts in production — `serve` in an empty
 * folder (creates and migrates the database, makes its keys), /healthz, the first API requests,
 * SIGTERM; then `healthcheck` and `client list` — each with BUN_BYTECODE_ORDER_OUT, so Bun records
 * the functions each run used. The second build lays its bytecode out by those records, the
 * server's first (`--bytecode-order`, profile-guided layout): what starting uses sits together, so
 * the binary reads and keeps fewer pages of itself. The records are made fresh by every build, so
 * they never go stale and nothing opaque is committed; if recording fails, the first binary stays,
 * with a warning (it only lacks the layout).
 *
 * Both builds start with the JIT held back (`--compile-jit-policy`, see src/lib/jit.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const root = join(import.meta.dir, '..')
const OUTFILE = join(root, 'dist/latchkey')
/** JIT tier-up thresholds ×1000 until src/lib/jit.ts releases them: nothing that runs once is compiled. */
const JIT_POLICY = 1000

function compile(order: string[]): void {
  const args = ['build', '--compile', '--format=esm', '--splitting', '--define', 'process.env.NODE_ENV="production"', '--minify-whitespace', '--minify-syntax', '--bytecode', '--sourcemap=none']
  args.push(`--compile-jit-policy=${JIT_POLICY}`, ...(order.length ? [`--bytecode-order=${order.join(',')}`] : []), '--outfile', OUTFILE, 'src/index.ts')
  const result = Bun.spawnSync([process.execPath, ...args], { cwd: root, stdout: 'inherit', stderr: 'inherit' })
  if (result.exitCode !== 0) process.exit(result.exitCode ?? 1)
}

async function freePort(): Promise<number> {
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = probe.port
  probe.stop(true)
  return port
}

async function waitHealthy(base: string, exited: Promise<number>): Promise<void> {
  let done = false
  exited.then(() => (done = true))
  const deadline = Date.now() + 15_000
  while (!done && Date.now() < deadline) {
    const status = await fetch(`${base}/healthz`).then((r) => r.status, () => 0)
    if (status === 200) return
    await Bun.sleep(10)
  }
  throw new Error(done ? 'the server exited before /healthz answered' : 'no /healthz within 15 s')
}

/** Runs the first build as production starts it, each process writing its record; returns the records, the server's first. */
async function record(dir: string): Promise<string[]> {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  // ISSUER by address: the discovery document's URLs must reach the server where localhost is ::1.
  const env = { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), ISSUER: base, LOG_LEVEL: 'warn' }
  const orders = { serve: join(dir, 'serve.order'), healthcheck: join(dir, 'healthcheck.order'), cli: join(dir, 'cli.order') }
  const server = Bun.spawn([OUTFILE, 'serve'], { cwd: dir, env: { ...env, BUN_BYTECODE_ORDER_OUT: orders.serve }, stdout: 'ignore', stderr: 'inherit' })
  try {
    await waitHealthy(base, server.exited)
    const discovery = (await (await fetch(`${base}/.well-known/openid-configuration`)).json()) as Record<string, string>
    // The first API requests: the app is made on the first, JWKS waits for the first start's keys.
    await Promise.all(
      [
        fetch(discovery.jwks_uri!),
        fetch(discovery.userinfo_endpoint!),
        fetch(discovery.token_endpoint!, { method: 'POST', body: new URLSearchParams({ grant_type: 'authorization_code', code: 'x', client_id: 'x' }) }),
        fetch(`${base}/oauth/authorize?client_id=x&response_type=code`),
        fetch(`${base}/api/settings`),
        fetch(`${base}/login`),
      ].map((answer) => answer.then((r) => r.arrayBuffer())),
    )
    const healthcheck = Bun.spawnSync([OUTFILE, 'healthcheck'], { cwd: dir, env: { ...env, BUN_BYTECODE_ORDER_OUT: orders.healthcheck } })
    if (healthcheck.exitCode !== 0) throw new Error(`healthcheck exited ${healthcheck.exitCode}`)
  } finally {
    server.kill('SIGTERM')
  }
  if ((await server.exited) !== 0) throw new Error(`the server exited ${server.exitCode}`)
  const cli = Bun.spawnSync([OUTFILE, 'client', 'list'], { cwd: dir, env: { ...env, BUN_BYTECODE_ORDER_OUT: orders.cli } })
  if (cli.exitCode !== 0) throw new Error(`client list exited ${cli.exitCode}`)
  return [orders.serve, orders.healthcheck, orders.cli]
}

compile([])
const dir = mkdtempSync(join(tmpdir(), 'latchkey-build-'))
try {
  compile(await record(dir))
} catch (error) {
  process.stderr.write(`build: recording the bytecode layout failed (${(error as Error).message}); dist/latchkey is built without it\n`)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
