import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pkg from '../../package.json'
import { loadConfig } from '../../src/config'
import { createLogger } from '../../src/lib/log'
import { startServer } from '../../src/server'
import { freePort } from '../e2e/server'
import { freshPgDatabase } from '../pg-store'
import { testEngine } from '../store'

// Spawns CLI processes: slower than in-process tests on a busy machine.
setDefaultTimeout(60_000)

/** SPEC, "Operators: first run, confirmations, the CLI" — the CLI bullet. */
const dir = mkdtempSync(join(tmpdir(), 'latchkey-operator-'))
const entry = join(import.meta.dir, '../../src/index.ts')
let databaseUrl: string

beforeAll(async () => {
  databaseUrl = testEngine === 'postgres' ? await freshPgDatabase() : join(dir, 'latchkey.sqlite')
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function cli(args: string[], opts: { env?: Record<string, string>; stdin?: string; cwd?: string } = {}) {
  const proc = Bun.spawnSync(['bun', entry, ...args], {
    env: { PATH: process.env.PATH!, HOME: dir, DATABASE_URL: databaseUrl, LOG_LEVEL: 'error', ...opts.env },
    stdin: opts.stdin === undefined ? 'ignore' : new TextEncoder().encode(opts.stdin),
    cwd: opts.cwd ?? dir,
  })
  return { code: proc.exitCode, out: proc.stdout.toString(), err: proc.stderr.toString() }
}

/** The same, while this process serves (spawnSync would block the server it asks). */
async function cliAsync(args: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawn(['bun', entry, ...args], { env: { PATH: process.env.PATH!, HOME: dir, DATABASE_URL: databaseUrl, LOG_LEVEL: 'error', ...env }, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe', cwd: dir })
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  if (args.includes('--json') && code === 0 && err === '') {
    JSON.parse(out)
    ranWithJson.add(commandOf(args))
  }
  return { code, out, err }
}

/** The commands this file ran with --json and saw one JSON value from: checked against the whole table at the end. */
const ranWithJson = new Set<string>()
const commandOf = (args: string[]) => leaves.find((p) => args.slice(0, p.split(' ').length).join(' ') === p) ?? ''

/** A command run with --json: exit 0, nothing on stderr, exactly one JSON value on stdout. */
function json<T = Record<string, unknown>>(args: string[], opts: Parameters<typeof cli>[1] = {}): T {
  const r = cli([...args, '--json'], opts)
  if (r.code === 0 && r.err === '') ranWithJson.add(commandOf(args))
  expect({ args, code: r.code, err: r.err }).toEqual({ args, code: 0, err: '' })
  return JSON.parse(r.out) as T
}

const events = () => json<Array<{ kind: string; user_id: string | null; client_id: string | null; detail: Record<string, unknown> }>>(['audit'])

const COMMANDS: Record<string, string[]> = {
  serve: [],
  status: [],
  client: ['create', 'update', 'list', 'delete', 'rotate-secret', 'registration-token'],
  user: ['create', 'list', 'update', 'delete', 'invite', 'reset-link', 'reset-mfa'],
  group: ['create', 'delete', 'add', 'remove', 'list'],
  resource: ['create', 'list', 'delete'],
  // `site rule` takes its verb as an argument: `latchkey site rule add HOST`.
  site: ['create', 'rule', 'list', 'delete'],
  keys: ['list', 'rotate', 'remove'],
  provider: ['create', 'list', 'update', 'delete'],
  apply: [],
  export: [],
  audit: [],
  'setup-link': [],
  migrate: [],
  backup: [],
  healthcheck: [],
}
const paths = Object.entries(COMMANDS).flatMap(([name, subs]) => (subs.length ? [[name], ...subs.map((s) => [name, s])] : [[name]]))
/** Every command that runs (not a group's help): `client create`, `status`… */
const leaves = Object.entries(COMMANDS).flatMap(([name, subs]) => (subs.length ? subs.map((s) => `${name} ${s}`) : [name]))

describe('latchkey COMMAND --help', () => {
  test('this file knows every command and subcommand the CLI has (as its own help lists them)', () => {
    const help = (args: string[]) => cli(args, { env: { DATABASE_URL: '' } }).out
    const names = [...new Set([...help(['--help']).matchAll(/^  latchkey ([a-z][a-z-]*)/gm)].map((m) => m[1]!))]
    const table = Object.fromEntries(names.map((name) => {
      const own = help([name, '--help'])
      // A group's help lists its commands; a command's shows its usage.
      const subs = own.includes('\nCommands:\n') ? [...own.matchAll(new RegExp(`^  latchkey ${name} ([a-z][a-z-]*)`, 'gm'))].map((m) => m[1]!) : []
      return [name, [...new Set(subs)]]
    }))
    expect(table).toEqual(COMMANDS)
  })

  test('every command and subcommand prints its usage with an example, exits 0 and touches no database', () => {
    const empty = join(dir, 'help')
    mkdirSync(empty)
    const top = cli(['--help'], { cwd: empty, env: { DATABASE_URL: '' } })
    expect({ code: top.code, err: top.err }).toEqual({ code: 0, err: '' })
    for (const path of paths) {
      for (const args of [[...path, '--help'], [...path, '-h'], ['help', ...path]]) {
        const r = cli(args, { cwd: empty, env: { DATABASE_URL: '' } })
        expect({ args, code: r.code, err: r.err }).toEqual({ args, code: 0, err: '' })
        expect(r.out).toStartWith(`latchkey ${path.join(' ')} — `)
        expect(r.out).toMatch(new RegExp(`\\n(Examples?:)\\n  latchkey ${path.join(' ')}[ \\n]`))
      }
      // The top-level help is made from the same descriptions: every command has its line there.
      if (path.length === 2 || COMMANDS[path[0]!]!.length === 0) expect(top.out).toContain(`\n  latchkey ${path.join(' ')}`)
    }
    // A subcommand's help shows its options; --help wins over anything else given.
    const create = cli(['client', 'create', '--name', 'X', '--help'], { cwd: empty, env: { DATABASE_URL: '' } })
    expect(create.out).toContain('Usage: latchkey client create --name NAME [options]\n')
    for (const option of ['--redirect-uri URL...', '--grant GRANT...', '--allowed-scope SCOPE...', '--require-par', '--post-logout-redirect-uri URL...', '--public', '--skip-consent', '--require-mfa', '--allowed-group NAME...', '--id-token-alg RS256|ES256|EdDSA', '--json'])
      expect(create.out).toContain(`\n  ${option} `)
    // client update takes every option of client create but --public (an app stays public or confidential).
    const optionsOf = (args: string[]) => [...cli([...args, '--help'], { cwd: empty, env: { DATABASE_URL: '' } }).out.matchAll(/^  (--[a-z-]+)/gm)].map((m) => m[1]!)
    const updatable = optionsOf(['client', 'update'])
    expect(optionsOf(['client', 'create']).filter((o) => o !== '--public' && !updatable.includes(o))).toEqual([])
    const update = cli(['client', 'update', '--help'], { cwd: empty, env: { DATABASE_URL: '' } }).out
    for (const option of ['--name NAME', '--redirect-uri URL...', '--add-redirect-uri URL...', '--remove-redirect-uri URL...', '--post-logout-redirect-uri URL...', '--skip-consent true|false', '--require-mfa true|false', '--allowed-group NAME...', '--id-token-alg', '--grant GRANT...', '--allowed-scope SCOPE...', '--require-par true|false'])
      expect(update).toContain(`\n  ${option} `)
    expect(readdirSync(empty)).toEqual([])
    // Three spellings of help for each of ~50 commands: ~150 processes.
  }, 240_000)

  test('an unknown command, subcommand or option: exit 2, one line naming it and the --help to read; nothing made', () => {
    const empty = join(dir, 'unknown')
    mkdirSync(empty)
    const lines: Array<[string[], string]> = [
      [['frobnicate'], 'latchkey: unknown command "frobnicate"; see latchkey --help\n'],
      [['--frob'], 'latchkey: unknown option --frob; see latchkey --help\n'],
      [['client', 'frob'], 'latchkey: unknown command "frob" for "client" (create, update, list, delete, rotate-secret, registration-token); see latchkey client --help\n'],
      [['client'], 'latchkey: "client" needs a command (create, update, list, delete, rotate-secret, registration-token); see latchkey client --help\n'],
      [['client', 'create', '--nmae', 'X'], 'latchkey: unknown option --nmae for "client create"; see latchkey client create --help\n'],
      [['user', 'list', '--yaml'], 'latchkey: unknown option --yaml for "user list"; see latchkey user list --help\n'],
      [['user', 'list', 'extra'], 'latchkey: unexpected argument "extra" for "user list"; see latchkey user list --help\n'],
      [['audit', '--user'], 'latchkey: option --user needs a value for "audit"; see latchkey audit --help\n'],
      [['migrate', '--json=yes'], 'latchkey: option --json takes no value for "migrate"; see latchkey migrate --help\n'],
    ]
    for (const [args, err] of lines) expect({ args, ...cli(args, { cwd: empty, env: { DATABASE_URL: '' } }) }).toEqual({ args, code: 2, out: '', err })
    expect(readdirSync(empty)).toEqual([])
  })
})

describe('commands other than serve and migrate never create a database', () => {
  test("every command, run as its own help's first example on a path with no database: exit 2 naming the path, nothing made", () => {
    const empty = join(dir, 'examples')
    mkdirSync(empty)
    const none = 'latchkey: no database at ./data/latchkey.sqlite; start the server (latchkey serve) or pass --database-url\n'
    const words = (line: string) => (line.match(/'[^']*'|"[^"]*"|\S+/g) ?? []).map((w) => w.replace(/^(['"])(.*)\1$/, '$2'))
    // serve and migrate make it; healthcheck asks a server, not the database.
    for (const leaf of leaves.filter((c) => !['serve', 'migrate', 'healthcheck'].includes(c))) {
      const help = cli([...leaf.split(' '), '--help'], { cwd: empty, env: { DATABASE_URL: '' } }).out
      // The shell's part (`< password.txt`, `| …`) is not the command's.
      const example = words(help.slice(help.search(/\nExamples?:\n/)).split('\n')[2]!.replace(/^  latchkey /, '').replace(/\s*[<>|].*$/, ''))
      const r = cli(example, { cwd: empty, env: { DATABASE_URL: '' } })
      // apply reads its file first, and there is none here either.
      const expected = leaf === 'apply' ? { code: 2, out: '', err: `latchkey: cannot read ${example[1]}\n` } : { code: 2, out: '', err: none }
      expect({ example, ...r }).toEqual({ example, ...expected })
    }
    expect(readdirSync(empty)).toEqual([])
  }, 240_000)

  // A SQLite path on either engine's run: DATABASE_URL is set per command here.
  test('on a SQLite path with no file: exit 2, one line naming the path, no file and no folder made', () => {
    const empty = join(dir, 'empty')
    mkdirSync(empty)
    const none = 'latchkey: no database at ./data/latchkey.sqlite; start the server (latchkey serve) or pass --database-url\n'
    for (const args of [['user', 'list'], ['user', 'create', '--email', 'a@example.com', '--name', 'A', '--password-stdin'], ['client', 'create', '--name', 'X', '--redirect-uri', 'https://x.example/cb'], ['status'], ['keys', 'list', '--json'], ['export'], ['group', 'create', 'family']])
      expect({ args, ...cli(args, { cwd: empty, env: { DATABASE_URL: '' } }) }).toEqual({ args, code: 2, out: '', err: none })
    expect(cli(['--database-url', 'elsewhere/db.sqlite', 'audit'], { cwd: empty })).toEqual({
      code: 2,
      out: '',
      err: 'latchkey: no database at elsewhere/db.sqlite; start the server (latchkey serve) or pass --database-url\n',
    })
    expect(readdirSync(empty)).toEqual([])
    // migrate makes it; then the others work.
    expect(cli(['migrate'], { cwd: empty, env: { DATABASE_URL: '' } }).code).toBe(0)
    expect(cli(['user', 'list'], { cwd: empty, env: { DATABASE_URL: '' } })).toEqual({ code: 0, out: 'no users\n', err: '' })
  })
})

describe('the operator’s day, with --json', () => {
  let ann = { id: '', email: '' }
  let app = ''

  test('migrate --json; every command’s --json prints exactly one JSON value', () => {
    expect(json<{ applied: string[] }>(['migrate']).applied.length).toBeGreaterThan(0)
    expect(json(['migrate'])).toEqual({ applied: [] })
    expect(json(['--version'])).toEqual({ version: pkg.version })
    const user = json<{ id: string; email: string }>(['user', 'create', '--email', 'ann@example.com', '--name', 'Ann', '--password-stdin'], { stdin: 'a long password\n' })
    ann = { id: user.id, email: user.email }
    const made = json<{ client_id: string; client_secret: string }>(['client', 'create', '--name', 'Notes', '--redirect-uri', 'https://n.example/cb'])
    app = made.client_id
    expect(made.client_secret).toStartWith('lk_cs_')
    expect(json(['group', 'create', 'family'])).toEqual({ name: 'family', members: [] })
    expect(json(['group', 'add', 'family', 'ann@example.com'])).toEqual({ group: 'family', user: ann, member: true, changed: true })
    expect(json<unknown>(['group', 'list'])).toEqual([{ name: 'family', members: [ann] }])
    expect(json(['resource', 'create', '--uri', 'https://mcp.example.com', '--name', 'MCP', '--scope', 'tools:read=Read'])).toMatchObject({ uri: 'https://mcp.example.com' })
    expect(json(['resource', 'delete', 'https://mcp.example.com'])).toEqual({ uri: 'https://mcp.example.com', deleted: true })
    expect(json<unknown[]>(['keys', 'list']).length).toBeGreaterThan(0)
    expect(json(['client', 'rotate-secret', app])).toMatchObject({ client_id: app })
    expect(json(['client', 'registration-token'])).toHaveProperty('initial_access_token')
    expect(json(['export'])).toHaveProperty('clients')
    expect(json<unknown[]>(['audit']).length).toBeGreaterThan(0)
    const invited = json(['user', 'invite', '--email', 'bo@example.com', '--name', 'Bo'])
    expect(invited).toMatchObject({ email: 'bo@example.com', mailed: false })
    expect(invited.invite_url).toMatch(/\/reset-password\?token=[A-Za-z0-9_-]{43}$/)
    expect(json(['user', 'delete', 'bo@example.com'])).toEqual({ id: invited.id, email: 'bo@example.com', deleted: true })
    const file = join(dir, 'apply.yaml')
    writeFileSync(file, 'groups:\n  - name: friends\n')
    expect(json(['apply', file, '--dry-run'])).toEqual({ changes: ['+ group friends'], applied: false, dry_run: true, output: [] })
    expect(json(['apply', file])).toEqual({ changes: ['+ group friends'], applied: true, dry_run: false, output: [] })
    expect(json(['apply', file])).toEqual({ changes: [], applied: false, dry_run: false, output: [] })
    expect(json(['group', 'delete', 'friends'])).toEqual({ name: 'friends', deleted: true })
    if (testEngine === 'sqlite') expect(json(['backup', join(dir, 'copy.sqlite')])).toEqual({ path: join(dir, 'copy.sqlite') })
  })

  test('users are named by id or email: user update, reset-link, reset-mfa, delete, group add|remove, audit --user', () => {
    expect(json(['user', 'update', 'ANN@example.com', '--admin', 'true'])).toMatchObject({ id: ann.id, admin: true })
    const link = json(['user', 'reset-link', 'ann@example.com'])
    expect(link).toMatchObject({ id: ann.id, email: ann.email })
    expect(link.reset_url).toMatch(/\/reset-password\?token=/)
    expect(json(['user', 'reset-mfa', 'ann@example.com'])).toEqual({ id: ann.id, email: ann.email, two_step_reset: true })
    const byEmail = json<Array<{ user_id: string }>>(['audit', '--user', 'ann@example.com'])
    expect(byEmail.length).toBeGreaterThan(0)
    expect(byEmail.every((e) => e.user_id === ann.id)).toBe(true)
    expect(byEmail).toEqual(json(['audit', '--user', ann.id]))
    for (const args of [['user', 'update', 'nobody@example.com', '--admin', 'true'], ['user', 'reset-link', 'nobody@example.com'], ['user', 'reset-mfa', 'nobody@example.com'], ['user', 'delete', 'nobody@example.com'], ['audit', '--user', 'nobody@example.com']])
      expect({ args, ...cli(args) }).toMatchObject({ args, code: 2, out: '' })
    expect(cli(['user', 'delete', 'nobody@example.com']).err).toBe('latchkey: no user "nobody@example.com"\n')
  })

  test('a change that changes nothing says so and records nothing', () => {
    const before = events().length
    expect(cli(['group', 'add', 'family', 'ann@example.com'])).toEqual({ code: 0, out: 'nothing to change: ann@example.com is in family already\n', err: '' })
    expect(json(['group', 'add', 'family', ann.id])).toEqual({ group: 'family', user: ann, member: true, changed: false })
    expect(cli(['user', 'update', ann.email, '--admin', 'true', '--disabled', 'false'])).toEqual({ code: 0, out: 'nothing to change: ann@example.com is an admin and enabled already\n', err: '' })
    expect(cli(['client', 'update', app, '--name', 'Notes', '--redirect-uri', 'https://n.example/cb', '--skip-consent', 'false', '--allowed-group', 'none'])).toEqual({
      code: 0,
      out: `nothing to change: client ${app} already has these options\n`,
      err: '',
    })
    expect(cli(['client', 'update', app, '--add-redirect-uri', 'https://n.example/cb'])).toMatchObject({ code: 0, out: `nothing to change: client ${app} already has these options\n` })
    const quiet = cli(['client', 'update', app, '--require-mfa', 'false', '--json'])
    expect(JSON.parse(quiet.out)).toMatchObject({ client_id: app, require_mfa: false })
    expect(quiet.err).toBe(`latchkey: nothing to change: client ${app} already has these options\n`)
    expect(events().length).toBe(before)
    // group remove of someone not in the group is the same; an unknown group is an error.
    expect(cli(['group', 'remove', 'family', ann.email])).toEqual({ code: 0, out: 'removed ann@example.com from family\n', err: '' })
    expect(cli(['group', 'remove', 'family', ann.email])).toEqual({ code: 0, out: 'nothing to change: ann@example.com is not in family\n', err: '' })
    expect(cli(['group', 'remove', 'ghosts', ann.email])).toEqual({ code: 2, out: '', err: 'latchkey: no group named "ghosts"\n' })
    expect(events().length).toBe(before + 1)
  })

  test('client update takes every option of client create; --redirect-uri replaces, --add/--remove-redirect-uri edit, --allowed-group none opens the app', () => {
    const updated = json(['client', 'update', app, '--name', 'Notes 2', '--redirect-uri', 'https://n.example/a', '--redirect-uri', 'https://n.example/b', '--post-logout-redirect-uri', 'https://n.example/bye', '--skip-consent', 'true', '--require-mfa', 'true', '--allowed-group', 'family', '--id-token-alg', 'ES256'])
    expect(updated).toEqual({
      client_id: app,
      name: 'Notes 2',
      redirect_uris: ['https://n.example/a', 'https://n.example/b'],
      post_logout_redirect_uris: ['https://n.example/bye'],
      public: false,
      skip_consent: true,
      require_mfa: true,
      id_token_signed_response_alg: 'ES256',
      allowed_groups: ['family'],
      introspects: [],
      grant_types: ['authorization_code'],
      allowed_scopes: [],
      require_pushed_authorization_requests: false,
      token_endpoint_auth_method: 'client_secret_basic',
      jwks_uri: null,
    })
    const last = events()[0]!
    expect(last).toMatchObject({ kind: 'client.updated', client_id: app, detail: { actor: 'cli', changed: 'name redirect_uris post_logout_redirect_uris skip_consent require_mfa id_token_signed_response_alg allowed_groups' } })
    expect(json(['client', 'update', app, '--add-redirect-uri', 'https://n.example/c', '--remove-redirect-uri', 'https://n.example/a'])).toMatchObject({ redirect_uris: ['https://n.example/b', 'https://n.example/c'] })
    expect(json(['client', 'update', app, '--post-logout-redirect-uri', 'none', '--allowed-group', 'none'])).toMatchObject({ post_logout_redirect_uris: [], allowed_groups: [] })
    // client list shows the allowed groups.
    expect(json(['client', 'update', app, '--allowed-group', 'family'])).toMatchObject({ allowed_groups: ['family'] })
    const table = cli(['client', 'list']).out.split('\n')
    expect(table[0]).toContain('allowed_groups')
    expect(table.find((l) => l.startsWith(app))).toMatch(/\sfamily\s/)
    // Bad input: one line, and nothing changed.
    const before = json(['client', 'list'])
    const bad: Array<[string[], string]> = [
      [['--remove-redirect-uri', 'https://n.example/x'], `latchkey: https://n.example/x is not a redirect URI of client ${app}\n`],
      [['--remove-redirect-uri', 'https://n.example/b', '--remove-redirect-uri', 'https://n.example/c'], 'latchkey: at least one --redirect-uri is required\n'],
      [['--name', 'New', '--allowed-group', 'ghosts'], 'latchkey: no group named "ghosts" (create it first: latchkey group create ghosts)\n'],
      [['--allowed-group', 'none', '--allowed-group', 'family'], 'latchkey: --allowed-group none opens the app to every user; give it alone\n'],
      [['--skip-consent', 'yes'], 'latchkey: --skip-consent must be true or false\n'],
      [['--redirect-uri', 'https://n.example/#f'], 'latchkey: redirect URI "https://n.example/#f" must not have a fragment\n'],
      [['--public'], `latchkey: unknown option --public for "client update"; see latchkey client update --help\n`],
      [[], 'latchkey: client update needs an option to change; see latchkey client update --help\n'],
    ]
    for (const [args, err] of bad) expect({ args, ...cli(['client', 'update', app, ...args]) }).toEqual({ args, code: 2, out: '', err })
    expect(cli(['group', 'create', 'none'])).toEqual({ code: 2, out: '', err: 'latchkey: a group cannot be named "none" (--allowed-group none means every user)\n' })
    expect(json(['client', 'list'])).toEqual(before)
    expect(cli(['client', 'update', 'nope', '--name', 'X'])).toEqual({ code: 2, out: '', err: 'latchkey: no client with id "nope"\n' })
    expect(json(['client', 'delete', app])).toEqual({ client_id: app, deleted: true })
  })

  test('status: the database, the recorded and configured ISSUER, the version, counts, and whether a server serves it', async () => {
    const location = testEngine === 'postgres' ? databaseUrl.replace(/:[^:@/]*@/, ':***@') : databaseUrl
    const quiet = json(['status'], { env: { PORT: '1' } })
    expect(quiet).toEqual({
      version: pkg.version,
      database: { engine: testEngine, location },
      issuer: { configured: 'http://localhost:1', recorded: null },
      counts: { users: 1, apps: 0, groups: 1, active_sessions: 0 },
      server: { serving: false, answered: [], tried: ['http://127.0.0.1:1/healthz'] },
    })
    const text = cli(['status'], { env: { PORT: '1' } })
    expect(text.code).toBe(0)
    expect(text.out).toContain(`\nISSUER configured  http://localhost:1\n`)
    expect(text.out).toContain(`\nserver             no server answers (tried http://127.0.0.1:1/healthz)\n`)

    // A server on this database, at its own ISSUER: the recorded ISSUER's /healthz answers.
    const port = await freePort()
    const issuer = `http://127.0.0.1:${port}`
    const running = await startServer(loadConfig({ DATABASE_URL: databaseUrl, HOST: '127.0.0.1', PORT: String(port), ISSUER: issuer }), createLogger('error', () => {}))
    try {
      const asked = await cliAsync(['status', '--json'], { PORT: '1' })
      expect({ code: asked.code, err: asked.err }).toEqual({ code: 0, err: '' })
      const serving = JSON.parse(asked.out) as Record<string, unknown>
      expect(serving.issuer).toEqual({ configured: 'http://localhost:1', recorded: issuer })
      expect(serving.server).toEqual({ serving: true, answered: [`${issuer}/healthz`], tried: [`${issuer}/healthz`, 'http://127.0.0.1:1/healthz'] })
      const shown = (await cliAsync(['status'], { PORT: '1' })).out
      expect(shown).toStartWith(`version            ${pkg.version}\ndatabase           ${location} (${testEngine === 'postgres' ? 'PostgreSQL' : 'SQLite'})\nISSUER recorded    ${issuer} (the server last started with it; links use it)\n`)
      expect(shown).toContain(`\nusers              1\napps               0\ngroups             1\nactive sessions    0\nserver             serving: ${issuer}/healthz answered 200\n`)
      expect(JSON.parse((await cliAsync(['healthcheck', '--json'], { PORT: String(port) })).out)).toEqual({ status: 'ok', url: `${issuer}/healthz` })
    } finally {
      await running.stop()
    }
  })
})

describe('--password-stdin on a terminal', () => {
  test('prompts "Password: " and reads one line without echoing it', async () => {
    // script(1) gives the command a terminal; what it writes there comes back on stdout.
    const command = `bun ${entry} user create --email tty@example.com --name Tty --password-stdin`
    const proc = Bun.spawn(['script', '-qec', command, '/dev/null'], {
      env: { PATH: process.env.PATH!, HOME: dir, DATABASE_URL: databaseUrl, LOG_LEVEL: 'error', TERM: 'dumb' },
      cwd: dir,
      stdin: 'pipe',
      stdout: 'pipe',
    })
    const reader = proc.stdout.getReader()
    let seen = ''
    while (!seen.includes('Password: ')) {
      const { value, done } = await reader.read()
      if (done) break
      seen += new TextDecoder().decode(value)
    }
    expect(seen).toBe('Password: ')
    proc.stdin.write('a secret tty password\r')
    await proc.stdin.flush()
    while (true) {
      const { value, done } = await reader.read()
      if (done) break
      seen += new TextDecoder().decode(value)
    }
    expect(await proc.exited).toBe(0)
    expect(seen).not.toContain('a secret tty password')
    expect(JSON.parse(seen.slice(seen.indexOf('{')).replaceAll('\r\n', '\n'))).toMatchObject({ email: 'tty@example.com', full_name: 'Tty' })
    expect(json<Array<{ email: string }>>(['user', 'list']).map((u) => u.email)).toContain('tty@example.com')
  })
})

describe('--json on every command', () => {
  test('the rest of the table with --json (sites, keys, setup-link); then every command has printed one JSON value in this file', () => {
    expect(json(['site', 'create', '--host', 'photos.example.com', '--name', 'Photos'])).toMatchObject({ host: 'photos.example.com' })
    expect(json(['site', 'rule', 'add', 'photos.example.com', '--path', '^/public/', '--policy', 'bypass'])).toMatchObject({ paths: ['^/public/'], policy: 'bypass' })
    expect(json<unknown[]>(['site', 'list']).length).toBe(1)
    expect(json(['site', 'delete', 'photos.example.com'])).toMatchObject({ host: 'photos.example.com', deleted: true })
    expect(json<unknown[]>(['resource', 'list'])).toEqual([])
    json(['group', 'add', 'family', 'ann@example.com'])
    expect(json(['group', 'remove', 'family', 'ann@example.com'])).toMatchObject({ group: 'family', member: false, changed: true })
    // rotate says on stderr when the published next key starts signing; stdout is the one JSON value.
    const rotate = cli(['keys', 'rotate', '--json'])
    expect(rotate.code).toBe(0)
    const rotated = JSON.parse(rotate.out) as { kid: string }
    ranWithJson.add('keys rotate')
    const spare = json<Array<{ kid: string; current: boolean }>>(['keys', 'list']).find((k) => !k.current && k.kid !== rotated.kid)!
    expect(json(['keys', 'remove', spare.kid])).toEqual({ kid: spare.kid, removed: true })
    // Upstream providers: a GitHub one (no discovery document to fetch), its secret in a file only its owner reads.
    const secretFile = join(dir, 'github-secret')
    writeFileSync(secretFile, 'gh-secret\n', { mode: 0o600 })
    expect(json(['provider', 'create', '--kind', 'github', '--name', 'GitHub', '--client-id', 'Iv1.abc', '--client-secret-file', secretFile])).toMatchObject({ id: 'github', kind: 'github' })
    expect(json<Array<{ id: string }>>(['provider', 'list']).map((p) => p.id)).toContain('github')
    expect(json(['provider', 'update', 'github', '--name', 'GitHub (work)'])).toMatchObject({ name: 'GitHub (work)' })
    expect(json(['provider', 'delete', 'github'])).toMatchObject({ id: 'github' })
    // A setup link only while no admin exists: a database of its own.
    const fresh = testEngine === 'sqlite' ? join(dir, 'fresh.sqlite') : databaseUrl
    if (testEngine === 'sqlite') {
      expect(cli(['migrate'], { env: { DATABASE_URL: fresh } }).code).toBe(0)
      expect(json<{ url: string }>(['setup-link'], { env: { DATABASE_URL: fresh } }).url).toMatch(/\/setup\?token=[A-Za-z0-9_-]+$/)
    } else {
      for (const u of json<Array<{ id: string; admin: boolean }>>(['user', 'list'])) if (u.admin) json(['user', 'update', u.id, '--admin', 'false'])
      expect(json<{ url: string }>(['setup-link']).url).toMatch(/\/setup\?token=[A-Za-z0-9_-]+$/)
    }
    // serve runs until stopped (its log lines are JSON already); backup is SQLite's (PostgreSQL: pg_dump).
    const exempt = ['serve', ...(testEngine === 'postgres' ? ['backup'] : [])]
    expect(leaves.filter((c) => !exempt.includes(c) && !ranWithJson.has(c))).toEqual([])
  })
})
