import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Database } from 'bun:sqlite'
import pkg from '../package.json'
import journal from '../drizzle/sqlite/meta/_journal.json'

// Spawns processes (and a browser): slower than in-process tests on a busy machine.
setDefaultTimeout(30_000)

const dir = mkdtempSync(join(tmpdir(), 'latchkey-cli-'))
const dbPath = join(dir, 'latchkey.sqlite')
const entry = join(import.meta.dir, '../src/index.ts')

afterAll(() => rmSync(dir, { recursive: true, force: true }))

function cli(args: string[], stdin?: string, env: Record<string, string> = {}) {
  const proc = Bun.spawnSync(['bun', entry, ...args], {
    env: { ...process.env, DATABASE_URL: dbPath, LOG_LEVEL: 'error', ...env },
    stdin: stdin === undefined ? 'ignore' : new TextEncoder().encode(stdin),
    cwd: dir,
  })
  return { code: proc.exitCode, out: proc.stdout.toString(), err: proc.stderr.toString() }
}

const count = (table: string) => {
  const db = new Database(dbPath, { readonly: true })
  try {
    return (db.query(`SELECT CAST(count(*) AS INTEGER) AS n FROM ${table}`).get() as { n: number }).n
  } finally {
    db.close()
  }
}

describe('latchkey CLI', () => {
  test('--version prints the package version; --help the usage', () => {
    expect(cli(['--version']).out).toBe(`latchkey ${pkg.version}\n`)
    const help = cli(['--help'])
    expect(help.code).toBe(0)
    expect(help.out).toContain('latchkey client create --name NAME [options]')
  })

  test('migrate creates the database and is idempotent', () => {
    expect(cli(['migrate']).out).toBe(`applied ${journal.entries.map((e) => e.tag).join(', ')}\n`)
    expect(cli(['migrate']).out).toBe('database is up to date\n')
  })

  let clientId = ''
  test('client create prints {client_id, client_secret, name, redirect_uris, post_logout_redirect_uris, public, skip_consent}', () => {
    const r = cli(['client', 'create', '--name', 'Notes', '--redirect-uri', 'https://n.example/cb', '--redirect-uri', 'http://localhost:5173/cb', '--skip-consent'])
    expect(r.code).toBe(0)
    const body = JSON.parse(r.out)
    expect(Object.keys(body)).toEqual(['client_id', 'client_secret', 'name', 'redirect_uris', 'post_logout_redirect_uris', 'public', 'skip_consent', 'require_mfa', 'id_token_signed_response_alg', 'allowed_groups', 'introspects', 'grant_types', 'allowed_scopes', 'require_pushed_authorization_requests', 'token_endpoint_auth_method', 'jwks_uri'])
    expect(body.id_token_signed_response_alg).toBe('RS256')
    expect(body.client_secret).toMatch(/^lk_cs_[A-Za-z0-9_-]{43}$/)
    expect(body).toMatchObject({ name: 'Notes', redirect_uris: ['https://n.example/cb', 'http://localhost:5173/cb'], public: false, skip_consent: true })
    clientId = body.client_id
  })

  test('a plain-http redirect URI off loopback is accepted with a warning on stderr', () => {
    const r = cli(['client', 'create', '--name', 'Http', '--redirect-uri', 'http://app.example/cb', '--redirect-uri', 'http://127.0.0.1:8080/cb'])
    expect(r.code).toBe(0)
    expect(r.err).toBe('latchkey: warning: http://app.example/cb is plain http on a non-loopback host; use https outside development\n')
    expect(JSON.parse(r.out).redirect_uris).toEqual(['http://app.example/cb', 'http://127.0.0.1:8080/cb'])
    expect(cli(['client', 'delete', JSON.parse(r.out).client_id]).code).toBe(0)
  })

  test('client create --public has a null secret', () => {
    const body = JSON.parse(cli(['client', 'create', '--name', 'SPA', '--redirect-uri', 'https://spa.example/cb', '--public']).out)
    expect(body.client_secret).toBeNull()
    expect(body.public).toBe(true)
  })

  test('client create|update --id-token-alg RS256|ES256|EdDSA; anything else exits 2 and changes nothing', () => {
    const made = JSON.parse(cli(['client', 'create', '--name', 'Curves', '--redirect-uri', 'https://c.example/cb', '--id-token-alg', 'ES256']).out)
    expect(made.id_token_signed_response_alg).toBe('ES256')
    expect(JSON.parse(cli(['client', 'update', made.client_id, '--id-token-alg', 'EdDSA']).out).id_token_signed_response_alg).toBe('EdDSA')
    expect(cli(['client', 'update', made.client_id, '--id-token-alg', 'HS256'])).toMatchObject({ code: 2, err: 'latchkey: the ID-token algorithm must be one of RS256, ES256, EdDSA, got "HS256"\n' })
    expect(cli(['client', 'create', '--name', 'Bad', '--redirect-uri', 'https://b.example/cb', '--id-token-alg', 'none']).code).toBe(2)
    const listed = (JSON.parse(cli(['client', 'list', '--json']).out) as Array<{ client_id: string; name: string; id_token_signed_response_alg: string }>)
    expect(listed.find((c) => c.client_id === made.client_id)?.id_token_signed_response_alg).toBe('EdDSA')
    expect(listed.some((c) => c.name === 'Bad')).toBe(false)
    expect(cli(['client', 'delete', made.client_id]).code).toBe(0)
  })

  test('client list --json prints the create objects without secrets; plain list is a table', () => {
    const list = JSON.parse(cli(['client', 'list', '--json']).out)
    expect(list).toHaveLength(2)
    expect(Object.keys(list[0])).toEqual(['client_id', 'name', 'redirect_uris', 'post_logout_redirect_uris', 'public', 'skip_consent', 'require_mfa', 'id_token_signed_response_alg', 'allowed_groups', 'introspects', 'grant_types', 'allowed_scopes', 'require_pushed_authorization_requests', 'token_endpoint_auth_method', 'jwks_uri'])
    expect(cli(['client', 'list']).out).toContain('Notes')
  })

  test('client rotate-secret prints {client_id, client_secret}', () => {
    const body = JSON.parse(cli(['client', 'rotate-secret', clientId]).out)
    expect(Object.keys(body)).toEqual(['client_id', 'client_secret'])
    expect(body.client_id).toBe(clientId)
    expect(body.client_secret).toMatch(/^lk_cs_/)
  })

  test('client registration-token prints an initial access token for DYNAMIC_REGISTRATION=token, kept hashed, valid 7 days', () => {
    const before = Date.now()
    const r = cli(['client', 'registration-token'])
    expect(r.code).toBe(0)
    const body = JSON.parse(r.out) as { initial_access_token: string; expires_at: string }
    expect(Object.keys(body)).toEqual(['initial_access_token', 'expires_at'])
    expect(body.initial_access_token).toMatch(/^lk_ia_[A-Za-z0-9_-]{43}$/)
    const expires = Date.parse(body.expires_at) - before
    expect(expires).toBeGreaterThanOrEqual(7 * 86_400_000 - 1000)
    expect(expires).toBeLessThan(7 * 86_400_000 + 60_000)
    const db = new Database(dbPath, { readonly: true })
    try {
      expect(db.query('SELECT token_hash FROM registration_tokens').all()).toEqual([{ token_hash: new Bun.CryptoHasher('sha256').update(body.initial_access_token).digest('base64url') }])
    } finally {
      db.close()
    }
    expect(cli(['client', 'registration-token', 'extra']).code).toBe(2)
  })

  let userId = ''
  test('user create reads the password from stdin and prints {id, email, full_name, avatar_url}', () => {
    const r = cli(['user', 'create', '--email', 'Ann@Example.com', '--name', 'Ann Lee', '--avatar-url', 'https://img.example/a.png', '--password-stdin'], 'a long password\n')
    expect(r.code).toBe(0)
    const body = JSON.parse(r.out)
    expect(Object.keys(body)).toEqual(['id', 'email', 'full_name', 'avatar_url', 'admin'])
    expect(body).toMatchObject({ email: 'ann@example.com', full_name: 'Ann Lee', avatar_url: 'https://img.example/a.png' })
    expect(body.id).toMatch(/^[0-9a-f-]{36}$/)
    userId = body.id
    const list = JSON.parse(cli(['user', 'list', '--json']).out)
    expect(list).toEqual([{ ...body, disabled: false, mfa: { totp: false, passkeys: 0 } }])
  })

  test('user list names an uploaded picture by its ISSUER URL, as apps get it', () => {
    const db = new Database(dbPath)
    try {
      db.run("UPDATE users SET avatar_url = '/avatars/' || id || '?v=abc' WHERE id = ?", [userId])
      expect(JSON.parse(cli(['user', 'list', '--json'], undefined, { ISSUER: 'https://id.example' }).out)[0].avatar_url).toBe(`https://id.example/avatars/${userId}?v=abc`)
    } finally {
      db.run("UPDATE users SET avatar_url = 'https://img.example/a.png' WHERE id = ?", [userId])
      db.close()
    }
  })

  test('client create --require-mfa, and client update ID --require-mfa true|false', () => {
    const made = JSON.parse(cli(['client', 'create', '--name', 'Vault', '--redirect-uri', 'https://v.example/cb', '--require-mfa']).out)
    expect(made.require_mfa).toBe(true)
    const off = cli(['client', 'update', made.client_id, '--require-mfa', 'false'])
    expect(off.code).toBe(0)
    expect(JSON.parse(off.out)).toMatchObject({ client_id: made.client_id, require_mfa: false })
    const bad = cli(['client', 'update', made.client_id, '--require-mfa', 'yes'])
    expect(bad.code).not.toBe(0)
    expect(bad.err).toContain('--require-mfa must be true or false')
    const unknown = cli(['client', 'update', 'abc123', '--require-mfa', 'true'])
    expect(unknown.code).not.toBe(0)
    expect(unknown.err).toContain('no client with id "abc123"')
    expect(cli(['client', 'delete', made.client_id]).code).toBe(0)
  })

  test('client create|update --backchannel-logout-uri [--backchannel-logout-session-required]: https or loopback, shown once set', () => {
    const made = JSON.parse(cli(['client', 'create', '--name', 'Wiki', '--redirect-uri', 'https://w.example/cb', '--backchannel-logout-uri', 'https://w.example/bc', '--backchannel-logout-session-required']).out)
    expect(made).toMatchObject({ backchannel_logout_uri: 'https://w.example/bc', backchannel_logout_session_required: true })
    const clients = count('clients')
    for (const bad of ['http://w.example/bc', 'https://w.example/bc#x', 'not a url'])
      expect(cli(['client', 'create', '--name', 'Bad', '--redirect-uri', 'https://w.example/cb', '--backchannel-logout-uri', bad]).code).toBe(2)
    expect(cli(['client', 'create', '--name', 'Bad', '--redirect-uri', 'https://w.example/cb', '--backchannel-logout-session-required'])).toMatchObject({
      code: 2,
      err: 'latchkey: --backchannel-logout-session-required needs --backchannel-logout-uri\n',
    })
    expect(count('clients')).toBe(clients)
    const loopback = cli(['client', 'update', made.client_id, '--backchannel-logout-uri', 'http://127.0.0.1:8080/bc'])
    expect(JSON.parse(loopback.out)).toMatchObject({ backchannel_logout_uri: 'http://127.0.0.1:8080/bc', backchannel_logout_session_required: false })
    expect(cli(['client', 'update', made.client_id, '--backchannel-logout-uri', 'http://w.example/bc'])).toMatchObject({
      code: 2,
      err: 'latchkey: back-channel logout URI "http://w.example/bc" must be https:// (or http:// on a loopback address)\n',
    })
    const removed = JSON.parse(cli(['client', 'update', made.client_id, '--backchannel-logout-uri', '']).out)
    expect(removed.backchannel_logout_uri).toBeUndefined()
    expect(cli(['client', 'delete', made.client_id]).code).toBe(0)
  })

  test('user update ID --admin true|false --disabled true|false; user create --admin', () => {
    const on = cli(['user', 'update', userId, '--admin', 'true', '--disabled', 'true'])
    expect(on.code).toBe(0)
    expect(JSON.parse(on.out)).toMatchObject({ id: userId, admin: true, disabled: true })
    expect(JSON.parse(cli(['user', 'list', '--json']).out)[0]).toMatchObject({ admin: true, disabled: true })
    expect(JSON.parse(cli(['user', 'update', userId, '--admin', 'false', '--disabled', 'false']).out)).toMatchObject({ admin: false, disabled: false })
    expect(cli(['user', 'update', userId, '--admin', 'yes'])).toMatchObject({ code: 2, err: 'latchkey: --admin must be true or false\n' })
    expect(cli(['user', 'update', userId]).code).toBe(2)
    expect(cli(['user', 'update', '00000000-0000-0000-0000-000000000000', '--admin', 'true']).code).toBe(2)
    const root = JSON.parse(cli(['user', 'create', '--email', 'root@example.com', '--name', 'Root', '--admin', '--password-stdin'], 'a long password\n').out)
    expect(root.admin).toBe(true)
    expect(cli(['user', 'delete', root.id]).code).toBe(0)
  })

  test('group create/add/remove/list --json/delete, and client create|update --allowed-group', () => {
    expect(cli(['group', 'create', 'family'])).toMatchObject({ code: 0, out: 'created group family\n' })
    expect(cli(['group', 'create', 'family'])).toMatchObject({ code: 2, err: 'latchkey: a group named "family" exists already\n' })
    expect(cli(['group', 'create', 'has space']).code).toBe(2)
    expect(cli(['group', 'add', 'family', 'ANN@example.com'])).toMatchObject({ code: 0, out: 'added ann@example.com to family\n' })
    expect(cli(['group', 'add', 'family', 'nobody@example.com'])).toMatchObject({ code: 2, err: 'latchkey: no user "nobody@example.com"\n' })
    expect(cli(['group', 'add', 'ghosts', userId])).toMatchObject({ code: 2, err: 'latchkey: no group named "ghosts"\n' })
    expect(JSON.parse(cli(['group', 'list', '--json']).out)).toEqual([{ name: 'family', members: [{ id: userId, email: 'ann@example.com' }] }])

    const clients = count('clients')
    const refused = cli(['client', 'create', '--name', 'Photos', '--redirect-uri', 'https://p.example/cb', '--allowed-group', 'ghosts'])
    expect(refused).toMatchObject({ code: 2, err: 'latchkey: no group named "ghosts" (create it first: latchkey group create ghosts)\n' })
    expect(count('clients')).toBe(clients)
    const made = JSON.parse(cli(['client', 'create', '--name', 'Photos', '--redirect-uri', 'https://p.example/cb', '--allowed-group', 'family']).out)
    expect(made.allowed_groups).toEqual(['family'])
    // SPEC: a change that changes nothing says so and records nothing.
    expect(cli(['client', 'update', made.client_id, '--allowed-group', 'family', '--allowed-group', 'family'])).toMatchObject({ code: 0, out: `nothing to change: client ${made.client_id} already has these options\n` })
    expect(cli(['client', 'update', made.client_id, '--allowed-group', 'ghosts']).code).toBe(2)
    expect(cli(['group', 'remove', 'family', userId])).toMatchObject({ code: 0, out: 'removed ann@example.com from family\n' })
    // Deleting a group an app is restricted to would open the app to everyone: refused, naming it (issue 33 finding 8).
    expect(cli(['group', 'delete', 'family'])).toEqual({
      code: 2,
      out: '',
      err: `latchkey: group "family" is the allowed group of Photos (${made.client_id}): change their allowed groups first (deleting it would open them to everyone)\n`,
    })
    expect(JSON.parse(cli(['group', 'list', '--json']).out)).toEqual([{ name: 'family', members: [] }])
    const listedBefore = (JSON.parse(cli(['client', 'list', '--json']).out) as Array<{ client_id: string; allowed_groups: string[] }>).find((c) => c.client_id === made.client_id)
    expect(listedBefore?.allowed_groups).toEqual(['family'])
    expect(JSON.parse(cli(['client', 'update', made.client_id, '--allowed-group', 'none']).out).allowed_groups).toEqual([])
    expect(cli(['group', 'delete', 'family'])).toMatchObject({ code: 0, out: 'deleted group family\n' })
    expect(cli(['client', 'delete', made.client_id]).code).toBe(0)
    // Each change is in the audit log, newest first; --since must be a date.
    const events = JSON.parse(cli(['audit', '--json']).out) as Array<{ kind: string; detail: Record<string, unknown>; user_agent: string }>
    expect(events.slice(0, 8).map((e) => e.kind)).toEqual([
      'client.deleted',
      'group.deleted',
      'client.updated',
      'group.member_removed',
      'client.created',
      'group.member_added',
      'group.created',
      'user.deleted',
    ])
    expect(events[6]).toMatchObject({ detail: { actor: 'cli', group: 'family' }, user_agent: 'latchkey CLI' })
    expect(JSON.parse(cli(['audit', '--json', '--user', userId, '--since', '2000-01-01T00:00:00Z']).out).every((e: { user_id: string }) => e.user_id === userId)).toBe(true)
    expect(cli(['audit', '--since', 'yesterday'])).toMatchObject({ code: 2, err: 'latchkey: --since must be a date and time (ISO 8601), got "yesterday"\n' })
  })

  test("client create|update --introspect CLIENT_ID…|'*' (a resource server); an unknown id exits 2 with one line and changes nothing", () => {
    const app = JSON.parse(cli(['client', 'create', '--name', 'Webmail', '--redirect-uri', 'https://w.example/cb']).out)
    const clients = count('clients')
    expect(cli(['client', 'create', '--name', 'Dovecot', '--redirect-uri', 'https://d.example/cb', '--introspect', 'nope'])).toEqual({ code: 2, out: '', err: 'latchkey: --introspect: no client with id "nope"\n' })
    expect(cli(['client', 'create', '--name', 'Dovecot', '--redirect-uri', 'https://d.example/cb', '--public', '--introspect', app.client_id]).err).toBe('latchkey: a public client cannot introspect tokens (it has no secret to authenticate with)\n')
    expect(count('clients')).toBe(clients)
    const rs = JSON.parse(cli(['client', 'create', '--name', 'Dovecot', '--redirect-uri', 'https://d.example/cb', '--introspect', app.client_id]).out)
    expect(rs.introspects).toEqual([app.client_id])
    const listed = () => (JSON.parse(cli(['client', 'list', '--json']).out) as Array<{ client_id: string; introspects: string[] }>).find((c) => c.client_id === rs.client_id)!.introspects
    expect(listed()).toEqual([app.client_id])
    expect(cli(['client', 'update', rs.client_id, '--introspect', 'ghost'])).toEqual({ code: 2, out: '', err: 'latchkey: --introspect: no client with id "ghost"\n' })
    expect(cli(['client', 'update', rs.client_id, '--introspect', '*', '--introspect', app.client_id]).code).toBe(2)
    expect(listed()).toEqual([app.client_id])
    expect(JSON.parse(cli(['client', 'update', rs.client_id, '--introspect', '*']).out).introspects).toEqual(['*'])
    expect(JSON.parse(cli(['client', 'update', rs.client_id, '--introspect', '']).out).introspects).toEqual([])
    expect(cli(['client', 'delete', rs.client_id]).code).toBe(0)
    expect(cli(['client', 'delete', app.client_id]).code).toBe(0)
  })

  test('resource create / list --json / delete (RFC 8707); bad input exits non-zero with one line', () => {
    const made = cli(['resource', 'create', '--uri', 'https://mcp.example.com/', '--name', 'Home MCP', '--scope', 'tools:read=Read your tools', '--scope', 'tools:call=Run tools', '--token-format', 'jwt'])
    expect(made.code).toBe(0)
    const view = { uri: 'https://mcp.example.com', name: 'Home MCP', scopes: { 'tools:read': 'Read your tools', 'tools:call': 'Run tools' }, token_format: 'jwt', introspectors: [] }
    expect(JSON.parse(made.out)).toEqual(view)
    expect(JSON.parse(cli(['resource', 'list', '--json']).out)).toEqual([view])
    expect(cli(['resource', 'list']).out).toContain('tools:read tools:call')
    const bad = cli(['resource', 'create', '--uri', 'https://other.example', '--name', 'X', '--scope', 'settings:read=x'])
    expect(bad.code).not.toBe(0)
    expect(bad.err).toBe(`latchkey: --scope "settings:read" is one of Latchkey's own scopes\n`)
    expect(cli(['resource', 'delete', 'https://mcp.example.com/']).out).toBe('deleted resource https://mcp.example.com\n')
    expect(cli(['resource', 'delete', 'https://mcp.example.com']).code).not.toBe(0)
    expect(JSON.parse(cli(['resource', 'list', '--json']).out)).toEqual([])
  })

  test('user reset-mfa ID removes TOTP and recovery codes; an unknown id exits non-zero', () => {
    const r = cli(['user', 'reset-mfa', userId])
    expect(r.code).toBe(0)
    expect(r.out).toBe(`reset two-step verification of user ${userId} (ann@example.com)\n`)
    const unknown = cli(['user', 'reset-mfa', 'nobody'])
    expect(unknown.code).toBe(2)
    expect(unknown.err).toBe('latchkey: no user "nobody"\n')
  })

  for (const [name, args, stdin] of [
    ['unknown command', ['frobnicate'], undefined],
    ['unknown flag', ['client', 'list', '--yaml'], undefined],
    ['client create without --redirect-uri', ['client', 'create', '--name', 'X'], undefined],
    ['client create with a relative redirect URI', ['client', 'create', '--name', 'X', '--redirect-uri', '/cb'], undefined],
    ['client create with a fragment', ['client', 'create', '--name', 'X', '--redirect-uri', 'https://x.example/cb#f'], undefined],
    ['client create with a javascript: URI', ['client', 'create', '--name', 'X', '--redirect-uri', 'javascript:alert(1)'], undefined],
    ['user create with a short password', ['user', 'create', '--email', 'b@example.com', '--name', 'B', '--password-stdin'], 'short\n'],
    ['user create without --password-stdin', ['user', 'create', '--email', 'b@example.com', '--name', 'B'], undefined],
    ['user create with a taken email', ['user', 'create', '--email', 'ann@example.com', '--name', 'B', '--password-stdin'], 'long password\n'],
    ['user create with a bad email', ['user', 'create', '--email', 'nope', '--name', 'B', '--password-stdin'], 'long password\n'],
    ['client delete of an unknown id', ['client', 'delete', 'nope'], undefined],
    ['rotate-secret of a public client', ['client', 'rotate-secret', 'nope'], undefined],
    ['user create with an escape sequence in the name', ['user', 'create', '--email', 'e@example.com', '--name', 'Eve\u001b[2J', '--password-stdin'], 'long password\n'],
    ['user create with a zero-width space in the email', ['user', 'create', '--email', 'e\u200b@example.com', '--name', 'Eve', '--password-stdin'], 'long password\n'],
    ['user create with a Hangul filler in the email', ['user', 'create', '--email', 'ann\u3164@example.com', '--name', 'Eve', '--password-stdin'], 'long password\n'],
    ['user create with a combining grapheme joiner in the name', ['user', 'create', '--email', 'e@example.com', '--name', 'Ev\u034fe', '--password-stdin'], 'long password\n'],
    ['user create with an NFD spelling of a taken email', ['user', 'create', '--email', 'ANN@example.com', '--name', 'B', '--password-stdin'], 'long password\n'],
    ['client create with a control character in the name', ['client', 'create', '--name', 'App\u0007', '--redirect-uri', 'https://x.example/cb'], undefined],
  ] as const) {
    test(`${name} → non-zero exit, one line on stderr, nothing changed`, () => {
      const before = [count('clients'), count('users')]
      const r = cli([...args], stdin)
      expect(r.code).toBe(2)
      expect(r.err.trim().split('\n')).toHaveLength(1)
      expect(r.err).toStartWith('latchkey: ')
      expect([count('clients'), count('users')]).toEqual(before)
    })
  }

  test('item 6: list output never carries a raw control character, even for data an older release stored', () => {
    const db = new Database(dbPath)
    db.run("INSERT INTO users (id, email, full_name, avatar_url, password_hash, created_at) VALUES ('00000000-0000-4000-8000-000000000001', 'mallory@example.com', 'Mal\u001b[2J\u009b31m\u200bory', NULL, 'h', 1)")
    db.close()
    for (const args of [['user', 'list'], ['user', 'list', '--json']]) {
      const r = cli(args)
      expect(r.code).toBe(0)
      expect(r.out).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b]/)
      expect(r.out).toContain('Mal\\u001b[2J\\u009b31m\\u200bory')
    }
    const listed = JSON.parse(cli(['user', 'list', '--json']).out) as Array<{ email: string; full_name: string }>
    expect(listed.find((u) => u.email === 'mallory@example.com')!.full_name).toBe('Mal\u001b[2J\u009b31m\u200bory')
    const fix = new Database(dbPath)
    fix.run("DELETE FROM users WHERE email = 'mallory@example.com'")
    fix.close()
  })

  test('keys list [--json] shows {kid, alg, created_at, current}; keys rotate promotes the published next key; keys remove; no private key is ever printed', () => {
    const before = JSON.parse(cli(['keys', 'list', '--json']).out) as Array<{ kid: string; current: boolean }>
    // The signing key and the next one, published before it signs.
    expect(before).toHaveLength(2)
    for (const key of before) expect(Object.keys(key).sort()).toEqual(['alg', 'created_at', 'current', 'kid'])
    const signing = before.find((k) => k.current)!
    const next = before.find((k) => !k.current)!
    expect(signing).toMatchObject({ alg: 'RS256', current: true })
    const rotated = cli(['keys', 'rotate'])
    expect(rotated.code).toBe(0)
    const key = JSON.parse(rotated.out) as { kid: string; current: boolean }
    // The next key was published a moment ago: it signs once relying parties can have fetched it.
    expect(key).toMatchObject({ kid: next.kid, current: false })
    expect(rotated.err).toContain(`${next.kid} signs from `)
    const after = JSON.parse(cli(['keys', 'list', '--json']).out) as Array<{ kid: string; current: boolean }>
    expect(after).toHaveLength(3)
    expect(after.filter((k) => k.current).map((k) => k.kid)).toEqual([signing.kid])
    const table = cli(['keys', 'list']).out
    expect(table).toContain(key.kid)
    for (const out of [rotated.out, table, cli(['keys', 'list', '--json']).out]) expect(out).not.toMatch(/"(d|p|q|dp|dq|qi|n)"/)
    // The signing key cannot be removed; another can, at once.
    const refused = cli(['keys', 'remove', signing.kid])
    expect(refused.code).toBe(2)
    expect(refused.err).toBe(`latchkey: "${signing.kid}" is the key that signs now; run latchkey keys rotate first, then remove it\n`)
    expect(cli(['keys', 'remove', 'nope']).code).toBe(2)
    const newest = after.find((k) => k.kid !== signing.kid && k.kid !== next.kid)!
    expect(JSON.parse(cli(['keys', 'remove', newest.kid]).out)).toEqual({ kid: newest.kid, removed: true })
    // Gone at once; the next command publishes a new next key in its place.
    const remaining = (JSON.parse(cli(['keys', 'list', '--json']).out) as Array<{ kid: string }>).map((k) => k.kid)
    expect(remaining).not.toContain(newest.kid)
    expect(remaining).toEqual(expect.arrayContaining([signing.kid, next.kid]))
    expect(cli(['keys', 'spin']).code).toBe(2)
  })

  test('invalid configuration stops with a message naming the variable', () => {
    const r = cli(['client', 'list'], undefined, { SIGNUP: 'sometimes' })
    expect(r.code).toBe(2)
    expect(r.err).toStartWith('latchkey: SIGNUP: ')
  })

  test('backup writes a consistent copy, mode 0600; refuses to overwrite', () => {
    const target = join(dir, 'backup.sqlite')
    expect(cli(['backup', target]).code).toBe(0)
    const copy = new Database(target, { readonly: true })
    expect((copy.query('SELECT CAST(count(*) AS INTEGER) AS n FROM users').get() as { n: number }).n).toBe(1)
    copy.close()
    expect(statSync(target).mode & 0o777).toBe(0o600)
    expect(cli(['backup', target]).code).toBe(2)
  })

  test('item 8: backup refuses a symlink — dangling or not — and writes nothing through it', () => {
    const victim = join(dir, 'victim.txt')
    const dangling = join(dir, 'dangling.sqlite')
    symlinkSync(victim, dangling)
    const r = cli(['backup', dangling])
    expect(r.code).toBe(2)
    expect(r.err).toContain('already exists (or is a link)')
    expect(existsSync(victim)).toBe(false)
    writeFileSync(victim, 'keep')
    const link = join(dir, 'link.sqlite')
    symlinkSync(victim, link)
    expect(cli(['backup', link]).code).toBe(2)
    expect(readFileSync(victim, 'utf8')).toBe('keep')
  })

  test('item 8: the database and its folder are for their owner only; an existing 0644 database is made 0600', () => {
    const fresh = join(dir, 'fresh')
    const r = Bun.spawnSync(['bun', entry, 'migrate'], { cwd: dir, env: { ...process.env, DATABASE_URL: join(fresh, 'db.sqlite') } })
    expect(r.exitCode).toBe(0)
    expect(statSync(fresh).mode & 0o777).toBe(0o700)
    expect(statSync(join(fresh, 'db.sqlite')).mode & 0o777).toBe(0o600)
    const old = join(dir, 'old.sqlite')
    writeFileSync(old, '', { mode: 0o644 })
    chmodSync(old, 0o644)
    const serve = Bun.spawn(['bun', entry, 'serve'], { cwd: dir, env: { ...process.env, DATABASE_URL: old, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'error' } })
    const deadline = Date.now() + 10_000
    while ((statSync(old).mode & 0o777) !== 0o600 && Date.now() < deadline) Bun.sleepSync(20)
    serve.kill('SIGTERM')
    expect(statSync(old).mode & 0o777).toBe(0o600)
  })

  test('user delete and client delete remove them', () => {
    expect(cli(['user', 'delete', userId]).code).toBe(0)
    expect(count('users')).toBe(0)
    expect(cli(['client', 'delete', clientId]).code).toBe(0)
    expect(count('clients')).toBe(1)
  })

  test('healthcheck exits 1 with one line when nothing answers on PORT', () => {
    const r = cli(['healthcheck'], undefined, { PORT: '1' })
    expect(r.code).toBe(1)
    expect(r.err).toBe('latchkey: unhealthy: no answer from healthz\n')
  })

  test('--database-url before the command stands for DATABASE_URL', () => {
    const other = join(dir, 'flag.sqlite')
    const r = Bun.spawnSync(['bun', entry, '--database-url', other, 'migrate'], { cwd: dir, env: { ...process.env, DATABASE_URL: dbPath } })
    expect(r.exitCode).toBe(0)
    expect(existsSync(other)).toBe(true)
  })

  test('the default database is ./data/latchkey.sqlite', () => {
    const r = Bun.spawnSync(['bun', entry, 'migrate'], { cwd: dir, env: { ...process.env, DATABASE_URL: '' } })
    expect(r.exitCode).toBe(0)
    expect(existsSync(join(dir, 'data/latchkey.sqlite'))).toBe(true)
  })
})

describe('latchkey CLI: the changes the audit log missed (issue 33)', () => {
  test('user reset-link, keys remove and client registration-token are in the audit log at once — never the link or the token', () => {
    const user = JSON.parse(cli(['user', 'create', '--email', 'reset@example.com', '--name', 'Reset', '--password-stdin'], 'a long password\n').out) as { id: string }
    const link = cli(['user', 'reset-link', user.id]).out.trim()
    const newest = () => JSON.parse(cli(['audit', '--json']).out)[0] as { kind: string; user_id: string | null; detail: Record<string, unknown> }
    expect(newest()).toMatchObject({ kind: 'user.reset_link_made', user_id: user.id, detail: { actor: 'cli', expires_at: expect.any(String) } })
    expect(cli(['keys', 'rotate']).code).toBe(0)
    const spare = (JSON.parse(cli(['keys', 'list', '--json']).out) as Array<{ kid: string; current: boolean; created_at: string }>).filter((k) => !k.current).sort((a, b) => b.created_at.localeCompare(a.created_at))[0]!
    expect(cli(['keys', 'remove', spare.kid]).code).toBe(0)
    expect(newest()).toMatchObject({ kind: 'key.removed', detail: { actor: 'cli', kid: spare.kid } })
    const { initial_access_token } = JSON.parse(cli(['client', 'registration-token']).out) as { initial_access_token: string }
    expect(newest()).toMatchObject({ kind: 'registration_token.issued', user_id: null, detail: { actor: 'cli', expires_at: expect.any(String) } })
    const all = cli(['audit', '--json']).out
    expect(all).not.toContain(new URL(link).searchParams.get('token')!)
    expect(all).not.toContain(initial_access_token)
    expect(cli(['user', 'delete', user.id]).code).toBe(0)
  })
})
