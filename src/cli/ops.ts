import pkg from '../../package.json'
import { loadConfig, redactUrl, type Config } from '../config'
import { isPostgresUrl, openStore } from '../db/open'
import { escapeForTerminal } from '../lib/text'
import { startServer } from '../server'
import { command } from './command'
import { UsageError, printJson, withStore } from './common'

export const migrateCommand = command({
  name: 'migrate',
  summary: 'apply migrations and exit (creates the database when there is none)',
  options: {},
  examples: ['migrate', '--database-url /var/lib/latchkey/latchkey.sqlite migrate'],
  json: '{applied: [migration…]}',
  async run({ json }) {
    const { store, applied } = await openStore(loadConfig())
    await store.close()
    if (json) return printJson({ applied })
    process.stdout.write(applied.length ? `applied ${applied.join(', ')}\n` : 'database is up to date\n')
  },
})

/** A consistent online copy of a SQLite database (VACUUM INTO), safe while the server runs. */
export const backupCommand = command({
  name: 'backup',
  args: 'PATH',
  positionals: 1,
  summary: 'a consistent copy of a SQLite database while it serves (PostgreSQL: pg_dump)',
  options: {},
  examples: ['backup /backups/latchkey-2026-11-22.sqlite'],
  json: '{path}',
  async run({ positionals, json }) {
    const target = positionals[0]
    if (!target) throw new UsageError('backup needs a PATH to write; see latchkey backup --help')
    const config = loadConfig()
    if (config.databaseUrl === ':memory:') throw new UsageError('DATABASE_URL is :memory:; there is nothing to back up')
    const path = target.startsWith('/') ? target : `${process.cwd()}/${target}`
    await withStore(async (store) => {
      if (store.engine !== 'sqlite')
        throw new UsageError('backup copies a SQLite database; on PostgreSQL use pg_dump (see the README, "Running several instances")')
      await store.backupTo(path, target)
    })
    if (json) return printJson({ path })
    process.stdout.write(`backed up to ${escapeForTerminal(path)}\n`)
  },
})

export const serveCommand = command({
  name: 'serve',
  summary: 'serve (the default command); creates and migrates the database first',
  detail: 'It logs one JSON line per request on stdout (--json changes nothing). Configuration: the environment, or the global options.',
  options: {},
  examples: ['serve', '--port 8080 --database-url /var/lib/latchkey/latchkey.sqlite serve'],
  json: 'nothing more: the log is JSON lines already',
  async run() {
    const running = await startServer(loadConfig())
    const shutdown = () => {
      running.stop().then(
        () => process.exit(0),
        () => process.exit(1),
      )
    }
    process.once('SIGTERM', shutdown)
    process.once('SIGINT', shutdown)
  },
})

/** Where this machine's server listens, for a probe: 0.0.0.0 and :: are reached on loopback. */
function localHealthz(config: Pick<Config, 'host' | 'port'>): string {
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.port}/healthz`
}

/** The status /healthz answers at `url`, or 0 when none came within `ms`. */
async function probe(url: string, ms: number): Promise<number> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(ms), redirect: 'manual' })).status
  } catch {
    return 0
  }
}

/** For container HEALTHCHECKs (distroless images have no curl): exit 0 when /healthz answers 200. */
export const healthcheckCommand = command({
  name: 'healthcheck',
  summary: 'exit 0 when /healthz on HOST:PORT answers 200 (for containers)',
  options: {},
  examples: ['healthcheck'],
  json: '{status: "ok", url}',
  async run({ json }) {
    const url = localHealthz(loadConfig())
    const status = await probe(url, 3000)
    if (status !== 200) throw new UnhealthyError(status ? `healthz answered ${status}` : 'no answer from healthz')
    if (json) return printJson({ status: 'ok', url })
    process.stdout.write('ok\n')
  },
})

/**
 * `latchkey status`: which database this shell's configuration names, the ISSUER recorded in it
 * (the one the server last started with) beside the configured one, the counts, and whether a
 * server answers — at the recorded ISSUER and on this machine's HOST:PORT (1.5 s each, at once).
 */
export const statusCommand = command({
  name: 'status',
  summary: 'the database in use, its ISSUER, counts, and whether a server serves it',
  detail: 'The ISSUER recorded in the database (the one the server last started with) beside the one configured here; a server is looked for at the recorded ISSUER and on HOST:PORT.',
  options: {},
  examples: ['status', '--database-url /var/lib/latchkey/latchkey.sqlite status --json'],
  json: '{version, database: {engine, location}, issuer: {configured, recorded}, counts: {users, apps, groups, active_sessions}, server: {serving, answered, tried}}',
  async run({ json }) {
    const config = loadConfig()
    const postgres = isPostgresUrl(config.databaseUrl)
    const location = postgres ? redactUrl(config.databaseUrl) : config.databaseUrl === ':memory:' ? ':memory:' : (await import('node:path')).resolve(config.databaseUrl)
    const { recorded, counts } = await withStore(async (store) => ({ recorded: await store.recordedIssuer(), counts: await store.counts(Date.now()) }))
    const tried = [...new Set([...(recorded ? [`${recorded}/healthz`] : []), localHealthz(config)])]
    const answers = await Promise.all(tried.map((url) => probe(url, 1500)))
    const answered = tried.filter((_, i) => answers[i] === 200)
    const report = {
      version: pkg.version,
      database: { engine: postgres ? 'postgres' : 'sqlite', location },
      issuer: { configured: config.issuer, recorded: recorded ?? null },
      counts: { users: counts.users, apps: counts.clients, groups: counts.groups, active_sessions: counts.activeSessions },
      server: { serving: answered.length > 0, answered, tried },
    }
    if (json) return printJson(report)
    const issuerNote = recorded === undefined ? ' (no server has started on this database yet)' : recorded === config.issuer ? ' (the same as configured here)' : ' (the server last started with it; links use it)'
    const server = answered.length
      ? `serving: ${answered.join(' and ')} answered 200`
      : `no server answers (tried ${tried.map((url, i) => `${url}${answers[i] ? `: ${answers[i]}` : ''}`).join(', ')})`
    const rows: Array<[string, string]> = [
      ['version', pkg.version],
      ['database', `${location} (${postgres ? 'PostgreSQL' : 'SQLite'})`],
      ['ISSUER recorded', `${recorded ?? 'none'}${issuerNote}`],
      ['ISSUER configured', config.issuer],
      ['users', String(counts.users)],
      ['apps', String(counts.clients)],
      ['groups', String(counts.groups)],
      ['active sessions', String(counts.activeSessions)],
      ['server', server],
    ]
    process.stdout.write(rows.map(([what, value]) => `${what.padEnd(19)}${escapeForTerminal(value)}\n`).join(''))
  },
})

export class UnhealthyError extends Error {}
