import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pkg from '../../package.json'
import { insertUser } from '../../src/accounts/users'
import { SqliteStore } from '../../src/db/sqlite/store'
import { freshPgDatabase } from '../pg-store'
import { testEngine } from '../store'
import { binary, startBinary } from './server'

setDefaultTimeout(30_000)

/** Every CLI command of SPEC, run by the compiled binary alone in an empty folder. */
let dir: string
let bin: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'latchkey-clibin-'))
  bin = join(dir, 'latchkey')
  copyFileSync(await binary(), bin)
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function run(args: string[], stdin?: string, env: Record<string, string> = {}) {
  const r = Bun.spawnSync([bin, ...args], {
    cwd: dir,
    env: { PATH: '', HOME: dir, ...env },
    stdin: stdin === undefined ? 'ignore' : new TextEncoder().encode(stdin),
  })
  return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() }
}

describe('the binary’s CLI', () => {
  test('every command of SPEC, from an empty folder', () => {
    expect(run(['--version'])).toEqual({ code: 0, out: `latchkey ${pkg.version}\n`, err: '' })
    expect(run(['--help']).out).toContain('latchkey user create --email EMAIL --name NAME --password-stdin')
    expect(run(['migrate']).code).toBe(0)
    expect(existsSync(join(dir, 'data/latchkey.sqlite'))).toBe(true)

    const created = JSON.parse(run(['client', 'create', '--name', 'Bin', '--redirect-uri', 'https://b.example/cb']).out)
    expect(created.client_secret).toStartWith('lk_cs_')
    expect(run(['client', 'list']).out).toContain(created.client_id)
    expect(JSON.parse(run(['client', 'list', '--json']).out)).toEqual([
      { client_id: created.client_id, name: 'Bin', redirect_uris: ['https://b.example/cb'], post_logout_redirect_uris: [], public: false, skip_consent: false, require_mfa: false, id_token_signed_response_alg: 'RS256', allowed_groups: [], introspects: [], grant_types: ['authorization_code'], allowed_scopes: [], require_pushed_authorization_requests: false, token_endpoint_auth_method: 'client_secret_basic', jwks_uri: null },
    ])
    const rotated = JSON.parse(run(['client', 'rotate-secret', created.client_id]).out)
    expect(rotated.client_secret).not.toBe(created.client_secret)

    const user = JSON.parse(run(['user', 'create', '--email', 'b@example.com', '--name', 'Bea', '--password-stdin'], 'binary password\n').out)
    expect(run(['user', 'list']).out).toContain('b@example.com')
    expect(JSON.parse(run(['user', 'list', '--json']).out)).toEqual([{ ...user, disabled: false, mfa: { totp: false, passkeys: 0 } }])

    expect(run(['backup', 'copy.sqlite']).code).toBe(0)
    expect(existsSync(join(dir, 'copy.sqlite'))).toBe(true)

    expect(run(['user', 'delete', user.id]).code).toBe(0)
    expect(run(['client', 'delete', created.client_id]).code).toBe(0)
    expect(JSON.parse(run(['client', 'list', '--json']).out)).toEqual([])

    const bad = run(['client', 'delete', 'nope'])
    expect(bad.code).toBe(2)
    expect(bad.err).toBe('latchkey: no client with id "nope"\n')
  })

  test('serving on a port already taken: exit 1 and one line saying so', () => {
    expect(run(['migrate']).code).toBe(0)
    const taken = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
    try {
      const r = run(['serve'], undefined, { HOST: '127.0.0.1', PORT: String(taken.port) })
      expect(r).toEqual({
        code: 1,
        out: '',
        err: `latchkey: cannot listen on 127.0.0.1:${taken.port}: the address is already in use (another process listens there; set PORT)\n`,
      })
    } finally {
      taken.stop(true)
    }
  })

  test('a reader that stops early (| head) ends the listing quietly: no stack, exit 0', async () => {
    const path = join(dir, 'many.sqlite')
    const { store } = await SqliteStore.open(path)
    // ~170 KB of JSON: more than a pipe holds, so the writes after head has left fail with EPIPE.
    for (let i = 0; i < 1500; i++) await insertUser(store, { email: `u${i}@example.com`, fullName: `User ${i}`, avatarUrl: null, passwordHash: 'h' }, 0)
    await store.close()
    for (const args of [['user', 'list', '--json'], ['user', 'list']]) {
      const r = Bun.spawnSync(['sh', '-c', '"$0" "$@" | head -c 10 >/dev/null', bin, ...args], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '', HOME: dir, DATABASE_URL: path },
      })
      expect(r.stderr.toString()).toBe('')
    }
    const piped = Bun.spawn([bin, 'user', 'list', '--json'], { cwd: dir, env: { PATH: '', HOME: dir, DATABASE_URL: path }, stdout: 'pipe', stderr: 'pipe' })
    const reader = piped.stdout.getReader()
    expect((await reader.read()).done).toBe(false)
    await reader.cancel()
    expect(await piped.exited).toBe(0)
    expect(await new Response(piped.stderr).text()).toBe('')
  })
})

describe('the binary in a folder with no database', () => {
  test('latchkey user list: exit 2, one line naming the path; no data/ folder made. --help works there', () => {
    const empty = mkdtempSync(join(tmpdir(), 'latchkey-empty-'))
    try {
      const inEmpty = (args: string[]) => {
        const r = Bun.spawnSync([bin, ...args], { cwd: empty, env: { PATH: '', HOME: empty }, stdin: 'ignore' })
        return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() }
      }
      expect(inEmpty(['user', 'list'])).toEqual({ code: 2, out: '', err: 'latchkey: no database at ./data/latchkey.sqlite; start the server (latchkey serve) or pass --database-url\n' })
      const help = inEmpty(['user', 'list', '--help'])
      expect({ code: help.code, err: help.err }).toEqual({ code: 0, err: '' })
      expect(help.out).toStartWith('latchkey user list — ')
      expect(inEmpty(['client', 'create', '--nmae', 'X'])).toEqual({ code: 2, out: '', err: 'latchkey: unknown option --nmae for "client create"; see latchkey client create --help\n' })
      expect(readdirSync(empty)).toEqual([])
    } finally {
      rmSync(empty, { recursive: true, force: true })
    }
  })
})

describe('links made by the binary’s CLI', () => {
  test('an invitation from a shell without ISSUER names the ISSUER the server started with', async () => {
    // The public address a proxy serves it at (not where it listens).
    const issuer = 'http://id.example.test:8443'
    const server = await startBinary({ ISSUER: issuer })
    try {
      // The server records its ISSUER once it listens, before its "listening" line.
      while (!server.output().includes('"msg":"listening"')) await Bun.sleep(10)
      const env = { DATABASE_URL: server.databaseUrl }
      const invited = run(['user', 'invite', '--email', 'ann@example.com', '--name', 'Ann'], undefined, env)
      expect({ code: invited.code, err: invited.err }).toEqual({ code: 0, err: '' })
      expect(invited.out).toMatch(/^http:\/\/id\.example\.test:8443\/reset-password\?token=[A-Za-z0-9_-]{43}\n$/)
      const shell = run(['user', 'invite', '--email', 'bo@example.com', '--name', 'Bo'], undefined, { ...env, ISSUER: 'http://localhost:3000' })
      expect(shell.out).toStartWith(`${issuer}/reset-password?token=`)
      expect(shell.err).toBe(`latchkey: warning: ISSUER is http://localhost:3000 here, but the server last started with ${issuer}: links use ${issuer}\n`)
    } finally {
      server.cleanup()
    }
  })
})

describe('the binary with PostgreSQL', () => {
  test('an unreachable database at start: exit 1, one line naming DATABASE_URL, never the password', () => {
    const started = performance.now()
    const r = run(['migrate'], undefined, { DATABASE_URL: 'postgres://latchkey:s3cret-pw@127.0.0.1:1/latchkey' })
    expect(r.code).toBe(1)
    expect(r.err.trim().split('\n')).toHaveLength(1)
    expect(r.err).toStartWith('latchkey: cannot reach the database at DATABASE_URL (postgres://latchkey:***@127.0.0.1:1/latchkey)')
    expect(r.err + r.out).not.toContain('s3cret-pw')
    expect(performance.now() - started).toBeLessThan(10_000)
  })

  test.skipIf(testEngine !== 'postgres')('every command of SPEC against PostgreSQL; backup points to pg_dump', async () => {
    const env = { DATABASE_URL: await freshPgDatabase() }
    const { embeddedMigrations } = await import('../../src/db/pg/migrate')
    expect(run(['migrate'], undefined, env).out).toBe(`applied ${Object.keys(embeddedMigrations).join(', ')}\n`)
    expect(run(['migrate'], undefined, env).out).toBe('database is up to date\n')
    const created = JSON.parse(run(['client', 'create', '--name', 'Bin', '--redirect-uri', 'https://b.example/cb'], undefined, env).out)
    expect(JSON.parse(run(['client', 'list', '--json'], undefined, env).out)).toEqual([
      { client_id: created.client_id, name: 'Bin', redirect_uris: ['https://b.example/cb'], post_logout_redirect_uris: [], public: false, skip_consent: false, require_mfa: false, id_token_signed_response_alg: 'RS256', allowed_groups: [], introspects: [], grant_types: ['authorization_code'], allowed_scopes: [], require_pushed_authorization_requests: false, token_endpoint_auth_method: 'client_secret_basic', jwks_uri: null },
    ])
    expect(JSON.parse(run(['client', 'rotate-secret', created.client_id], undefined, env).out).client_secret).toStartWith('lk_cs_')
    const user = JSON.parse(run(['user', 'create', '--email', 'b@example.com', '--name', 'Bea', '--password-stdin'], 'binary password\n', env).out)
    expect(JSON.parse(run(['user', 'list', '--json'], undefined, env).out)).toEqual([{ ...user, disabled: false, mfa: { totp: false, passkeys: 0 } }])
    expect(run(['user', 'create', '--email', 'B@example.com', '--name', 'Bea', '--password-stdin'], 'binary password\n', env).code).toBe(2)
    const backup = run(['backup', 'copy.sqlite'], undefined, env)
    expect(backup.code).toBe(2)
    expect(backup.err).toContain('pg_dump')
    expect(run(['user', 'delete', user.id], undefined, env).code).toBe(0)
    expect(run(['client', 'delete', created.client_id], undefined, env).code).toBe(0)
    expect(JSON.parse(run(['client', 'list', '--json'], undefined, env).out)).toEqual([])
  })
})

describe('the audit log, by the binary (issue 33)', () => {
  test('a change, then latchkey audit at once: its event is there (reset links, key removal, registration tokens included)', async () => {
    const env = { DATABASE_URL: testEngine === 'postgres' ? await freshPgDatabase() : join(dir, 'audit.sqlite') }
    expect(run(['migrate'], undefined, env).code).toBe(0)
    const newest = () => JSON.parse(run(['audit', '--json'], undefined, env).out)[0] as { kind: string; user_id: string | null; detail: Record<string, unknown> }
    const user = JSON.parse(run(['user', 'create', '--email', 'au@example.com', '--name', 'Au', '--password-stdin'], 'binary password\n', env).out) as { id: string }
    expect(newest()).toMatchObject({ kind: 'user.created', user_id: user.id })
    const link = run(['user', 'reset-link', user.id], undefined, env).out.trim()
    expect(newest()).toMatchObject({ kind: 'user.reset_link_made', user_id: user.id, detail: { actor: 'cli' } })
    expect(run(['keys', 'rotate'], undefined, env).code).toBe(0)
    const spare = (JSON.parse(run(['keys', 'list', '--json'], undefined, env).out) as Array<{ kid: string; current: boolean; created_at: string }>).filter((k) => !k.current).sort((a, b) => b.created_at.localeCompare(a.created_at))[0]!
    expect(run(['keys', 'remove', spare.kid], undefined, env).code).toBe(0)
    expect(newest()).toMatchObject({ kind: 'key.removed', detail: { actor: 'cli', kid: spare.kid } })
    const token = JSON.parse(run(['client', 'registration-token'], undefined, env).out).initial_access_token as string
    expect(newest()).toMatchObject({ kind: 'registration_token.issued', user_id: null })
    const all = run(['audit', '--json'], undefined, env).out
    expect(all).not.toContain(new URL(link).searchParams.get('token')!)
    expect(all).not.toContain(token)
  })
})

describe('latchkey apply / export, by the binary', () => {
  test('apply twice: the second changes nothing; export | apply --dry-run plans nothing; an invalid file changes nothing', async () => {
    const env = { DATABASE_URL: testEngine === 'postgres' ? await freshPgDatabase() : join(dir, 'apply.sqlite') }
    const { writeFileSync } = await import('node:fs')
    writeFileSync(join(dir, 'grafana.secret'), 'grafana-secret-0123456789abcdef\n', { mode: 0o600 })
    const file = join(dir, 'latchkey.yaml')
    writeFileSync(
      file,
      [
        'clients:',
        '  - client_id: grafana',
        '    name: Grafana',
        '    redirect_uris: [https://grafana.example.com/login/generic_oauth]',
        '    allowed_groups: [family]',
        '    secret_file: grafana.secret',
        'groups:',
        '  - name: family',
        '    members: [ada@example.com]',
        'users:',
        '  - email: ada@example.com',
        '    full_name: Ada',
        '    admin: true',
        'resources:',
        '  - uri: https://mcp.example.com',
        '    name: Home MCP',
        '    scopes: { "tools:read": Read your tools }',
        '',
      ].join('\n'),
    )
    // apply changes a database; only serve and migrate make one (SPEC, CLI).
    if (testEngine !== 'postgres')
      expect(run(['apply', file], undefined, env)).toEqual({ code: 2, out: '', err: `latchkey: no database at ${env.DATABASE_URL}; start the server (latchkey serve) or pass --database-url\n` })
    expect(run(['migrate'], undefined, env).code).toBe(0)
    const first = run(['apply', file], undefined, env)
    expect(first.code).toBe(0)
    expect(first.out.split('\n').slice(0, 5)).toEqual(['+ group family', '+ user ada@example.com (invited)', '+ member ada@example.com of family', '+ client grafana', '+ resource https://mcp.example.com'])
    expect(first.out).toMatch(/^invitation for ada@example\.com: http:\/\/localhost:3000\/reset-password\?token=/m)
    expect(first.out).toEndWith('applied 5 change(s)\n')
    expect(run(['apply', file], undefined, env)).toEqual({ code: 0, out: 'nothing to change\n', err: '' })
    // export prints YAML (the README's shape), --json the same as JSON; either applies as a no-op.
    const exported = run(['export'], undefined, env)
    expect(exported.code).toBe(0)
    expect(exported.out).toStartWith('clients:\n  - client_id: grafana\n    name: Grafana\n    redirect_uris:\n      - https://grafana.example.com/login/generic_oauth\n')
    expect(exported.out).toContain('\nusers:\n  - email: ada@example.com\n    full_name: Ada\n    admin: true\n    disabled: false\n')
    expect(exported.out).not.toContain('grafana-secret')
    const json = run(['export', '--json'], undefined, env)
    expect(JSON.parse(json.out)).toEqual(Bun.YAML.parse(exported.out) as object)
    writeFileSync(join(dir, 'exported.yaml'), exported.out)
    expect(run(['apply', join(dir, 'exported.yaml'), '--dry-run'], undefined, env)).toEqual({ code: 0, out: 'nothing to change\n', err: '' })
    writeFileSync(join(dir, 'exported.json'), json.out)
    expect(run(['apply', join(dir, 'exported.json'), '--dry-run'], undefined, env)).toEqual({ code: 0, out: 'nothing to change\n', err: '' })
    writeFileSync(join(dir, 'bad.yaml'), 'clients:\n  - name: X\n    redirect_uris: []\ngroups:\n  - name: new-group\n')
    const bad = run(['apply', join(dir, 'bad.yaml')], undefined, env)
    expect(bad.code).toBe(2)
    expect(bad.err).toBe(`latchkey: clients[0].redirect_uris: must list at least one redirect URI\nlatchkey: ${join(dir, 'bad.yaml')}: 1 error(s); nothing changed\n`)
    expect(JSON.parse(run(['group', 'list', '--json'], undefined, env).out).map((g: { name: string }) => g.name)).toEqual(['family'])
    // --prune never deletes a group an app still allows: that would open the app to everyone.
    writeFileSync(join(dir, 'prune.yaml'), 'groups: []\n')
    expect(run(['apply', join(dir, 'prune.yaml'), '--prune'], undefined, env)).toEqual({
      code: 2,
      out: '',
      err: `latchkey: groups: family is absent, but the allowed_groups of grafana name it; pruning it would open those apps to everyone\nlatchkey: ${join(dir, 'prune.yaml')}: 1 error(s); nothing changed\n`,
    })
    expect(JSON.parse(run(['group', 'list', '--json'], undefined, env).out).map((g: { name: string }) => g.name)).toEqual(['family'])
  })
})
