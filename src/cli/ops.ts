import { loadConfig } from '../config'
import { openStore } from '../db/open'
import { escapeForTerminal } from '../lib/text'
import { startServer } from '../server'
import { UsageError, parse, withStore } from './common'

export async function migrateCommand(args: string[]): Promise<void> {
  parse(args, {})
  const { store, applied } = await openStore(loadConfig())
  await store.close()
  process.stdout.write(applied.length ? `applied ${applied.join(', ')}\n` : 'database is up to date\n')
}

/** A consistent online copy of a SQLite database (VACUUM INTO), safe while the server runs. */
export async function backupCommand(args: string[]): Promise<void> {
  const { positionals } = parse(args, {}, 1)
  const target = positionals[0]
  if (!target) throw new UsageError('usage: latchkey backup PATH')
  const config = loadConfig()
  if (config.databaseUrl === ':memory:') throw new UsageError('DATABASE_URL is :memory:; there is nothing to back up')
  const path = target.startsWith('/') ? target : `${process.cwd()}/${target}`
  await withStore(async (store) => {
    if (store.engine !== 'sqlite')
      throw new UsageError('backup copies a SQLite database; on PostgreSQL use pg_dump (see the README, "Running several instances")')
    await store.backupTo(path, target)
  })
  process.stdout.write(`backed up to ${escapeForTerminal(path)}\n`)
}

export async function serveCommand(args: string[]): Promise<void> {
  parse(args, {})
  const running = await startServer(loadConfig())
  const shutdown = () => {
    running.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    )
  }
  process.once('SIGTERM', shutdown)
  process.once('SIGINT', shutdown)
}

/** For container HEALTHCHECKs (distroless images have no curl): exit 0 when /healthz answers 200. */
export async function healthcheckCommand(args: string[]): Promise<void> {
  parse(args, {})
  const config = loadConfig()
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host
  let status = 0
  try {
    status = (await fetch(`http://${host.includes(':') ? `[${host}]` : host}:${config.port}/healthz`, { signal: AbortSignal.timeout(3000) })).status
  } catch {}
  if (status !== 200) throw new UnhealthyError(status ? `healthz answered ${status}` : 'no answer from healthz')
  process.stdout.write('ok\n')
}

export class UnhealthyError extends Error {}
