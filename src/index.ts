#!/usr/bin/env bun
import './boot'
import pkg from '../package.json'
import { clientCommands } from './cli/client'
import { UsageError } from './cli/common'
import { dispatch, helpFor, topHelp, type Entry } from './cli/command'
import { UnhealthyError, backupCommand, healthcheckCommand, migrateCommand, serveCommand, statusCommand } from './cli/ops'
import { userCommands } from './cli/user'
import { keysCommands } from './cli/keys'
import { resourceCommands } from './cli/resource'
import { groupCommands } from './cli/group'
import { siteCommands } from './cli/site'
import { providerCommands } from './cli/provider'
import { applyCommand, exportCommand } from './cli/apply'
import { auditCommand } from './cli/audit'
import { setupLinkCommand } from './cli/setup'
import { ConfigError, redactDatabaseText, redactUrl } from './config'
import { DatabaseUnavailable, StoreRefusal } from './db/store'
import { escapeForTerminal } from './lib/text'
import { releaseJit } from './lib/jit'
import { ListenError } from './server'

/** Every command, in the order `latchkey --help` lists them; each carries its own help. */
const COMMANDS: Entry[] = [
  serveCommand,
  statusCommand,
  clientCommands,
  userCommands,
  groupCommands,
  resourceCommands,
  siteCommands,
  providerCommands,
  keysCommands,
  applyCommand,
  exportCommand,
  auditCommand,
  setupLinkCommand,
  migrateCommand,
  backupCommand,
  healthcheckCommand,
]

const HELP_HEAD = `latchkey ${pkg.version} — a self-hosted OAuth 2.0 authorization server with a settings store

Usage: latchkey [GLOBAL OPTIONS] [COMMAND [SUBCOMMAND]] [OPTIONS]   (no command: serve)`

const HELP_TAIL = `Every command takes --json (one JSON value on stdout) and --help (its options and an example):
  latchkey COMMAND --help, latchkey COMMAND SUBCOMMAND --help. Users are named by id or email.
  latchkey --help | --version

Global options (before the command): --port N, --host H, --database-url PATH|postgres://...
Configuration (environment): PORT HOST DATABASE_URL DATABASE_POOL_SIZE ISSUER SIGNUP CODE_TTL
  ACCESS_TOKEN_TTL REFRESH_TOKEN_TTL REFRESH_TOKEN_REUSE_GRACE SETTINGS_MAX_VALUE_BYTES SETTINGS_MAX_KEYS SETTINGS_MAX_USER_BYTES
  LOGIN_ATTEMPTS_PER_MINUTE TRUSTED_PROXIES LOG_LEVEL SMTP_URL MAIL_FROM EMAIL_VERIFICATION
`

const GLOBAL_FLAGS: Record<string, string> = { '--port': 'PORT', '--host': 'HOST', '--database-url': 'DATABASE_URL' }

/** Global flags are the environment variables' equivalents. */
function applyGlobalFlags(argv: string[]): string[] {
  const rest: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const [flag, inline] = arg.split(/=(.*)/s, 2) as [string, string | undefined]
    const variable = GLOBAL_FLAGS[flag]
    if (!variable || rest.length > 0) {
      rest.push(arg)
      continue
    }
    const value = inline ?? argv[++i]
    if (value === undefined) throw new UsageError(`${flag} needs a value`)
    process.env[variable] = value
  }
  return rest
}

/** A reader that stopped early (`latchkey user list | head`) is not an error: a command stops quietly. */
const brokenPipe = (error: unknown) => (error as { code?: string } | undefined)?.code === 'EPIPE'

async function main(argv: string[]): Promise<void> {
  const [command, ...args] = applyGlobalFlags(argv)
  if (command !== undefined && command !== 'serve') {
    // A command's work starts here (`serve` keeps the JIT held back until its app is made).
    releaseJit()
    // Not for the server: its log going nowhere is no reason to stop serving.
    process.stdout.on('error', (error) => {
      if (brokenPipe(error)) process.exit(0)
      throw error
    })
  }
  const write = (text: string) => void process.stdout.write(text)
  switch (command) {
    case undefined:
      return dispatch(COMMANDS, ['serve'], write)
    case '--help':
    case '-h':
      return write(topHelp(COMMANDS, HELP_HEAD, HELP_TAIL))
    case 'help':
      return write((args.length && helpFor(COMMANDS, args)) || topHelp(COMMANDS, HELP_HEAD, HELP_TAIL))
    case '--version':
    case '-v':
    case 'version':
      if (args.includes('--json')) return write(`${JSON.stringify({ version: pkg.version })}\n`)
      return write(`latchkey ${pkg.version}\n`)
    default:
      if (command.startsWith('-') && !COMMANDS.some((c) => c.name === command)) throw new UsageError(`unknown option ${escapeForTerminal(command)}; see latchkey --help`)
      return dispatch(COMMANDS, [command, ...args], write)
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (brokenPipe(error)) process.exit(0)
  if (error instanceof UnhealthyError) {
    process.stderr.write(`latchkey: unhealthy: ${escapeForTerminal(error.message)}\n`)
    process.exit(1)
  }
  if (error instanceof ListenError) {
    process.stderr.write(`latchkey: ${escapeForTerminal(error.message)}\n`)
    process.exit(1)
  }
  if (error instanceof DatabaseUnavailable) {
    const cause = (error.cause as { message?: string } | undefined)?.message
    const url = process.env.DATABASE_URL ?? ''
    process.stderr.write(`latchkey: cannot reach the database at DATABASE_URL (${redactUrl(url)})${cause ? `: ${escapeForTerminal(redactDatabaseText(cause, url))}` : ''}\n`)
    process.exit(1)
  }
  if (error instanceof UsageError || error instanceof ConfigError || error instanceof StoreRefusal) {
    process.stderr.write(`latchkey: ${escapeForTerminal(error.message)}\n`)
    process.exit(2)
  }
  process.stderr.write(`latchkey: unexpected error: ${(error as Error)?.name ?? 'Error'}\n`)
  process.exit(1)
})
