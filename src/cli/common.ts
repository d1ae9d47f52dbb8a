import { parseArgs, type ParseArgsConfig } from 'node:util'
import { loadConfig, type Config } from '../config'
import { openDb, type Db } from '../db/client'
import { migrate } from '../db/migrate'

/** A bad argument: exit 2 with one line on stderr, nothing changed. */
export class UsageError extends Error {}

export function parse<T extends ParseArgsConfig['options']>(args: string[], options: T, positionals = 0) {
  let parsed
  try {
    parsed = parseArgs({ args, options, allowPositionals: positionals > 0, strict: true })
  } catch (error) {
    throw new UsageError((error as Error).message.split('\n')[0]!)
  }
  if (parsed.positionals.length > positionals) throw new UsageError(`unexpected argument "${parsed.positionals[positionals]}"`)
  return parsed
}

/** Opens the configured database, migrated, for one command. */
export function withDb<T>(fn: (db: Db, config: Config) => T): T {
  const config = loadConfig()
  const db = openDb(config.databaseUrl)
  try {
    migrate(db.sqlite)
    return fn(db, config)
  } finally {
    db.sqlite.close()
  }
}

export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n')
}

export function printTable(rows: Array<Record<string, string>>): void {
  if (rows.length === 0) return
  const keys = Object.keys(rows[0]!)
  const widths = keys.map((k) => Math.max(k.length, ...rows.map((r) => r[k]!.length)))
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()
  process.stdout.write([line(keys), ...rows.map((r) => line(keys.map((k) => r[k]!)))].join('\n') + '\n')
}
