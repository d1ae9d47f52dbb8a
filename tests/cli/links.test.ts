import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../src/config'
import { openStore } from '../../src/db/open'
import { createLogger } from '../../src/lib/log'
import { startServer } from '../../src/server'
import { freshPgDatabase } from '../pg-store'
import { testEngine } from '../store'

// Spawns CLI processes: slower than in-process tests on a busy machine.
setDefaultTimeout(60_000)

/**
 * SPEC, links made by the CLI: `user invite`, `user reset-link` and `apply`'s invitations name the
 * ISSUER the server last started with (recorded in the database), not the shell's.
 */
const dir = mkdtempSync(join(tmpdir(), 'latchkey-links-'))
const entry = join(import.meta.dir, '../../src/index.ts')
let databaseUrl: string

beforeAll(async () => {
  databaseUrl = testEngine === 'postgres' ? await freshPgDatabase() : join(dir, 'latchkey.sqlite')
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function cli(args: string[], issuer?: string) {
  const proc = Bun.spawnSync(['bun', entry, ...args], {
    env: { PATH: process.env.PATH!, HOME: dir, DATABASE_URL: databaseUrl, LOG_LEVEL: 'error', ...(issuer ? { ISSUER: issuer } : {}) },
    stdin: 'ignore',
    cwd: dir,
  })
  return { code: proc.exitCode, out: proc.stdout.toString(), err: proc.stderr.toString() }
}

async function serveOnce(issuer: string) {
  const running = await startServer(loadConfig({ DATABASE_URL: databaseUrl, HOST: '127.0.0.1', PORT: '0', ISSUER: issuer }), createLogger('error', () => {}))
  await running.stop()
}

async function recorded(): Promise<string | undefined> {
  const { store } = await openStore(loadConfig({ DATABASE_URL: databaseUrl }))
  try {
    return await store.recordedIssuer()
  } finally {
    await store.close()
  }
}

const SERVER = 'http://id.example.test:8443'
const link = (issuer: string) => new RegExp(`^${issuer.replaceAll('.', '\\.')}/reset-password\\?token=[A-Za-z0-9_-]{43}\\n$`)

describe('links made by the CLI', () => {
  test('with no server ever started, the CLI’s own ISSUER (default http://localhost:3000) makes the link', async () => {
    // Only serve and migrate make a database (SPEC, CLI).
    expect(cli(['migrate']).code).toBe(0)
    expect(await recorded()).toBeUndefined()
    const plain = cli(['user', 'invite', '--email', 'first@example.com', '--name', 'First'])
    expect({ code: plain.code, err: plain.err }).toEqual({ code: 0, err: '' })
    expect(plain.out).toMatch(link('http://localhost:3000'))
    const own = cli(['user', 'invite', '--email', 'second@example.com', '--name', 'Second'], 'http://cli.example.test')
    expect({ code: own.code, err: own.err }).toEqual({ code: 0, err: '' })
    expect(own.out).toMatch(link('http://cli.example.test'))
  })

  test('serve records the ISSUER it starts with; a later start replaces it', async () => {
    await serveOnce('http://old.example.test')
    expect(await recorded()).toBe('http://old.example.test')
    await serveOnce(`${SERVER}/`)
    expect(await recorded()).toBe(SERVER)
  })

  test('user invite and user reset-link name the recorded ISSUER; one set in the CLI that differs warns once', () => {
    const invited = cli(['user', 'invite', '--email', 'ada@example.com', '--name', 'Ada'])
    expect({ code: invited.code, err: invited.err }).toEqual({ code: 0, err: '' })
    expect(invited.out).toMatch(link(SERVER))

    const other = cli(['user', 'invite', '--email', 'bob@example.com', '--name', 'Bob'], 'http://localhost:3000')
    expect(other.code).toBe(0)
    expect(other.out).toMatch(link(SERVER))
    expect(other.err).toBe(`latchkey: warning: ISSUER is http://localhost:3000 here, but the server last started with ${SERVER}: links use ${SERVER}\n`)

    expect(cli(['user', 'invite', '--email', 'cy@example.com', '--name', 'Cy'], SERVER)).toMatchObject({ code: 0, err: '' })

    const id = (JSON.parse(cli(['user', 'list', '--json']).out) as Array<{ id: string; email: string }>).find((u) => u.email === 'ada@example.com')!.id
    const reset = cli(['user', 'reset-link', id])
    expect({ code: reset.code, err: reset.err }).toEqual({ code: 0, err: '' })
    expect(reset.out).toMatch(link(SERVER))
  })

  test('apply’s invitations name the recorded ISSUER', () => {
    const file = join(dir, 'users.yaml')
    writeFileSync(file, 'users:\n  - email: dee@example.com\n    full_name: Dee\n')
    const applied = cli(['apply', file])
    expect({ code: applied.code, err: applied.err }).toEqual({ code: 0, err: '' })
    expect(applied.out).toMatch(new RegExp(`^invitation for dee@example\\.com: ${SERVER.replaceAll('.', '\\.')}/reset-password\\?token=[A-Za-z0-9_-]{43}$`, 'm'))
  })
})
