import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pkg from '../../package.json'
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

function run(args: string[], stdin?: string) {
  const r = Bun.spawnSync([bin, ...args], {
    cwd: dir,
    env: { PATH: '', HOME: dir },
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
      { client_id: created.client_id, name: 'Bin', redirect_uris: ['https://b.example/cb'], public: false, skip_consent: false },
    ])
    const rotated = JSON.parse(run(['client', 'rotate-secret', created.client_id]).out)
    expect(rotated.client_secret).not.toBe(created.client_secret)

    const user = JSON.parse(run(['user', 'create', '--email', 'b@example.com', '--name', 'Bea', '--password-stdin'], 'binary password\n').out)
    expect(run(['user', 'list']).out).toContain('b@example.com')
    expect(JSON.parse(run(['user', 'list', '--json']).out)).toEqual([user])

    expect(run(['backup', 'copy.sqlite']).code).toBe(0)
    expect(existsSync(join(dir, 'copy.sqlite'))).toBe(true)

    expect(run(['user', 'delete', user.id]).code).toBe(0)
    expect(run(['client', 'delete', created.client_id]).code).toBe(0)
    expect(JSON.parse(run(['client', 'list', '--json']).out)).toEqual([])

    const bad = run(['client', 'delete', 'nope'])
    expect(bad.code).toBe(2)
    expect(bad.err).toBe('latchkey: no client with id "nope"\n')
  })
})
