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
