import { loadConfig, type Config } from '../config'
import { openStore } from '../db/open'
import { InputError } from '../lib/errors'
import type { Store } from '../db/store'
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

type OptionSpec = Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>
type Values<T extends OptionSpec> = {
  [K in keyof T]?: T[K]['type'] extends 'boolean' ? boolean : T[K]['multiple'] extends true ? string[] : string
}

/**
 * `--name value`, `--name=value`, boolean `--flag`, repeatable options, and at most
 * `positionals` plain arguments. (A few lines instead of node:util, which the server would
 * otherwise load at start-up.)
 */
export function parse<T extends OptionSpec>(args: string[], options: T, positionals = 0): { values: Values<T>; positionals: string[] } {
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
    const spec = options[name]
    if (!spec) throw new UsageError(`unknown option "--${name}"`)
    if (spec.type === 'boolean') {
      if (eq >= 0) throw new UsageError(`option "--${name}" takes no value`)
      values[name] = true
      continue
    }
    const value = eq >= 0 ? arg.slice(eq + 1) : args[++i]
    if (value === undefined) throw new UsageError(`option "--${name}" needs a value`)
    if (spec.multiple) values[name] = [...((values[name] as string[] | undefined) ?? []), value]
    else values[name] = value
  }
  if (plain.length > positionals) throw new UsageError(`unexpected argument "${plain[positionals]}"`)
  return { values: values as Values<T>, positionals: plain }
}

/** Opens the configured database, migrated, for one command. */
export async function withStore<T>(fn: (store: Store, config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig()
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
