/**
 * `bun run bench -- --scale`: how the compiled binary holds up as a deployment grows (issue 12).
 *
 * Its data sets are built once through the product's own store code (`openStore`, then
 * `issueCode` and `exchangeCode` for every token, `saveSetting` for every setting: the calls a
 * sign-in, a code exchange and a settings write make) into SQLite files under
 * `tests/bench/.scale/`, and reused while their tokens are valid (they live 30 days):
 * 1,000,000 tokens of one user (~1 minute, ~1.2 GB); settings of 10k rows (1,000 users × 10),
 * 1M rows (10,000 × 100, ~40 s) and 10M rows (100,000 × 100, ~6 minutes, ~4 GB). A run then
 * takes ~20 minutes, 10 of them the soak. Then:
 *
 * - distinct active tokens 1 / 10k / 100k / 1M: GET /api/oauth/userinfo, each request with a
 *   token drawn at random from the first N (so a working set larger than TOKEN_CACHE_SIZE shows);
 * - connections 1 / 64 / 256 / 1024: GET /api/oauth/userinfo with one token;
 * - both curves again on PostgreSQL (a throwaway pg_virtualenv cluster, the same token rows);
 * - settings on each data set, over 1,000 users and over all of them: the list, one key, a POST
 *   of the same key and POSTs of new keys (removed again after the run); then the list over all
 *   of them on a server whose SETTINGS_CACHE_SIZE (2 GiB) holds every list, each read once before;
 * - the soak (tests/bench/soak.ts): whole OAuth flows for 10 minutes, its RSS and file-size series.
 *
 *   BENCH_BINARY=/path/to/latchkey   measure another build (e.g. an older commit) on the same data
 *   BENCH_SCALE_ONLY=tokens,connections,pg,settings,soak   some parts only (BENCH_POSTGRES=0: no pg)
 *   BENCH_SCALE_SETTINGS=10M   some settings data sets only (of 10k, 1M, 10M)
 *   BENCH_SOAK_SECONDS=600 BENCH_SOAK_EVERY=30   the soak's length and sampling
 */
import { Database } from 'bun:sqlite'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { insertUser } from '../../src/accounts/users'
import { openStore } from '../../src/db/open'
import { connect } from '../../src/db/pg/connect'
import type { Store } from '../../src/db/store'
import { randomToken, sha256 } from '../../src/lib/crypto'
import { ACCESS_TOKEN_PREFIX, mintOpaque } from '../../src/oauth/tokens'
import { REFRESH_TOKEN_PREFIX } from '../../src/oauth/refresh-tokens'
import type { Harness, PgCluster } from './harness'
import { soak, type SoakSample } from './soak'

const TOKENS = 1_000_000
const TTL_SECONDS = 30 * 86_400
const here = import.meta.dir
const scaleRoot = join(here, '.scale')
const dataDir = join(scaleRoot, 'tokens')
const tokensFile = join(dataDir, 'tokens.txt')
const metaFile = join(dataDir, 'meta.json')
const REDIRECT_URI = 'http://127.0.0.1:9/callback'
/** The settings curve's data sets: rows = users × settings each. */
interface SettingsSet {
  rows: string
  users: number
  perUser: number
  dir: string
}
const SETTINGS_SETS: SettingsSet[] = [
  { rows: '10k', users: 1_000, perUser: 10, dir: join(scaleRoot, 'settings-10k') },
  { rows: '1M', users: 10_000, perUser: 100, dir: join(scaleRoot, 'settings-1m') },
  { rows: '10M', users: 100_000, perUser: 100, dir: join(scaleRoot, 'settings-10m') },
]


/** What a sign-in and a code exchange store for one access token: a code, then its exchange. */
export async function issueToken(store: Store, clientId: string, userId: string, scope: string, now: number): Promise<string> {
  const codeHash = sha256(randomToken())
  const row = { clientId, userId, scope, familyId: Bun.randomUUIDv7(), resource: null }
  await store.grants.issueCode(
    { codeHash, clientId, userId, redirectUri: REDIRECT_URI, scope, codeChallenge: null, expiresAt: now + 600_000, nonce: null, authTime: now, amr: 'pwd', resource: null },
    undefined,
  )
  const access = mintOpaque(ACCESS_TOKEN_PREFIX, row, now, TTL_SECONDS)
  const refresh = mintOpaque(REFRESH_TOKEN_PREFIX, row, now, TTL_SECONDS)
  const secrets = ({ verifierHash, expiresAt, createdAt }: typeof access.row) => ({ verifierHash, expiresAt, createdAt })
  const expect = { clientId, redirectUri: REDIRECT_URI, challenge: null, audience: undefined }
  const tokens = { familyId: row.familyId, access: secrets(access.row), refresh: secrets(refresh.row), keyHash: sha256(randomToken()) }
  const outcome = await store.grants.exchangeCode({ codeHash, now, expect, tokens })
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
 * A settings data set: `set.users` users of one app, each with a token and `set.perUser`
 * settings, saved through the store's own `saveSetting`, users interleaved as real ones write.
 */
async function ensureSettingsDataSet(h: Harness, bin: string, set: SettingsSet): Promise<number> {
  const metaFile = join(set.dir, 'meta.json')
  if (existsSync(metaFile)) {
    const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as { users: number; perUser: number; expiresAt: number }
    if (meta.users === set.users && meta.perUser === set.perUser && meta.expiresAt > Date.now() + 86_400_000) return 0
  }
  const started = performance.now()
  Bun.spawnSync(['rm', '-rf', set.dir])
  mkdirSync(set.dir, { recursive: true, mode: 0o700 })
  const server = { dir: set.dir, url: 'http://127.0.0.1:1' }
  const app = JSON.parse(h.cli(server, bin, ['client', 'create', '--name', 'Scale', '--redirect-uri', REDIRECT_URI, '--skip-consent']))
  const { store } = await openStore({ databaseUrl: join(set.dir, 'data/latchkey.sqlite'), databasePoolSize: 1 })
  const now = Date.now()
  const passwordHash = await Bun.password.hash('scale password')
  const tokens: string[] = new Array(set.users)
  await inParallel(set.users, async (i) => {
    const user = await insertUser(store, { email: `user${i}@scale.example`, fullName: `User ${i}`, avatarUrl: null, passwordHash }, now)
    tokens[i] = await issueToken(store, app.client_id, user.id, 'settings:read settings:write', now)
    for (let k = 0; k < set.perUser; k++)
      await store.settings.saveSetting(user.id, app.client_id, `pref.${k}`, JSON.stringify({ theme: 'dark', size: k, tags: ['a', 'b'] }), { now, valueBytes: 0, maxKeys: 1e9, maxUserBytes: 1e15 })
  })
  await store.close()
  writeFileSync(join(set.dir, 'tokens.txt'), tokens.join('\n') + '\n', { mode: 0o600 })
  writeFileSync(metaFile, JSON.stringify({ users: set.users, perUser: set.perUser, expiresAt: now + TTL_SECONDS * 1000, clientId: app.client_id }))
  return performance.now() - started
}

/**
 * The token data set on PostgreSQL: a fresh database migrated by the binary, its app and user
 * made by the CLI, then the SQLite set's 1,000,000 token rows copied in batches under the same
 * ids (so the same token strings are valid) — building them through the store again would take
 * ~10 minutes at PostgreSQL's exchange rate, on every run (the cluster is thrown away after it).
 */
async function pgTokenServer(h: Harness, bin: string, pg: PgCluster, env: Record<string, string>) {
  const started = performance.now()
  const databaseUrl = await pg.database('scale_tokens')
  const server = await h.spawnServer('latchkey-scale-pg', [bin], { ...env, DATABASE_URL: databaseUrl, DATABASE_POOL_SIZE: '16' }, '/healthz')
  const withUrl = { ...server, env: { DATABASE_URL: databaseUrl } }
  const app = JSON.parse(h.cli(withUrl, bin, ['client', 'create', '--name', 'Scale', '--redirect-uri', REDIRECT_URI, '--skip-consent']))
  h.cli(withUrl, bin, ['user', 'create', '--email', 'scale@example.com', '--name', 'Scale User', '--password-stdin'], 'scale password\n')
  const userId = (JSON.parse(h.cli(withUrl, bin, ['user', 'list', '--json'])) as Array<{ id: string }>)[0]!.id
  const source = new Database(join(dataDir, 'data/latchkey.sqlite'), { readonly: true })
  const sql = connect(databaseUrl, { max: 4 })
  const page = source.query('SELECT id, verifier_hash, scope, expires_at, created_at, family_id FROM access_tokens WHERE id > ? ORDER BY id LIMIT 8000')
  for (let after = 0; ; ) {
    const tokens = page.all(after) as Array<{ id: number; verifier_hash: string; scope: string; expires_at: number; created_at: number; family_id: string | null }>
    if (tokens.length === 0) break
    after = tokens.at(-1)!.id
    await sql`INSERT INTO access_tokens ${sql(tokens.map((t) => ({ ...t, client_id: app.client_id, user_id: userId })))}`
  }
  await sql`SELECT setval(pg_get_serial_sequence('access_tokens', 'id'), (SELECT max(id) FROM access_tokens))`
  await sql`ANALYZE access_tokens`
  await sql.close()
  source.close()
  console.error(`scale: copied the tokens into PostgreSQL in ${((performance.now() - started) / 1000).toFixed(0)} s`)
  return server
}

/** A settings cache that holds every list of the set (the default 16 MiB holds ~1,100). */
const LARGE_SETTINGS_CACHE = 2 * 1024 ** 3

/**
 * The list over all the set's users again, on a server whose SETTINGS_CACHE_SIZE holds all
 * their lists, each read once before: what a deployment that sizes its cache to its users gets.
 */
async function listWithLargeCache(h: Harness, bin: string, env: Record<string, string>, set: SettingsSet) {
  const server = await h.spawnServer(`latchkey-scale-settings-${set.rows}-cached`, [bin], { ...env, SETTINGS_CACHE_SIZE: String(LARGE_SETTINGS_CACHE) }, '/healthz', set.dir)
  try {
    const tokens = readFileSync(join(set.dir, 'tokens.txt'), 'utf8').trim().split('\n')
    const started = performance.now()
    await inParallel(tokens.length, async (i) => {
      const res = await fetch(`${server.url}/api/settings`, { headers: { authorization: `Bearer ${tokens[i]}` } })
      if (res.status !== 200) h.fail(`warming the settings cache: ${res.status}`)
      await res.arrayBuffer()
    })
    console.error(`scale: read ${tokens.length.toLocaleString('en-US')} lists once in ${((performance.now() - started) / 1000).toFixed(0)} s`)
    const label = `${set.rows} rows, ${set.users.toLocaleString('en-US')} users: list, SETTINGS_CACHE_SIZE=${LARGE_SETTINGS_CACHE / 1024 ** 3} GiB`
    const r = await h.measure({ name: `settings: ${label}`, server: () => server, path: '/api/settings', script: 'tokens.lua', env: { TOKENS: join(set.dir, 'tokens.txt'), COUNT: String(set.users) } })
    return { label, r }
  } finally {
    await h.stopServer(server)
  }
}

/** The new-key POSTs' rows go once measured, so a cached data set stays what it was built as. */
function dropNewKeys(set: SettingsSet): void {
  const db = new Database(join(set.dir, 'data/latchkey.sqlite'))
  db.run("DELETE FROM settings WHERE key LIKE 'new.%'")
  db.run('PRAGMA wal_checkpoint(TRUNCATE)')
  db.close()
}

/** Builds the data set unless a usable one is cached; returns how long it took (0 if cached). */
async function ensureDataSet(h: Harness, bin: string): Promise<number> {
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

export async function scale(h: Harness): Promise<void> {
  const bin = process.env.BENCH_BINARY ?? h.ensureBinary()
  const only = process.env.BENCH_SCALE_ONLY?.split(',') // of 'tokens', 'connections', 'pg', 'settings', 'soak'
  const want = (part: string) => (only ? only.includes(part) : part !== 'pg' || process.env.BENCH_POSTGRES !== '0')
  const env = { LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info', ACCESS_TOKEN_TTL: String(TTL_SECONDS) }
  const rows: Array<{ group: string; label: string; r: Awaited<ReturnType<Harness['measure']>> }> = []

  /** The distinct-token and connection curves against `server`, into rows of `prefix`+group. */
  const tokenCurves = async (prefix: string, server: Awaited<ReturnType<Harness['spawnServer']>>, tokens: boolean, connections: boolean) => {
    const first = readFileSync(tokensFile, 'utf8').slice(0, 200).split('\n')[0]!
    for (const count of tokens ? [1, 10_000, 100_000, 1_000_000] : []) {
      const r = await h.measure({
        name: `${prefix}userinfo, ${count.toLocaleString('en-US')} distinct tokens`,
        server: () => server,
        path: '/api/oauth/userinfo',
        script: 'tokens.lua',
        env: { TOKENS: tokensFile, COUNT: String(count) },
      })
      rows.push({ group: `${prefix}tokens`, label: count.toLocaleString('en-US'), r })
    }
    for (const count of connections ? [1, 64, 256, 1024] : []) {
      const r = await h.measure({
        name: `${prefix}userinfo, ${count} connections`,
        server: () => server,
        path: '/api/oauth/userinfo',
        headers: { Authorization: `Bearer ${first}` },
        connections: count,
      })
      rows.push({ group: `${prefix}connections`, label: String(count), r })
    }
  }

  if (want('tokens') || want('connections') || want('pg')) {
    const buildMs = await ensureDataSet(h, bin)
    console.error(buildMs ? `scale: built ${TOKENS.toLocaleString('en-US')} tokens in ${(buildMs / 1000).toFixed(0)} s` : 'scale: using the cached token data set')
  }
  if (want('tokens') || want('connections')) {
    const server = await h.spawnServer('latchkey-scale', [bin], env, '/healthz', dataDir)
    await tokenCurves('', server, want('tokens'), want('connections'))
    await h.stopServer(server)
  }
  if (want('pg')) {
    const pg = await h.startPgCluster()
    try {
      const server = await pgTokenServer(h, bin, pg, env)
      await tokenCurves('pg: ', server, true, true)
      await h.stopServer(server)
    } finally {
      pg.stop()
    }
  }

  const settingsSets = process.env.BENCH_SCALE_SETTINGS?.split(',')
  if (want('settings'))
    for (const set of SETTINGS_SETS.filter((s) => !settingsSets || settingsSets.includes(s.rows))) {
      const buildMs = await ensureSettingsDataSet(h, bin, set)
      console.error(buildMs ? `scale: built ${set.rows} settings in ${(buildMs / 1000).toFixed(0)} s` : `scale: using the cached ${set.rows} settings data set`)
      const { clientId } = JSON.parse(readFileSync(join(set.dir, 'meta.json'), 'utf8')) as { clientId: string }
      const server = await h.spawnServer(`latchkey-scale-settings-${set.rows}`, [bin], { ...env, SETTINGS_MAX_KEYS: '1000000' }, '/healthz', set.dir)
      const post = { METHOD: 'POST', CONTENT_TYPE: 'application/json' }
      const cases: Array<[string, string, Record<string, string>]> = [
        [`list (${set.perUser} keys)`, '/api/settings', {}],
        ['one key', `/api/settings/pref.${set.perUser - 1}`, {}],
        ['POST same key', '/api/settings', { ...post, BODY: JSON.stringify({ client_id: clientId, key: 'pref.7', value: { theme: 'light', size: 7 } }) }],
        ['POST new key', '/api/settings', { ...post, NEW_KEYS: '1', BODY: `{"client_id":"${clientId}","key":"new.%d.%d","value":{"theme":"light","size":7}}` }],
      ]
      for (const users of [...new Set([1_000, set.users])])
        for (const [what, path, extra] of cases) {
          const label = `${set.rows} rows, ${users.toLocaleString('en-US')} users: ${what}`
          const r = await h.measure({ name: `settings: ${label}`, server: () => server, path, script: 'tokens.lua', env: { TOKENS: join(set.dir, 'tokens.txt'), COUNT: String(users), ...extra } })
          rows.push({ group: 'settings', label, r })
        }
      await h.stopServer(server)
      dropNewKeys(set)
      if (set.users > 1_000) rows.push({ group: 'settings', ...(await listWithLargeCache(h, bin, env, set)) })
    }

  let soaked: Awaited<ReturnType<typeof soak>> | undefined
  if (want('soak')) soaked = await soak(h, bin, scaleRoot)

  const num = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d })
  const table = (group: string, heading: string, base: number, baseName: string) =>
    rows.some((x) => x.group === group)
      ? [
          `| ${heading} | req/s | × ${baseName} | p50 ms | p99 ms | errors | CPU µs/req | RSS MB | disk read KB/req | disk write KB/req |`,
          `| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |`,
          ...rows
            .filter((x) => x.group === group)
            .map(({ label, r }) => `| ${label} | ${num(r.rps)} | ${num((r.rps / base) * 100)} % | ${num(r.p50ms, 2)} | ${num(r.p99ms, 2)} | ${r.non2xx + r.socketErrors} | ${num(r.cpuUsPerReq, 1)} | ${num(r.rssMb, 1)} | ${num(r.diskReadKbPerReq, 1)} | ${num(r.diskWriteKbPerReq, 1)} |`),
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
      ...table('pg: tokens', 'PostgreSQL: distinct tokens', rate('pg: tokens'), 'first row'),
      ...table('pg: connections', 'PostgreSQL: connections', rate('pg: connections', '64'), '64 connections'),
      ...table('settings', 'settings', rate('settings'), 'first row'),
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
