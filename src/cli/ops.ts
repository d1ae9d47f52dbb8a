import { loadConfig } from '../config'
import { createDatabaseFile, openDb } from '../db/client'
import { migrate } from '../db/migrate'
import { startServer } from '../server'
import { UsageError, parse } from './common'

export function migrateCommand(args: string[]): void {
  parse(args, {})
  const config = loadConfig()
  const db = openDb(config.databaseUrl)
  try {
    const { applied } = migrate(db.sqlite)
    process.stdout.write(applied.length ? `applied ${applied.join(', ')}\n` : 'database is up to date\n')
  } finally {
    db.sqlite.close()
  }
}

/** A consistent online copy (VACUUM INTO), safe while the server runs. */
export async function backupCommand(args: string[]): Promise<void> {
  const { positionals } = parse(args, {}, 1)
  const target = positionals[0]
  if (!target) throw new UsageError('usage: latchkey backup PATH')
  const path = target.startsWith('/') ? target : `${process.cwd()}/${target}`
  if (await Bun.file(path).exists()) throw new UsageError(`"${target}" already exists; choose a new file`)
  const config = loadConfig()
  if (config.databaseUrl === ':memory:') throw new UsageError('DATABASE_URL is :memory:; there is nothing to back up')
  const db = openDb(config.databaseUrl)
  try {
    migrate(db.sqlite)
    db.sqlite.query('VACUUM INTO ?').run(path)
  } finally {
    db.sqlite.close()
  }
  process.stdout.write(`backed up to ${path}\n`)
}

export async function serveCommand(args: string[]): Promise<void> {
  parse(args, {})
  const config = loadConfig()
  await createDatabaseFile(config.databaseUrl)
  const running = startServer(config)
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
