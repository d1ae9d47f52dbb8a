/**
 * `bun run bench -- --scale`: how the compiled binary holds up as a deployment grows (issue 12).
 *
 * The data set — one app, one user and 1,000,000 live access tokens — is built once through the
 * product's own store code (`openStore`, then `issueCode` and `exchangeCode` for every token, the
 * same calls a sign-in and a code exchange make; ~2 minutes here) into a SQLite file under
 * `tests/bench/.scale/`, and reused while its tokens are valid (they live 30 days). Then:
 *
 * - distinct active tokens 1 / 10k / 100k / 1M: GET /api/oauth/userinfo, each request with a
 *   token drawn at random from the first N (so a working set larger than TOKEN_CACHE_SIZE shows);
 * - connections 1 / 64 / 256 / 1024: GET /api/oauth/userinfo with one token.
 *
 *   BENCH_BINARY=/path/to/latchkey   measure another build (e.g. an older commit) on the same data
 *   BENCH_SCALE_ONLY=tokens|connections   one curve only
 *
 * Not here yet (issue 12): the settings curve at 10M rows, durable POST latency on it, the soak.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { openStore } from '../../src/db/open'
import { randomToken, sha256 } from '../../src/lib/crypto'
import { ACCESS_TOKEN_PREFIX, mintOpaque } from '../../src/oauth/tokens'
import { REFRESH_TOKEN_PREFIX } from '../../src/oauth/refresh-tokens'

const TOKENS = 1_000_000
const TTL_SECONDS = 30 * 86_400
const here = import.meta.dir
const dataDir = join(here, '.scale')
const tokensFile = join(dataDir, 'tokens.txt')
const metaFile = join(dataDir, 'meta.json')
const REDIRECT_URI = 'http://127.0.0.1:9/callback'

interface Helpers {
  ensureBinary(): string
  fail(message: string): never
  spawnServer(name: string, cmd: string[], env: Record<string, string>, healthPath: string, cwd?: string): Promise<{ url: string; proc: import('bun').Subprocess; dir: string; name: string }>
  stopServer(s: { proc: import('bun').Subprocess }): Promise<void>
  cli(server: { dir: string; url: string }, bin: string, args: string[], stdin?: string): string
  measure(c: {
    name: string
    server: () => unknown
    path: string
    headers?: Record<string, string>
    script?: string
    env?: Record<string, string>
    connections?: number
  }): Promise<{ rps: number; p50ms: number; p99ms: number; cpuUsPerReq: number; rssMb: number; non2xx: number; socketErrors: number }>
}

/** Builds the data set unless a usable one is cached; returns how long it took (0 if cached). */
async function ensureDataSet(h: Helpers, bin: string): Promise<number> {
  if (existsSync(metaFile)) {
    const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as { tokens: number; expiresAt: number }
    if (meta.tokens === TOKENS && meta.expiresAt > Date.now() + 86_400_000) return 0
  }
  const started = performance.now()
  Bun.spawnSync(['rm', '-rf', dataDir])
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  // The app and the user through the CLI, as an administrator would.
  const server = { dir: dataDir, url: 'http://127.0.0.1:1' }
  const app = JSON.parse(h.cli(server, bin, ['client', 'create', '--name', 'Scale', '--redirect-uri', REDIRECT_URI, '--skip-consent']))
  h.cli(server, bin, ['user', 'create', '--email', 'scale@example.com', '--name', 'Scale User', '--password-stdin'], 'scale password\n')
  const userId = (JSON.parse(h.cli(server, bin, ['user', 'list', '--json'])) as Array<{ id: string }>)[0]!.id

  const { store } = await openStore({ databaseUrl: join(dataDir, 'data/latchkey.sqlite'), databasePoolSize: 1 })
  const now = Date.now()
  const tokens: string[] = new Array(TOKENS)
  const one = async (i: number) => {
    const code = randomToken()
    const codeHash = sha256(code)
    const familyId = Bun.randomUUIDv7()
    const row = { clientId: app.client_id, userId, scope: 'profile email', familyId }
    await store.issueCode(
      { codeHash, clientId: app.client_id, userId, redirectUri: REDIRECT_URI, scope: row.scope, codeChallenge: null, expiresAt: now + 600_000, nonce: null, authTime: now },
      undefined,
    )
    const access = mintOpaque(ACCESS_TOKEN_PREFIX, row, now, TTL_SECONDS)
    const refresh = mintOpaque(REFRESH_TOKEN_PREFIX, row, now, TTL_SECONDS)
    const outcome = await store.exchangeCode(codeHash, now, () => undefined, () => ({ access: access.row, refresh: { ...refresh.row, authTime: now } }))
    if (!outcome.ok) h.fail(`building the data set: exchange ${i} failed`)
    tokens[i] = access.spell(outcome.tokenId)
  }
  // Many in flight, so the store's writer commits them in groups, as it does under load.
  let next = 0
  await Promise.all(
    Array.from({ length: 256 }, async () => {
      while (next < TOKENS) await one(next++)
    }),
  )
  await store.close()
  writeFileSync(tokensFile, tokens.join('\n') + '\n', { mode: 0o600 })
  writeFileSync(metaFile, JSON.stringify({ tokens: TOKENS, expiresAt: now + TTL_SECONDS * 1000, clientId: app.client_id }))
  return performance.now() - started
}

export async function scale(h: Helpers): Promise<void> {
  const bin = process.env.BENCH_BINARY ?? h.ensureBinary()
  const buildMs = await ensureDataSet(h, bin)
  console.error(buildMs ? `scale: built ${TOKENS.toLocaleString('en-US')} tokens in ${(buildMs / 1000).toFixed(0)} s` : 'scale: using the cached data set')
  // Served from the cached folder; the server does not change what the curves read.
  const server = await h.spawnServer('latchkey-scale', [bin], { LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info', ACCESS_TOKEN_TTL: String(TTL_SECONDS) }, '/healthz', dataDir)
  const first = readFileSync(tokensFile, 'utf8').slice(0, 200).split('\n')[0]!

  const rows: Array<{ group: string; label: string; r: Awaited<ReturnType<Helpers['measure']>> }> = []
  const only = process.env.BENCH_SCALE_ONLY // 'tokens' or 'connections'
  for (const count of only === 'connections' ? [] : [1, 10_000, 100_000, 1_000_000]) {
    const r = await h.measure({
      name: `userinfo, ${count.toLocaleString('en-US')} distinct tokens`,
      server: () => server,
      path: '/api/oauth/userinfo',
      script: 'tokens.lua',
      env: { TOKENS: tokensFile, COUNT: String(count) },
    })
    rows.push({ group: 'tokens', label: count.toLocaleString('en-US'), r })
  }
  for (const connections of only === 'tokens' ? [] : [1, 64, 256, 1024]) {
    const r = await h.measure({
      name: `userinfo, ${connections} connections`,
      server: () => server,
      path: '/api/oauth/userinfo',
      headers: { Authorization: `Bearer ${first}` },
      connections,
    })
    rows.push({ group: 'connections', label: String(connections), r })
  }
  await h.stopServer(server)

  const num = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d })
  const table = (group: string, heading: string, base: number) => [
    `| ${heading} | req/s | × first row | p50 ms | p99 ms | errors | CPU µs/req | RSS MB |`,
    `| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |`,
    ...rows
      .filter((x) => x.group === group)
      .map(({ label, r }) => `| ${label} | ${num(r.rps)} | ${num((r.rps / base) * 100)} % | ${num(r.p50ms, 2)} | ${num(r.p99ms, 2)} | ${r.non2xx + r.socketErrors} | ${num(r.cpuUsPerReq, 1)} | ${num(r.rssMb, 1)} |`),
  ]
  const tokenBase = rows.find((x) => x.group === 'tokens')?.r.rps ?? 0
  const connBase = rows.find((x) => x.group === 'connections' && x.label === '64')?.r.rps ?? 0
  console.log(
    [
      `binary: ${bin}`,
      '',
      ...table('tokens', 'distinct tokens', tokenBase),
      '',
      ...table('connections', 'connections', connBase).map((l, i) => (i === 0 ? l.replace('× first row', '× 64 connections') : l)),
    ].join('\n'),
  )
}
