import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pkg from '../../package.json'
import { insertUser } from '../../src/accounts/users'
import { SqliteStore } from '../../src/db/sqlite/store'
import { freshPgDatabase } from '../pg-store'
import { testEngine } from '../store'
import { binary } from './server'

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
    expect(run(['--help']).out).toContain('latchkey user create --email E --name N')
    expect(run(['migrate']).code).toBe(0)
    expect(existsSync(join(dir, 'data/latchkey.sqlite'))).toBe(true)

    const created = JSON.parse(run(['client', 'create', '--name', 'Bin', '--redirect-uri', 'https://b.example/cb']).out)
    expect(created.client_secret).toStartWith('lk_cs_')
    expect(run(['client', 'list']).out).toContain(created.client_id)
    expect(JSON.parse(run(['client', 'list', '--json']).out)).toEqual([
      { client_id: created.client_id, name: 'Bin', redirect_uris: ['https://b.example/cb'], post_logout_redirect_uris: [], public: false, skip_consent: false, require_mfa: false, id_token_signed_response_alg: 'RS256', allowed_groups: [] },
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
      { client_id: created.client_id, name: 'Bin', redirect_uris: ['https://b.example/cb'], post_logout_redirect_uris: [], public: false, skip_consent: false, require_mfa: false, id_token_signed_response_alg: 'RS256', allowed_groups: [] },
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
    const first = run(['apply', file], undefined, env)
    expect(first.code).toBe(0)
    expect(first.out.split('\n').slice(0, 5)).toEqual(['+ group family', '+ user ada@example.com (invited)', '+ member ada@example.com of family', '+ client grafana', '+ resource https://mcp.example.com'])
    expect(first.out).toMatch(/^invitation for ada@example\.com: http:\/\/localhost:3000\/reset-password\?token=/m)
    expect(first.out).toEndWith('applied 5 change(s)\n')
    expect(run(['apply', file], undefined, env)).toEqual({ code: 0, out: 'nothing to change\n', err: '' })
    const exported = run(['export'], undefined, env)
    expect(exported.code).toBe(0)
    expect(exported.out).not.toContain('grafana-secret')
    writeFileSync(join(dir, 'exported.json'), exported.out)
    expect(run(['apply', join(dir, 'exported.json'), '--dry-run'], undefined, env)).toEqual({ code: 0, out: 'nothing to change\n', err: '' })
    writeFileSync(join(dir, 'bad.yaml'), 'clients:\n  - name: X\n    redirect_uris: []\ngroups:\n  - name: new-group\n')
    const bad = run(['apply', join(dir, 'bad.yaml')], undefined, env)
    expect(bad.code).toBe(2)
    expect(bad.err).toBe(`latchkey: clients[0].redirect_uris: must list at least one redirect URI\nlatchkey: ${join(dir, 'bad.yaml')}: 1 error(s); nothing changed\n`)
    expect(JSON.parse(run(['group', 'list', '--json'], undefined, env).out).map((g: { name: string }) => g.name)).toEqual(['family'])
  })
})
