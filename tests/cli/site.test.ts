import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

setDefaultTimeout(30_000)

const dir = mkdtempSync(join(tmpdir(), 'latchkey-cli-site-'))
const entry = join(import.meta.dir, '../../src/index.ts')
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function cli(args: string[]) {
  const proc = Bun.spawnSync(['bun', entry, ...args], { env: { ...process.env, DATABASE_URL: join(dir, 'latchkey.sqlite'), LOG_LEVEL: 'error' }, stdin: 'ignore', cwd: dir })
  return { code: proc.exitCode, out: proc.stdout.toString(), err: proc.stderr.toString() }
}

describe('latchkey site', () => {
  test('create, rule add (in order), list and list --json, delete; bad input exits 2 with one line and changes nothing', () => {
    // Commands other than serve and migrate never create a database.
    expect(cli(['migrate']).code).toBe(0)
    expect(cli(['group', 'create', 'family']).code).toBe(0)
    const made = cli(['site', 'create', '--host', 'Photos.Example.com', '--name', 'Photos', '--allowed-group', 'family', '--jwt'])
    expect(made.code).toBe(0)
    expect(JSON.parse(made.out)).toEqual({ host: 'photos.example.com', name: 'Photos', policy: 'one-factor', allowed_groups: ['family'], jwt: true, rules: [] })
    expect(cli(['site', 'create', '--host', '*.example.org', '--name', 'Wikis', '--policy', 'two-factor']).code).toBe(0)
    expect(JSON.parse(cli(['site', 'rule', 'add', 'photos.example.com', '--path', '^/public/', '--path', '^/shared/', '--method', 'get', '--policy', 'bypass']).out)).toEqual({ paths: ['^/public/', '^/shared/'], methods: ['GET'], networks: [], clients: [], policy: 'bypass' })
    expect(cli(['site', 'rule', 'add', 'photos.example.com', '--network', '10.0.0.0/8', '--client', 'robot', '--policy', 'one-factor']).code).toBe(0)
    expect(cli(['site', 'list']).out).toBe(
      ['host                name    policy      allowed_groups  jwt    rules', 'photos.example.com  Photos  one-factor  family          true   2', '*.example.org       Wikis   two-factor                  false  0', ''].join('\n'),
    )
    const listed = JSON.parse(cli(['site', 'list', '--json']).out)
    expect(listed[0].rules.map((r: { policy: string }) => r.policy)).toEqual(['bypass', 'one-factor'])
    const refusals: Array<[string[], string]> = [
      [['site', 'create', '--host', 'photos.example.com:443', '--name', 'X'], 'latchkey: host "photos.example.com:443" must be a DNS name without port (photos.example.com), or *.example.com for its subdomains\n'],
      [['site', 'create', '--host', 'photos.example.com', '--name', 'Again'], 'latchkey: a site for "photos.example.com" exists already\n'],
      [['site', 'create', '--host', 'x.example.com'], 'latchkey: --name is required\n'],
      [['site', 'rule', 'add', 'photos.example.com', '--path', '(', '--policy', 'deny'], 'latchkey: --path "(" is not a regular expression\n'],
      [
        ['site', 'rule', 'add', 'photos.example.com', '--path', '^/(?!public/)', '--policy', 'deny'],
        'latchkey: --path "^/(?!public/)" is JavaScript syntax that RE2 does not read (a look-around, a back-reference, a \\u escape, a repetition count over 1000): paths are matched in linear time, with RE2\'s syntax, as Authelia\'s are\n',
      ],
      [['site', 'rule', 'add', 'nowhere.example.com', '--policy', 'deny'], 'latchkey: no site for "nowhere.example.com"\n'],
      [['site', 'delete', 'nowhere.example.com'], 'latchkey: no site for "nowhere.example.com"\n'],
      [['site', 'frobnicate'], 'latchkey: unknown command "frobnicate" for "site" (create, rule, list, delete); see latchkey site --help\n'],
    ]
    for (const [args, err] of refusals) expect(cli(args)).toEqual({ code: 2, out: '', err })
    expect(JSON.parse(cli(['site', 'list', '--json']).out)).toEqual(listed)
    expect(cli(['site', 'delete', '*.example.org'])).toEqual({ code: 0, out: 'deleted site *.example.org\n', err: '' })
    expect(JSON.parse(cli(['site', 'list', '--json']).out).map((s: { host: string }) => s.host)).toEqual(['photos.example.com'])
    expect(cli(['site', '--help']).out).toContain('latchkey site rule add HOST')
  })
})
