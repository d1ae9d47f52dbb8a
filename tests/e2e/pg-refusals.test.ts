/**
 * Issue 18 items 7 and 8, against the compiled binary on PostgreSQL: a database that refuses
 * connections (ALLOW_CONNECTIONS false, as during a restore or fail-over) is 503 with
 * Retry-After for the API and one line for the CLI; a wrong password or a missing database at
 * start is one line naming DATABASE_URL, never the password. PostgreSQL pass only.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { SQL } from 'bun'
import { connect } from '../../src/db/pg/connect'
import { testEngine } from '../store'
import { discover, obtainToken, registerClient, registerUser } from './flow'
import { binary, startBinary, type RunningBinary } from './server'

setDefaultTimeout(60_000)

const onPostgres = testEngine === 'postgres'
let server: RunningBinary
let admin: SQL

function run(args: string[], env: Record<string, string>) {
  return binary().then((bin) => {
    const r = Bun.spawnSync([bin, ...args], { env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'pipe' })
    return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() }
  })
}

beforeAll(async () => {
  if (!onPostgres) return
  server = await startBinary()
  admin = connect(process.env.LATCHKEY_TEST_DATABASE_URL!, { max: 1 })
})

afterAll(async () => {
  if (!onPostgres) return
  const name = new URL(server.databaseUrl).pathname.slice(1)
  await admin.unsafe(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`)
  server?.cleanup()
  await admin?.close()
})

describe.skipIf(!onPostgres)('PostgreSQL that refuses connections (SQLSTATE 55000, 3D000, 28P01)', () => {
  test('ALLOW_CONNECTIONS false while serving: the API answers 503 temporarily_unavailable with Retry-After; the CLI one line, exit 1', async () => {
    const client = registerClient(server)
    registerUser(server, 'closed@example.com')
    const token = (await obtainToken(server, await discover(server), client, 'closed@example.com', 'email')).access_token
    const name = new URL(server.databaseUrl).pathname.slice(1)
    await admin.unsafe(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`)
    // The pool's open connections still work; new ones are refused. Ending them forces new ones.
    await admin.unsafe(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND pid <> pg_backend_pid()`)
    let res: Response | undefined
    const started = performance.now()
    // The first request after the terminations may meet a dying connection: wait for the steady answer.
    do res = await fetch(`${server.url}/api/settings`, { headers: { authorization: `Bearer ${token}` } })
    while (res.status !== 503 && performance.now() - started < 5000)
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/)
    expect(await res.json()).toMatchObject({ error: 'temporarily_unavailable' })
    const health = await fetch(`${server.url}/healthz`)
    expect(health.status).toBe(503)
    const cli = server.cli(['user', 'list'])
    expect(cli.code).toBe(1)
    expect(cli.err.trim().split('\n')).toHaveLength(1)
    expect(cli.err).toStartWith('latchkey: cannot reach the database at DATABASE_URL')
    expect(cli.err).not.toContain('unexpected error')
    await admin.unsafe(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`)
    const back = performance.now()
    while ((await fetch(`${server.url}/healthz`)).status !== 200) {
      if (performance.now() - back > 5000) throw new Error('service did not resume')
      await Bun.sleep(20)
    }
  })

  test('a wrong password, a missing database, a password in ?password= or with a raw @: one line naming DATABASE_URL, no password', async () => {
    const good = new URL(process.env.LATCHKEY_TEST_DATABASE_URL!)
    const wrong = new URL(good.href)
    wrong.password = 'Wr0ngSecretValue'
    const missing = new URL(good.href)
    missing.pathname = '/no_such_database'
    const query = `postgres://${good.username}@${good.host}/no_such_database?password=Sekr3tInQuery`
    const rawAt = `postgres://${good.username}:p@ssw0rdRaw@${good.host}/postgres`
    for (const [url, secret] of [
      [wrong.href, 'Wr0ngSecretValue'],
      [missing.href, decodeURIComponent(good.password)],
      [query, 'Sekr3tInQuery'],
      [rawAt, 'ssw0rdRaw'],
    ] as const) {
      const r = await run(['migrate'], { DATABASE_URL: url })
      expect([url, r.code]).toEqual([url, 1])
      expect(r.err.trim().split('\n')).toHaveLength(1)
      expect(r.err).toStartWith('latchkey: cannot reach the database at DATABASE_URL (')
      expect(r.err).not.toContain(secret)
      expect(r.err).not.toContain('unexpected error')
    }
  })
})
