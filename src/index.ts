#!/usr/bin/env bun
import './boot'
import pkg from '../package.json'
import { clientCommand } from './cli/client'
import { UsageError } from './cli/common'
import { UnhealthyError, backupCommand, healthcheckCommand, migrateCommand, serveCommand } from './cli/ops'
import { userCommand } from './cli/user'
import { keysCommand } from './cli/keys'
import { resourceCommand } from './cli/resource'
import { groupCommand } from './cli/group'
import { siteCommand } from './cli/site'
import { applyCommand, exportCommand } from './cli/apply'
import { auditCommand } from './cli/audit'
import { ConfigError, redactDatabaseText, redactUrl } from './config'
import { DatabaseUnavailable, StoreRefusal } from './db/store'
import { escapeForTerminal } from './lib/text'
import { releaseJit } from './lib/jit'
import { ListenError } from './server'

const HELP = `latchkey ${pkg.version} — a self-hosted OAuth 2.0 authorization server with a settings store

Usage:
  latchkey [serve]                     serve (default); migrates the database first
  latchkey client create --name NAME --redirect-uri URL [--redirect-uri URL]...
                        [--post-logout-redirect-uri URL]... [--public] [--skip-consent] [--require-mfa]
                        [--allowed-group NAME]...   (only members of these groups may authorize it)
                        [--id-token-alg RS256|ES256|EdDSA]   (how its ID tokens are signed; RS256)
                        [--introspect CLIENT_ID... | --introspect '*']   (a resource server: may introspect
                                                     these clients' access tokens, or every client's)
  latchkey client update ID [--require-mfa true|false] [--allowed-group NAME]... [--id-token-alg ALG]   (--allowed-group '': everyone)
                        [--introspect CLIENT_ID... | --introspect '*' | --introspect '']   ('': none)
  latchkey client list [--json]
  latchkey client delete ID
  latchkey client rotate-secret ID
  latchkey client registration-token   (an initial access token for DYNAMIC_REGISTRATION=token, valid 7 days)
  latchkey user create --email E --name N [--avatar-url URL] [--admin] --password-stdin
  latchkey user list [--json]
  latchkey user update ID [--admin true|false] [--disabled true|false]
                                       disabled: cannot sign in; every session and token ends at once
  latchkey user delete ID
  latchkey user invite --email E --name N [--print-link]
                                       a user without a password, and a 7-day link to choose one
                                       (mailed; printed with --print-link or without SMTP_URL)
  latchkey user reset-link ID          print a 30-minute password reset link
  latchkey user reset-mfa ID           remove TOTP and recovery codes (a lost phone); ends their sessions
  latchkey group create|delete NAME
  latchkey group add|remove NAME USER  (USER: id or email)
  latchkey group list [--json]
  latchkey apply FILE [--dry-run] [--prune]   make the database match a YAML or JSON file
                                       (clients, groups, users, resources); --prune deletes what the
                                       file's sections do not list
  latchkey export [--json]             the database in apply's shape (YAML), without secrets
  latchkey audit [--user ID] [--client ID] [--since ISO] [--json]   the audit log, newest first
  latchkey resource create --uri URI --name NAME --scope NAME=DESCRIPTION [--scope …]
                        [--token-format opaque|jwt] [--introspector CLIENT_ID]...
  latchkey resource list [--json] | resource delete URI
                                       APIs (MCP servers …) tokens are issued for (RFC 8707)
  latchkey site create|rule add|list|delete   apps behind a reverse proxy's forward-auth (latchkey site --help)
  latchkey keys list [--json]           ID-token signing keys {kid, alg, created_at, current}
  latchkey keys rotate                 the published next key signs; older ones stay published
  latchkey keys remove KID             delete a retired or next key at once (never the signing one)
  latchkey migrate                     apply migrations and exit
  latchkey backup PATH                 consistent online copy of a SQLite database (PostgreSQL: pg_dump)
  latchkey healthcheck                 exit 0 when this server's /healthz answers 200 (for containers)
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
  switch (command) {
    case undefined:
    case 'serve':
      return serveCommand(args)
    case 'client':
      return clientCommand(args)
    case 'user':
      return userCommand(args)
    case 'keys':
      return keysCommand(args)
    case 'resource':
      return resourceCommand(args)
    case 'group':
      return groupCommand(args)
    case 'site':
      return siteCommand(args)
    case 'apply':
      return applyCommand(args)
    case 'export':
      return exportCommand(args)
    case 'audit':
      return auditCommand(args)
    case 'migrate':
      return migrateCommand(args)
    case 'backup':
      return backupCommand(args)
    case 'healthcheck':
      return healthcheckCommand(args)
    case '--help':
    case '-h':
    case 'help':
      process.stdout.write(HELP)
      return
    case '--version':
    case '-v':
    case 'version':
      process.stdout.write(`latchkey ${pkg.version}\n`)
      return
    default:
      throw new UsageError(`unknown command "${command}"; try latchkey --help`)
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
