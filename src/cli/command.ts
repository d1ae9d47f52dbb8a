import { escapeForTerminal } from '../lib/text'
import { UsageError, parse, type Options, type Values } from './common'

/**
 * One CLI command, described as data: its help (summary, options, examples) sits next to what it
 * does, and `latchkey --help`, `latchkey GROUP --help` and `latchkey GROUP COMMAND --help` are all
 * made from these descriptions, so the help and the parser never disagree.
 */
export interface Command<O extends Options = Options> {
  name: string
  /** The plain arguments as the synopsis shows them (`ID`, `NAME USER`, `[FILE]`); at most `positionals` of them. */
  args?: string
  positionals?: number
  /** One line, for the lists. */
  summary: string
  /** More lines for the command's own help. */
  detail?: string
  options: O
  /** At least one: what to type (without the leading `latchkey`). */
  examples: [string, ...string[]]
  /** What --json prints, in the help (every command takes it). */
  json?: string
  run(input: { values: Values<O>; positionals: string[]; json: boolean }): Promise<void>
}

/** A command with subcommands (`client create`, `client list` …). */
export interface CommandGroup {
  name: string
  summary: string
  commands: Command[]
}

export type Entry = Command | CommandGroup

/** Keeps the option table's literal types, so `values` is typed from it. */
export function command<const O extends Options>(c: Command<O>): Command {
  return c as unknown as Command
}

const isGroup = (entry: Entry): entry is CommandGroup => 'commands' in entry

const JSON_OPTION = { type: 'boolean', help: 'print one JSON value on stdout' } as const
const HELP_OPTION = { type: 'boolean', help: 'this help' } as const

function optionLabel(name: string, spec: Options[string]): string {
  return `--${name}${spec.type === 'string' ? ` ${spec.arg ?? 'VALUE'}` : ''}${spec.multiple ? '...' : ''}`
}

/** `client create --name NAME --redirect-uri URL... [options]`: the required options and the arguments. */
export function synopsis(path: string, c: Command): string {
  const required = Object.entries(c.options)
    .filter(([, spec]) => spec.required)
    .map(([name, spec]) => optionLabel(name, spec))
  const optional = Object.values(c.options).some((spec) => !spec.required)
  return [path, ...required, ...(c.args ? [c.args] : []), ...(optional ? ['[options]'] : [])].join(' ')
}

const wrap = (label: string, text: string, width: number) => (label.length < width ? `  ${label.padEnd(width)}${text}` : `  ${label}\n  ${' '.repeat(width)}${text}`)

/** `latchkey client create --help`. */
export function commandHelp(path: string, c: Command): string {
  const options: Options = { ...c.options, json: { ...JSON_OPTION, help: c.json ? `print ${c.json}` : JSON_OPTION.help }, help: HELP_OPTION }
  const labels = Object.entries(options).map(([name, spec]) => [optionLabel(name, spec), spec.help + (spec.required ? ' (required)' : '')] as const)
  const width = Math.min(34, Math.max(...labels.map(([label]) => label.length)) + 2)
  return [
    `latchkey ${path} — ${c.summary}`,
    '',
    `Usage: latchkey ${synopsis(path, c)}`,
    ...(c.detail ? ['', c.detail] : []),
    '',
    'Options:',
    ...labels.map(([label, text]) => wrap(label, text, width)),
    '',
    c.examples.length > 1 ? 'Examples:' : 'Example:',
    ...c.examples.map((e) => `  latchkey ${e}`),
    '',
  ].join('\n')
}

/** The commands' lines of a list: synopsis, then the summary. */
function listing(entries: Entry[]): string[] {
  const rows = entries.flatMap((e) => (isGroup(e) ? e.commands.map((c) => [synopsis(`${e.name} ${c.name}`, c), c.summary]) : [[synopsis(e.name, e), e.summary]]))
  return rows.map(([label, summary]) => wrap(`latchkey ${label}`, summary!, 44))
}

/** `latchkey client --help`. */
export function groupHelp(g: CommandGroup): string {
  return [
    `latchkey ${g.name} — ${g.summary}`,
    '',
    'Commands:',
    ...listing([g]),
    '',
    `Every command takes --json (one JSON value on stdout) and --help (its options and an example): latchkey ${g.name} COMMAND --help.`,
    '',
    'Examples:',
    ...g.commands.map((c) => `  latchkey ${c.examples[0]}`),
    '',
  ].join('\n')
}

/** `latchkey --help`: every command's line, made from the same descriptions. */
export function topHelp(entries: Entry[], head: string, tail: string): string {
  return [head, '', 'Commands:', ...listing(entries), '', tail].join('\n')
}

const asksHelp = (args: string[]) => {
  const end = args.indexOf('--')
  return (end < 0 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h')
}

/**
 * Runs `latchkey COMMAND [SUBCOMMAND] ARGS…` from the table. `--help` anywhere prints that
 * command's help (before any check, touching no database); an unknown command, subcommand or
 * option is one line naming it and the help to read (exit 2).
 */
export async function dispatch(entries: Entry[], argv: string[], write: (text: string) => void): Promise<void> {
  const [name, ...rest] = argv
  const entry = entries.find((e) => e.name === name)
  if (!entry) throw new UsageError(`unknown command "${escapeForTerminal(name ?? '')}"; see latchkey --help`)
  let path = entry.name
  let c: Command
  let args = rest
  if (isGroup(entry)) {
    const [sub, ...subArgs] = rest
    const names = entry.commands.map((x) => x.name).join(', ')
    if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
      if (sub === undefined) throw new UsageError(`"${entry.name}" needs a command (${names}); see latchkey ${entry.name} --help`)
      return write(groupHelp(entry))
    }
    const found = entry.commands.find((x) => x.name === sub)
    if (!found) throw new UsageError(`unknown command "${escapeForTerminal(sub)}" for "${entry.name}" (${names}); see latchkey ${entry.name} --help`)
    c = found
    path = `${entry.name} ${sub}`
    args = subArgs
  } else c = entry
  if (asksHelp(args)) return write(commandHelp(path, c))
  const { values, positionals } = parse(args, { ...c.options, json: JSON_OPTION }, c.positionals ?? 0, path)
  const { json, ...own } = values as Record<string, unknown>
  await c.run({ values: own as Values<Options>, positionals, json: json === true })
}

/** `latchkey help [COMMAND [SUBCOMMAND]]`: the same as `--help` after them. */
export function helpFor(entries: Entry[], words: string[]): string | undefined {
  const entry = entries.find((e) => e.name === words[0])
  if (!entry) return undefined
  if (!isGroup(entry)) return commandHelp(entry.name, entry)
  const c = entry.commands.find((x) => x.name === words[1])
  return c ? commandHelp(`${entry.name} ${c.name}`, c) : groupHelp(entry)
}
