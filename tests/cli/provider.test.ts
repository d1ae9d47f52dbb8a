import { Database } from 'bun:sqlite'
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

setDefaultTimeout(30_000)

const dir = mkdtempSync(join(tmpdir(), 'latchkey-cli-provider-'))
const entry = join(import.meta.dir, '../../src/index.ts')
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function cli(args: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawnSync(['bun', entry, ...args], { env: { ...process.env, DATABASE_URL: join(dir, 'latchkey.sqlite'), LOG_LEVEL: 'error', ISSUER: 'https://id.example.com', ...env }, stdin: 'ignore', cwd: dir })
  return { code: proc.exitCode, out: proc.stdout.toString(), err: proc.stderr.toString() }
}

const SECRET = 'the-provider-secret-0123456789'

describe('latchkey provider', () => {
  test('create (oidc, google, github, GitHub Enterprise), list, update, delete; the secret is sealed, never printed; bad input exits 2 and changes nothing', () => {
    expect(cli(['migrate']).code).toBe(0)
    const secretFile = join(dir, 'acme.secret')
    writeFileSync(secretFile, SECRET + '\n', { mode: 0o600 })
    const made = cli(['provider', 'create', '--name', 'Acme SSO', '--issuer', 'https://sso.acme.example/', '--client-id', 'latchkey', '--client-secret-file', secretFile, '--link-verified-email', '--allowed-domain', 'Acme.Example'])
    expect(made.err).toBe('')
    expect(JSON.parse(made.out)).toEqual({
      id: 'acme-sso',
      name: 'Acme SSO',
      kind: 'oidc',
      issuer: 'https://sso.acme.example',
      client_id: 'latchkey',
      scope: 'openid email profile',
      allow_create: false,
      allowed_domains: ['acme.example'],
      link_verified_email: true,
      trust_mfa: false,
      callback_url: 'https://id.example.com/login/provider/acme-sso/callback',
    })
    const google = JSON.parse(cli(['provider', 'create', '--kind', 'google', '--name', 'Google', '--client-id', '1.apps.googleusercontent.com', '--client-secret-file', secretFile, '--allow-create', '--trust-mfa']).out)
    expect([google.issuer, google.scope, google.allow_create, google.trust_mfa]).toEqual(['https://accounts.google.com', 'openid email profile', true, true])
    const github = JSON.parse(cli(['provider', 'create', '--kind', 'github', '--name', 'GitHub', '--client-id', 'Iv1.abc', '--client-secret-file', secretFile]).out)
    expect([github.issuer, github.api_url, github.scope]).toEqual(['https://github.com', 'https://api.github.com', 'read:user user:email'])
    const enterprise = JSON.parse(cli(['provider', 'create', '--kind', 'github', '--id', 'ghe', '--name', 'GitHub Enterprise', '--api-url', 'https://git.corp.example/api/v3', '--client-id', 'x', '--client-secret-file', secretFile]).out)
    expect([enterprise.id, enterprise.issuer, enterprise.api_url]).toEqual(['ghe', 'https://git.corp.example', 'https://git.corp.example/api/v3'])

    expect(JSON.parse(cli(['provider', 'update', 'acme-sso', '--allow-create', 'true', '--any-domain', '--name', 'Acme']).out)).toMatchObject({ name: 'Acme', allow_create: true, allowed_domains: [], link_verified_email: true })
    const listed = JSON.parse(cli(['provider', 'list', '--json']).out)
    expect(listed.map((p: { id: string }) => p.id)).toEqual(['acme-sso', 'google', 'github', 'ghe'])
    expect(cli(['provider', 'list']).out.split('\n')[0]).toBe('id        name               kind    issuer                       client_id                     allow_create  link_verified_email')

    // Stored sealed (AES-GCM, bound to the provider's id): no column holds the secret.
    const db = new Database(join(dir, 'latchkey.sqlite'), { readonly: true })
    const sealed = db.query<{ client_secret_sealed: string }, []>('SELECT client_secret_sealed FROM providers').all()
    db.close()
    expect(sealed.every((r) => r.client_secret_sealed.startsWith('v1.') && !r.client_secret_sealed.includes(SECRET))).toBe(true)
    expect(JSON.stringify(listed)).not.toContain(SECRET)

    const open = join(dir, 'open.secret')
    writeFileSync(open, SECRET)
    chmodSync(open, 0o644)
    const refusals: Array<[string[], string, Record<string, string>?]> = [
      [['provider', 'create', '--name', 'Open', '--issuer', 'https://x.example', '--client-id', 'a', '--client-secret-file', open], `latchkey: ${open} is readable by others (chmod 600 it)\n`],
      [['provider', 'create', '--name', 'Gone', '--issuer', 'https://x.example', '--client-id', 'a', '--client-secret-file', join(dir, 'none')], `latchkey: ${join(dir, 'none')} does not exist\n`],
      [['provider', 'create', '--name', 'Plain', '--issuer', 'http://sso.example', '--client-id', 'a', '--client-secret-file', secretFile], 'latchkey: issuer must be https:// (plain http only for a host in CLIENT_ID_METADATA_ALLOW_HOSTS)\n'],
      [['provider', 'create', '--name', 'Loop', '--issuer', 'https://127.0.0.1:8443', '--client-id', 'a', '--client-secret-file', secretFile], 'latchkey: issuer must be on a public address (or its host in CLIENT_ID_METADATA_ALLOW_HOSTS)\n'],
      [['provider', 'create', '--name', 'Acme SSO', '--issuer', 'https://x.example', '--client-id', 'a', '--client-secret-file', secretFile], 'latchkey: a provider with id "acme-sso" exists (give another with --id)\n'],
      [['provider', 'create', '--name', 'NoOpenid', '--issuer', 'https://x.example', '--scope', 'email', '--client-id', 'a', '--client-secret-file', secretFile], 'latchkey: scope must include openid\n'],
      [['provider', 'create', '--name', 'Dom', '--issuer', 'https://x.example', '--allowed-domain', 'not a domain', '--client-id', 'a', '--client-secret-file', secretFile], 'latchkey: allowed domain "not a domain" is not a domain name\n'],
      [['provider', 'create', '--name', 'K', '--kind', 'saml', '--issuer', 'https://x.example', '--client-id', 'a', '--client-secret-file', secretFile], 'latchkey: kind must be one of oidc, google, github\n'],
      [['provider', 'update', 'nobody', '--name', 'X'], 'latchkey: no provider "nobody"\n'],
      [['provider', 'delete', 'nobody'], 'latchkey: no provider "nobody"\n'],
    ]
    for (const [args, err] of refusals) expect(cli(args)).toEqual({ code: 2, out: '', err })
    // An allowed host may be plain http on a loopback address (tests, intranets).
    expect(cli(['provider', 'create', '--name', 'Local', '--issuer', 'http://127.0.0.1:8443', '--client-id', 'a', '--client-secret-file', secretFile], { CLIENT_ID_METADATA_ALLOW_HOSTS: '127.0.0.1:8443' }).code).toBe(0)
    expect(JSON.parse(cli(['provider', 'list', '--json']).out)).toHaveLength(5)

    expect(JSON.parse(cli(['provider', 'delete', 'local', '--json']).out)).toEqual({ id: 'local', deleted: true, connected: 0, no_other_way_in: 0 })
    expect(cli(['provider', 'create', '--help']).out).toContain('Examples:\n  latchkey provider create --name Acme --issuer https://sso.acme.example')
  })

  test('delete names who is connected and who has no other way in; while anyone has none it is refused without --force (exit 2, nothing deleted)', () => {
    expect(cli(['migrate']).code).toBe(0)
    const secretFile = join(dir, 'corp.secret')
    writeFileSync(secretFile, SECRET, { mode: 0o600 })
    for (const id of ['corp', 'wiki', 'empty']) expect(cli(['provider', 'create', '--kind', 'github', '--id', id, '--name', id, '--client-id', 'x', '--client-secret-file', secretFile]).code).toBe(0)
    // Ann has a password; Bob and Cat signed up through corp and have nothing else.
    const db = new Database(join(dir, 'latchkey.sqlite'))
    for (const [id, hash] of [['ann', 'a-hash'], ['bob', ''], ['cat', '']] as const) {
      db.prepare('INSERT INTO users (id, email, full_name, avatar_url, password_hash, created_at, email_verified) VALUES (?, ?, ?, NULL, ?, 0, 1)').run(id, `${id}@example.com`, id, hash)
      db.prepare("INSERT INTO user_identities (provider_id, subject, user_id, email, created_at, last_used_at) VALUES ('corp', ?1, ?1, NULL, 0, NULL)").run(id)
    }
    db.prepare("INSERT INTO user_identities (provider_id, subject, user_id, email, created_at, last_used_at) VALUES ('wiki', 'ann', 'ann', NULL, 0, NULL)").run()
    const identities = () => db.query<{ n: number }, []>('SELECT count(*) AS n FROM user_identities').get()!.n

    const refused = 'latchkey: provider corp: 3 people are connected through it; 2 of them have no password or passkey and will have to reset their password by email to sign in again; nothing deleted (give --force to delete it anyway)\n'
    expect(cli(['provider', 'delete', 'corp'])).toEqual({ code: 2, out: '', err: refused })
    expect(cli(['provider', 'delete', 'corp', '--json'])).toEqual({ code: 2, out: '', err: refused })
    expect(identities()).toBe(4)
    expect(JSON.parse(cli(['provider', 'list', '--json']).out).map((p: { id: string }) => p.id)).toContain('corp')

    expect(cli(['provider', 'delete', 'wiki'])).toEqual({ code: 0, out: 'deleted provider wiki: 1 person is connected through it; each has a password, a passkey or another connected account\n', err: '' })
    expect(cli(['provider', 'delete', 'empty', '--json'])).toEqual({ code: 0, out: JSON.stringify({ id: 'empty', deleted: true, connected: 0, no_other_way_in: 0 }, null, 2) + '\n', err: '' })
    expect(JSON.parse(cli(['provider', 'delete', 'corp', '--force', '--json']).out)).toEqual({ id: 'corp', deleted: true, connected: 3, no_other_way_in: 2 })
    expect(identities()).toBe(0)
    db.close()
    const audit = JSON.parse(cli(['audit', '--json']).out).filter((e: { kind: string }) => e.kind === 'provider.deleted').map((e: { detail: unknown }) => e.detail)
    // Newest first; the refusals recorded nothing.
    expect(audit.filter((d: { provider: string }) => d.provider === 'corp')).toHaveLength(1)
    expect(audit.slice(0, 3)).toEqual([
      { actor: 'cli', provider: 'corp', connected: 3, no_other_way_in: 2 },
      { actor: 'cli', provider: 'empty', connected: 0, no_other_way_in: 0 },
      { actor: 'cli', provider: 'wiki', connected: 1, no_other_way_in: 0 },
    ])
    const help = cli(['provider', 'delete', '--help']).out
    expect(help).toContain('--force')
    expect(help).toContain('latchkey provider delete acme --force')
  })
})
