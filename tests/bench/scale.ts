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
 * - the soak (tests/bench/soak.ts): whole OAuth flows for 10 minutes, its RSS and file-size series.
 *
 *   BENCH_BINARY=/path/to/latchkey   measure another build (e.g. an older commit) on the same data
 *   BENCH_SCALE_ONLY=tokens|connections|settings|soak   one part only
 *   BENCH_SOAK_SECONDS=600 BENCH_SOAK_EVERY=30   the soak's length and sampling
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { insertUser } from '../../src/accounts/users'
import { openStore } from '../../src/db/open'
import type { Store } from '../../src/db/store'
import { randomToken, sha256 } from '../../src/lib/crypto'
import { ACCESS_TOKEN_PREFIX, mintOpaque } from '../../src/oauth/tokens'
import { REFRESH_TOKEN_PREFIX } from '../../src/oauth/refresh-tokens'
import { soak, type SoakHelpers, type SoakSample } from './soak'

const TOKENS = 1_000_000
const TTL_SECONDS = 30 * 86_400
const here = import.meta.dir
const scaleRoot = join(here, '.scale')
const dataDir = join(scaleRoot, 'tokens')
const tokensFile = join(dataDir, 'tokens.txt')
const metaFile = join(dataDir, 'meta.json')
const REDIRECT_URI = 'http://127.0.0.1:9/callback'
const SETTINGS_USERS = Number(process.env.BENCH_SCALE_USERS ?? 100_000)
const SETTINGS_PER_USER = 100
const settingsDir = join(scaleRoot, 'settings')
const settingsTokens = join(settingsDir, 'tokens.txt')
const settingsMeta = join(settingsDir, 'meta.json')

interface Helpers extends SoakHelpers {
  ensureBinary(): string
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

/** What a sign-in and a code exchange store for one access token: a code, then its exchange. */
async function issueToken(store: Store, clientId: string, userId: string, scope: string, now: number): Promise<string> {
  const codeHash = sha256(randomToken())
  const row = { clientId, userId, scope, familyId: Bun.randomUUIDv7() }
  await store.issueCode(
    { codeHash, clientId, userId, redirectUri: REDIRECT_URI, scope, codeChallenge: null, expiresAt: now + 600_000, nonce: null, authTime: now },
    undefined,
  )
  const access = mintOpaque(ACCESS_TOKEN_PREFIX, row, now, TTL_SECONDS)
  const refresh = mintOpaque(REFRESH_TOKEN_PREFIX, row, now, TTL_SECONDS)
  const outcome = await store.exchangeCode(codeHash, now, () => undefined, () => ({ access: access.row, refresh: { ...refresh.row, authTime: now } }))
  if (!outcome.ok) throw new Error('building the data set: an exchange failed')
  return access.spell(outcome.tokenId)
}

/** `count` steps, many in flight, so the store's writer commits them in groups as under load. */
async function inParallel(count: number, step: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: 256 }, async () => {
      while (next < count) await step(next++)
    }),
  )
}

/**
 * The settings data set: SETTINGS_USERS users of one app, each with a token and
 * SETTINGS_PER_USER settings, saved through the store's own `saveSetting`.
 */
async function ensureSettingsDataSet(h: Helpers, bin: string): Promise<number> {
  if (existsSync(settingsMeta)) {
    const meta = JSON.parse(readFileSync(settingsMeta, 'utf8')) as { users: number; perUser: number; expiresAt: number }
    if (meta.users === SETTINGS_USERS && meta.perUser === SETTINGS_PER_USER && meta.expiresAt > Date.now() + 86_400_000) return 0
  }
  const started = performance.now()
  Bun.spawnSync(['rm', '-rf', settingsDir])
  mkdirSync(settingsDir, { recursive: true, mode: 0o700 })
  const server = { dir: settingsDir, url: 'http://127.0.0.1:1' }
  const app = JSON.parse(h.cli(server, bin, ['client', 'create', '--name', 'Scale', '--redirect-uri', REDIRECT_URI, '--skip-consent']))
  const { store } = await openStore({ databaseUrl: join(settingsDir, 'data/latchkey.sqlite'), databasePoolSize: 1 })
  const now = Date.now()
  const passwordHash = await Bun.password.hash('scale password')
  const tokens: string[] = new Array(SETTINGS_USERS)
  await inParallel(SETTINGS_USERS, async (i) => {
    const user = await insertUser(store, { email: `user${i}@scale.example`, fullName: `User ${i}`, avatarUrl: null, passwordHash }, now)
    tokens[i] = await issueToken(store, app.client_id, user.id, 'settings:read settings:write', now)
    for (let k = 0; k < SETTINGS_PER_USER; k++)
      await store.saveSetting(user.id, app.client_id, `pref.${k}`, JSON.stringify({ theme: 'dark', size: k, tags: ['a', 'b'] }), () => now)
  })
  await store.close()
  writeFileSync(settingsTokens, tokens.join('\n') + '\n', { mode: 0o600 })
  writeFileSync(settingsMeta, JSON.stringify({ users: SETTINGS_USERS, perUser: SETTINGS_PER_USER, expiresAt: now + TTL_SECONDS * 1000, clientId: app.client_id }))
  return performance.now() - started
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
  await inParallel(TOKENS, async (i) => (tokens[i] = await issueToken(store, app.client_id, userId, 'profile email', now)))
  await store.close()
  writeFileSync(tokensFile, tokens.join('\n') + '\n', { mode: 0o600 })
  writeFileSync(metaFile, JSON.stringify({ tokens: TOKENS, expiresAt: now + TTL_SECONDS * 1000, clientId: app.client_id }))
  return performance.now() - started
}

export async function scale(h: Helpers): Promise<void> {
  const bin = process.env.BENCH_BINARY ?? h.ensureBinary()
  const only = process.env.BENCH_SCALE_ONLY // 'tokens', 'connections', 'settings' or 'soak'
  const env = { LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info', ACCESS_TOKEN_TTL: String(TTL_SECONDS) }
  const rows: Array<{ group: string; label: string; r: Awaited<ReturnType<Helpers['measure']>> }> = []

  if (!only || only === 'tokens' || only === 'connections') {
    const buildMs = await ensureDataSet(h, bin)
    console.error(buildMs ? `scale: built ${TOKENS.toLocaleString('en-US')} tokens in ${(buildMs / 1000).toFixed(0)} s` : 'scale: using the cached token data set')
    const server = await h.spawnServer('latchkey-scale', [bin], env, '/healthz', dataDir)
    const first = readFileSync(tokensFile, 'utf8').slice(0, 200).split('\n')[0]!
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
  }

  if (!only || only === 'settings') {
    const buildMs = await ensureSettingsDataSet(h, bin)
    const rowCount = (SETTINGS_USERS * SETTINGS_PER_USER).toLocaleString('en-US')
    console.error(buildMs ? `scale: built ${rowCount} settings in ${(buildMs / 1000).toFixed(0)} s` : 'scale: using the cached settings data set')
    const { clientId } = JSON.parse(readFileSync(settingsMeta, 'utf8')) as { clientId: string }
    const server = await h.spawnServer('latchkey-scale-settings', [bin], env, '/healthz', settingsDir)
    const cases: Array<[string, string, Record<string, string>]> = [
      ['list (100 keys)', '/api/settings', {}],
      ['one key', '/api/settings/pref.42', {}],
      ['POST same key', '/api/settings', { METHOD: 'POST', CONTENT_TYPE: 'application/json', BODY: JSON.stringify({ client_id: clientId, key: 'pref.7', value: { theme: 'light', size: 7 } }) }],
    ]
    for (const users of [1_000, SETTINGS_USERS])
      for (const [what, path, extra] of cases) {
        const label = `${what}, ${users.toLocaleString('en-US')} users`
        const r = await h.measure({ name: `settings: ${label}`, server: () => server, path, script: 'tokens.lua', env: { TOKENS: settingsTokens, COUNT: String(users), ...extra } })
        rows.push({ group: 'settings', label, r })
      }
    await h.stopServer(server)
  }

  let soaked: Awaited<ReturnType<typeof soak>> | undefined
  if (!only || only === 'soak') soaked = await soak(h, bin, scaleRoot)

  const num = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d })
  const table = (group: string, heading: string, base: number, baseName: string) =>
    rows.some((x) => x.group === group)
      ? [
          `| ${heading} | req/s | × ${baseName} | p50 ms | p99 ms | errors | CPU µs/req | RSS MB |`,
          `| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |`,
          ...rows
            .filter((x) => x.group === group)
            .map(({ label, r }) => `| ${label} | ${num(r.rps)} | ${num((r.rps / base) * 100)} % | ${num(r.p50ms, 2)} | ${num(r.p99ms, 2)} | ${r.non2xx + r.socketErrors} | ${num(r.cpuUsPerReq, 1)} | ${num(r.rssMb, 1)} |`),
          '',
        ]
      : []
  const rate = (group: string, label?: string) => rows.find((x) => x.group === group && (!label || x.label === label))?.r.rps ?? 0
  console.log(
    [
      `binary: ${bin}`,
      '',
      ...table('tokens', 'distinct tokens', rate('tokens'), 'first row'),
      ...table('connections', 'connections', rate('connections', '64'), '64 connections'),
      ...table('settings', `settings (${(SETTINGS_USERS * SETTINGS_PER_USER).toLocaleString('en-US')} rows)`, rate('settings'), 'first row'),
      ...(soaked ? soakTable(soaked.samples, soaked.flows) : []),
    ].join('\n'),
  )
}

/** The soak's series, and whether both flattened: the last third against the middle third. */
function soakTable(samples: SoakSample[], flows: number): string[] {
  const num = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d })
  const third = Math.floor(samples.length / 3)
  const peak = (from: number, to: number, of: (s: SoakSample) => number) => Math.max(...samples.slice(from, to).map(of))
  const growth = (of: (s: SoakSample) => number) => (peak(2 * third, samples.length, of) / peak(third, 2 * third, of) - 1) * 100
  return [
    `soak: ${num(flows)} flows (each: authorize, exchange, 5 userinfo, a settings write and list, a refresh, every other one a revocation); tokens live 60 s, refresh tokens 120 s`,
    '',
    '| seconds | flows/s | RSS MB | file MB | WAL MB | free pages | access tokens | refresh tokens | codes |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...samples.map((s) => `| ${s.seconds} | ${num(s.flowsPerSecond)} | ${num(s.rssMb, 1)} | ${num(s.fileMb, 1)} | ${num(s.walMb, 1)} | ${num(s.freePages)} | ${num(s.accessTokens)} | ${num(s.refreshTokens)} | ${num(s.codes)} |`),
    '',
    third > 0
      ? `peak in the last third against the middle third: RSS ${num(growth((s) => s.rssMb), 1)} %, file ${num(growth((s) => s.fileMb), 1)} %`
      : 'too short to compare thirds',
    '',
  ]
}
