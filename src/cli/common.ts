import { loadConfig, type Config } from '../config'
import { existsSync } from 'node:fs'
import { isPostgresUrl, openStore } from '../db/open'
import { userByRef } from '../accounts/groups'
import { InputError } from '../lib/errors'
import type { Store, UserRecord } from '../db/store'
import { escapeForTerminal, terminalSafeJson } from '../lib/text'

/** A bad argument: exit 2 with one line on stderr, nothing changed. */
export class UsageError extends Error {}

/** Runs `fn`; a domain's InputError (a bad name, a taken email, an unknown group) becomes a UsageError. */
export async function inputError<T>(fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (error) {
    throw error instanceof InputError ? new UsageError(error.message) : error
  }
}

/**
 * One option of a command, as its help shows it: `arg` names the value (`--name NAME`), `help`
 * says what it does. `required` options are checked by the command (the synopsis shows them
 * without brackets).
 */
export interface OptionSpec {
  type: 'string' | 'boolean'
  multiple?: boolean
  arg?: string
  help: string
  required?: boolean
}
export type Options = Record<string, OptionSpec>
export type Values<T extends Options> = {
  [K in keyof T]?: T[K]['type'] extends 'boolean' ? boolean : T[K]['multiple'] extends true ? string[] : string
}

/**
 * `--name value`, `--name=value`, boolean `--flag`, repeatable options, and at most
 * `positionals` plain arguments. (A few lines instead of node:util, which the server would
 * otherwise load at start-up.) `where` ("client create") names the command in errors, with the
 * help to read.
 */
export function parse<T extends Options>(args: string[], options: T, positionals = 0, where?: string): { values: Values<T>; positionals: string[] } {
  const see = where === undefined ? '' : ` for "${where}"; see latchkey ${where} --help`
  const values: Record<string, string | boolean | string[]> = {}
  const plain: string[] = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (!arg.startsWith('--') || arg === '--') {
      plain.push(arg)
      continue
    }
    const eq = arg.indexOf('=')
    const name = arg.slice(2, eq < 0 ? undefined : eq)
    const spec = Object.hasOwn(options, name) ? options[name] : undefined
    if (!spec) throw new UsageError(`unknown option --${escapeForTerminal(name)}${see}`)
    if (spec.type === 'boolean') {
      if (eq >= 0) throw new UsageError(`option --${name} takes no value${see}`)
      values[name] = true
      continue
    }
    const value = eq >= 0 ? arg.slice(eq + 1) : args[++i]
    if (value === undefined) throw new UsageError(`option --${name} needs a value${see}`)
    if (spec.multiple) values[name] = [...((values[name] as string[] | undefined) ?? []), value]
    else values[name] = value
  }
  if (plain.length > positionals) throw new UsageError(`unexpected argument "${escapeForTerminal(plain[positionals]!)}"${see}`)
  return { values: values as Values<T>, positionals: plain }
}

/** `--flag true|false` (the update commands): the boolean, or undefined when not given. */
export function trueOrFalse(name: string, value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined
  if (value !== 'true' && value !== 'false') throw new UsageError(`--${name} must be true or false`)
  return value === 'true'
}

/**
 * SPEC, CLI: only `serve` and `migrate` make a database. Any other command on a SQLite path with
 * no file stops here — a typo'd DATABASE_URL or the wrong folder would otherwise get an empty
 * database (and a data/ folder) of its own, and the change would go where no server looks.
 */
export function checkDatabaseExists(config: Pick<Config, 'databaseUrl'>): void {
  const url = config.databaseUrl
  if (url === ':memory:' || isPostgresUrl(url) || existsSync(url)) return
  throw new UsageError(`no database at ${escapeForTerminal(url)}; start the server (latchkey serve) or pass --database-url`)
}

/** Opens the configured database, migrated, for one command; never a new one (checkDatabaseExists). */
export async function withStore<T>(fn: (store: Store, config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig()
  checkDatabaseExists(config)
  const { store } = await openStore(config)
  try {
    return await fn(store, config)
  } finally {
    await store.close()
  }
}

/**
 * The config the CLI makes links with (invitations, reset links): SPEC — they name the ISSUER the
 * server last started with, which it records, not this shell's (whose default, localhost, would
 * make dead links). An ISSUER set here that differs gets one warning line; with none recorded (no
 * server ever started on this database) the CLI's own is all there is.
 */
export async function linkConfig(store: Store, config: Config, env: Record<string, string | undefined> = process.env): Promise<Config> {
  const recorded = await store.recordedIssuer()
  if (recorded === undefined || recorded === config.issuer) return config
  if (env.ISSUER) process.stderr.write(`latchkey: warning: ISSUER is ${escapeForTerminal(config.issuer)} here, but the server last started with ${escapeForTerminal(recorded)}: links use ${escapeForTerminal(recorded)}\n`)
  return { ...config, issuer: recorded }
}

/** Output that may hold user data never carries a raw control character to the terminal. */
export function printJson(value: unknown): void {
  process.stdout.write(terminalSafeJson(value, 2) + '\n')
}

export function printTable(table: Array<Record<string, string>>): void {
  if (table.length === 0) return
  const rows = table.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, escapeForTerminal(v)])))
  const keys = Object.keys(rows[0]!)
  const widths = keys.map((k) => Math.max(k.length, ...rows.map((r) => r[k]!.length)))
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()
  process.stdout.write([line(keys), ...rows.map((r) => line(keys.map((k) => r[k]!)))].join('\n') + '\n')
}

/** An operator's change made from the CLI, in the audit log (no request: no address). */
export function cliAudit(store: Store, kind: string, fields: { userId?: string; clientId?: string; detail?: Record<string, string | number | boolean> } = {}): Promise<void> {
  return store.audit.record([
    { at: Date.now(), kind, userId: fields.userId ?? null, clientId: fields.clientId ?? null, address: null, userAgent: 'latchkey CLI', detail: JSON.stringify({ actor: 'cli', ...fields.detail }) },
  ])
}

/** A user named on the command line by id or by email (SPEC, CLI: everywhere a user is an argument). */
export async function namedUser(store: Store, ref: string): Promise<UserRecord> {
  const user = await userByRef(store, ref)
  if (!user) throw new UsageError(`no user "${escapeForTerminal(ref)}"`)
  return user
}
