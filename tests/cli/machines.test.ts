import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freshPgDatabase } from '../pg-store'
import { testEngine } from '../store'

// Spawns CLI processes: slower than in-process tests on a busy machine.
setDefaultTimeout(60_000)

/** SPEC, "Machines and devices": client create|update --grant, --allowed-scope, --require-par. */
const dir = mkdtempSync(join(tmpdir(), 'latchkey-machines-'))
const entry = join(import.meta.dir, '../../src/index.ts')
let databaseUrl: string

beforeAll(async () => {
  databaseUrl = testEngine === 'postgres' ? await freshPgDatabase() : join(dir, 'latchkey.sqlite')
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function cli(args: string[]) {
  const proc = Bun.spawnSync(['bun', entry, ...args], { env: { PATH: process.env.PATH!, HOME: dir, DATABASE_URL: databaseUrl, LOG_LEVEL: 'error' }, stdin: 'ignore', cwd: dir })
  return { code: proc.exitCode, out: proc.stdout.toString(), err: proc.stderr.toString() }
}
const json = (args: string[]) => {
  const r = cli([...args, '--json'])
  expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: '' })
  return JSON.parse(r.out) as Record<string, unknown>
}
const refused = (args: string[], message: string) => {
  const r = cli(args)
  expect({ code: r.code, out: r.out }).toEqual({ code: 2, out: '' })
  expect(r.err).toContain(message)
  expect(r.err.trim().split('\n')).toHaveLength(1)
}

test('client_credentials: no --redirect-uri needed, --allowed-scope only a resource scope, never --public; update takes true|false for --require-par', () => {
  expect(cli(['migrate']).code).toBe(0)
  json(['resource', 'create', '--uri', 'https://reports.example', '--name', 'Reports', '--scope', 'reports:read=Read reports'])
  refused(['client', 'create', '--name', 'Job', '--grant', 'client_credentials', '--allowed-scope', 'email'], '--allowed-scope "email" is not a scope of a registered resource')
  refused(['client', 'create', '--name', 'Job', '--grant', 'client_credentials', '--public'], 'a public client cannot use client_credentials')
  refused(['client', 'create', '--name', 'Job', '--grant', 'password'], '--grant must be one of')
  refused(['client', 'create', '--name', 'Web'], 'at least one --redirect-uri is required')
  expect(json(['client', 'list'])).toEqual([] as unknown as Record<string, unknown>)
  const job = json(['client', 'create', '--name', 'Job', '--grant', 'client_credentials', '--allowed-scope', 'reports:read'])
  expect(job).toMatchObject({ redirect_uris: [], grant_types: ['client_credentials'], allowed_scopes: ['reports:read'], require_pushed_authorization_requests: false })
  expect(typeof job.client_secret).toBe('string')
  const id = job.client_id as string
  refused(['client', 'update', id, '--require-par', 'maybe'], '--require-par')
  const updated = json(['client', 'update', id, '--grant', 'client_credentials', '--grant', 'authorization_code', '--redirect-uri', 'https://job.example/cb', '--require-par', 'true'])
  expect(updated).toMatchObject({ grant_types: ['client_credentials', 'authorization_code'], allowed_scopes: ['reports:read'], require_pushed_authorization_requests: true })
  // Dropping client_credentials drops the allowed scopes with it.
  expect(json(['client', 'update', id, '--grant', 'authorization_code'])).toMatchObject({ grant_types: ['authorization_code'], allowed_scopes: [] })
})

test('--auth-method private_key_jwt with --jwks-file: no secret; a private key or an unreadable file is one line, nothing made', async () => {
  const { exportJWK, generateKeyPair } = await import('jose')
  const pair = await generateKeyPair('ES256', { extractable: true })
  const file = join(dir, 'jwks.json')
  await Bun.write(file, JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1' }] }))
  const secretFile = join(dir, 'private.json')
  await Bun.write(secretFile, JSON.stringify({ keys: [{ ...(await exportJWK(pair.privateKey)), kid: 'k1' }] }))
  expect(cli(['migrate']).code).toBe(0)
  json(['resource', 'create', '--uri', 'https://jobs.example', '--name', 'Jobs', '--scope', 'jobs:run=Run jobs'])
  refused(['client', 'create', '--name', 'Signer', '--grant', 'client_credentials', '--auth-method', 'private_key_jwt', '--jwks-file', secretFile], 'is a private or secret key')
  refused(['client', 'create', '--name', 'Signer', '--grant', 'client_credentials', '--auth-method', 'private_key_jwt', '--jwks-file', join(dir, 'missing.json')], '--jwks-file')
  const made = json(['client', 'create', '--name', 'Signer', '--grant', 'client_credentials', '--allowed-scope', 'jobs:run', '--auth-method', 'private_key_jwt', '--jwks-file', file])
  expect(made).toMatchObject({ client_secret: null, public: false, token_endpoint_auth_method: 'private_key_jwt', jwks_uri: null })
  const moved = json(['client', 'update', made.client_id as string, '--jwks-uri', 'https://signer.example/jwks.json'])
  expect(moved).toMatchObject({ token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://signer.example/jwks.json' })
  refused(['client', 'update', made.client_id as string, '--auth-method', 'client_secret'], 'has no secret to go back to')
})
