import { loadConfig } from '../config'
import { createDatabaseFile, openDb } from '../db/client'
import { migrate } from '../db/migrate'
import { startServer } from '../server'
import { UsageError, parse } from './common'
import { escapeForTerminal } from '../lib/text'

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

/**
 * Claims the backup file: created here, mode 0600, failing if anything — a file, a directory or
 * a symlink, dangling or not — is already at that path (O_CREAT|O_EXCL never follows a link).
 */
function claimBackupFile(path: string, shown: string): void {
  const fs = require('node:fs') as typeof import('node:fs')
  try {
    fs.closeSync(fs.openSync(path, 'wx', 0o600))
  } catch (error) {
    const code = (error as { code?: string }).code
    if (code === 'EEXIST') throw new UsageError(`"${shown}" already exists (or is a link); choose a new file`)
    throw new UsageError(`cannot create "${shown}": ${code ?? 'error'}`)
  }
}

/** A consistent online copy (VACUUM INTO), safe while the server runs. */
export async function backupCommand(args: string[]): Promise<void> {
  const { positionals } = parse(args, {}, 1)
  const target = positionals[0]
  if (!target) throw new UsageError('usage: latchkey backup PATH')
  const path = target.startsWith('/') ? target : `${process.cwd()}/${target}`
  const config = loadConfig()
  if (config.databaseUrl === ':memory:') throw new UsageError('DATABASE_URL is :memory:; there is nothing to back up')
  claimBackupFile(path, target)
  const db = openDb(config.databaseUrl)
  try {
    migrate(db.sqlite)
    // VACUUM INTO fills an empty file; the one just created, 0600.
    db.sqlite.query('VACUUM INTO ?').run(path)
  } catch (error) {
    ;(require('node:fs') as typeof import('node:fs')).rmSync(path, { force: true })
    throw error
  } finally {
    db.sqlite.close()
  }
  process.stdout.write(`backed up to ${escapeForTerminal(path)}\n`)
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
