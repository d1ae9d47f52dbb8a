import { checkAvatarUrl, checkFullName, checkPassword, insertUser, normalizeEmail, setUserDisabled, toUserView } from '../accounts/users'
import { loadConfig } from '../config'
import { systemClock } from '../lib/clock'
import { hashPassword } from '../lib/crypto'
import { inviteUser, newLink, resetTwoStep } from '../accounts/email-links'
import type { Store, UserListing, UserRecord } from '../db/store'
import { command, type CommandGroup } from './command'
import { UsageError, checkDatabaseExists, cliAudit, inputError, linkConfig, namedUser, printJson, printTable, trueOrFalse, withStore } from './common'
import { escapeForTerminal } from '../lib/text'
import { readPassword } from './password'

/** The user's admin and disabled flags beside the record (listUsers is what has them). */
async function listing(store: Store, user: UserRecord): Promise<UserListing> {
  return (await store.users.listUsers({ query: user.email })).find((u) => u.id === user.id)!
}

const USER_ARG = 'USER'
const byIdOrEmail = 'USER: an id or an email.'

const create = command({
  name: 'create',
  summary: 'a user with a password (from standard input, or asked for)',
  options: {
    email: { type: 'string', arg: 'EMAIL', help: 'their email (verified: you vouch for it)', required: true },
    name: { type: 'string', arg: 'NAME', help: 'their full name', required: true },
    'avatar-url': { type: 'string', arg: 'URL', help: 'a picture of them (https)' },
    admin: { type: 'boolean', help: 'may use /admin' },
    'password-stdin': { type: 'boolean', help: 'read the password from standard input (on a terminal: asked for, not echoed)', required: true },
  },
  examples: ["user create --email ann@example.com --name \"Ann Lee\" --password-stdin < password.txt", 'user create --email root@example.com --name Root --admin --password-stdin'],
  json: '{id, email, full_name, avatar_url, admin} (the default output too)',
  async run({ values }) {
    if (!values.email) throw new UsageError('--email is required')
    if (!values.name) throw new UsageError('--name is required')
    if (!values['password-stdin']) throw new UsageError('--password-stdin is required (the password is read from standard input)')
    const email = await inputError(() => normalizeEmail(values.email!))
    const fullName = await inputError(() => checkFullName(values.name!))
    const avatarUrl = values['avatar-url'] === undefined ? null : await inputError(() => checkAvatarUrl(values['avatar-url']!))
    // Nobody types a password for a command that then finds no database.
    checkDatabaseExists(loadConfig())
    const password = await inputError(async () => checkPassword(await readPassword()))
    const passwordHash = await hashPassword(password)
    const admin = values.admin ?? false
    const user = await withStore(async (store) => {
      const made = await inputError(() => insertUser(store, { email, fullName, avatarUrl, passwordHash, emailVerified: true }, Date.now()))
      if (admin) await store.users.setAdmin(made.id, true)
      await cliAudit(store, 'user.created', { userId: made.id, detail: { admin } })
      return made
    })
    printJson({ ...toUserView(user), admin })
  },
})

const list = command({
  name: 'list',
  summary: 'every user, with admin, disabled and two-step status',
  options: {},
  examples: ['user list', 'user list --json'],
  json: '[{id, email, full_name, avatar_url, admin, disabled, mfa: {totp, passkeys}}]',
  async run({ json }) {
    const { list, mfa, issuer } = await withStore(async (store, config) => ({ list: await store.users.listUsers(), mfa: await store.mfa.summaries(), issuer: config.issuer }))
    const users = list.map((u) => ({ ...toUserView(u, issuer), admin: u.admin, disabled: u.disabled, mfa: mfa.get(u.id) ?? { totp: false, passkeys: 0 } }))
    if (json) return printJson(users)
    if (users.length === 0) return void process.stdout.write('no users\n')
    printTable(
      users.map((u) => ({
        id: u.id,
        email: u.email,
        full_name: u.full_name,
        admin: String(u.admin),
        disabled: String(u.disabled),
        totp: String(u.mfa.totp),
        passkeys: String(u.mfa.passkeys),
        avatar_url: u.avatar_url ?? '',
      })),
    )
  },
})

const update = command({
  name: 'update',
  args: USER_ARG,
  positionals: 1,
  summary: 'make a user an admin or not; disable or enable them',
  detail: `${byIdOrEmail} Disabled: cannot sign in, and every session and token of theirs ends at once.`,
  options: {
    admin: { type: 'string', arg: 'true|false', help: 'may use /admin' },
    disabled: { type: 'string', arg: 'true|false', help: 'cannot sign in; every session and token of theirs ends at once, on every instance' },
  },
  examples: ['user update ann@example.com --admin true', 'user update ann@example.com --disabled true'],
  json: '{id, email, full_name, avatar_url, admin, disabled} (the default output too)',
  async run({ values, positionals, json }) {
    const ref = positionals[0]
    if (!ref || (values.admin === undefined && values.disabled === undefined)) throw new UsageError('usage: latchkey user update USER [--admin true|false] [--disabled true|false]; see latchkey user update --help')
    const admin = trueOrFalse('admin', values.admin)
    const disabled = trueOrFalse('disabled', values.disabled)
    const { user, changed } = await withStore(async (store) => {
      const found = await listing(store, await namedUser(store, ref))
      const changed = { ...(admin !== undefined && admin !== found.admin ? { admin } : {}), ...(disabled !== undefined && disabled !== found.disabled ? { disabled } : {}) }
      // SPEC: a change that changes nothing is said so, and records nothing.
      if (Object.keys(changed).length === 0) return { user: found, changed: false }
      if (changed.admin !== undefined) await store.users.setAdmin(found.id, changed.admin)
      if (changed.disabled !== undefined) await setUserDisabled({ store, clock: systemClock }, found.id, changed.disabled)
      await cliAudit(store, 'user.updated', { userId: found.id, detail: changed })
      return { user: await listing(store, found), changed: true }
    })
    if (!changed) {
      const note = `nothing to change: ${escapeForTerminal(user.email)} is ${user.admin ? '' : 'not '}an admin and ${user.disabled ? 'disabled' : 'enabled'} already\n`
      if (!json) return void process.stdout.write(note)
      process.stderr.write(`latchkey: ${note}`)
    }
    printJson({ ...toUserView(user), admin: user.admin, disabled: user.disabled })
  },
})

const remove = command({
  name: 'delete',
  args: USER_ARG,
  positionals: 1,
  summary: 'delete a user with their grants, tokens and settings',
  detail: byIdOrEmail,
  options: {},
  examples: ['user delete ann@example.com'],
  json: '{id, email, deleted: true}',
  async run({ positionals, json }) {
    const ref = positionals[0]
    if (!ref) throw new UsageError('user delete needs a USER (id or email); see latchkey user delete --help')
    const user = await withStore(async (store) => {
      const user = await namedUser(store, ref)
      if (!(await store.users.deleteUser(user.id))) throw new UsageError(`no user "${escapeForTerminal(ref)}"`)
      await cliAudit(store, 'user.deleted', { userId: user.id })
      return user
    })
    if (json) return printJson({ id: user.id, email: user.email, deleted: true })
    process.stdout.write(`deleted user ${escapeForTerminal(user.id)} (${escapeForTerminal(user.email)})\n`)
  },
})

const invite = command({
  name: 'invite',
  summary: 'a user without a password, and a 7-day link to choose one',
  detail: 'The link is mailed; printed instead with --print-link or without SMTP_URL.',
  options: {
    email: { type: 'string', arg: 'EMAIL', help: 'their email', required: true },
    name: { type: 'string', arg: 'NAME', help: 'their full name', required: true },
    'print-link': { type: 'boolean', help: 'print the link instead of mailing it' },
  },
  examples: ['user invite --email bo@example.com --name "Bo Chen" --print-link'],
  json: '{id, email, full_name, avatar_url, invite_url (null when mailed), mailed}',
  async run({ values, json }) {
    // A user without a password and a 7-day link to choose one: mailed, or printed alone on stdout.
    if (!values.email) throw new UsageError('--email is required')
    if (!values.name) throw new UsageError('--name is required')
    const email = await inputError(() => normalizeEmail(values.email!))
    const fullName = await inputError(() => checkFullName(values.name!))
    const { user, url, mailed } = await withStore(async (store, config) => {
      const mailed = config.smtpUrl !== null && !values['print-link']
      const links = await linkConfig(store, config)
      const invited = await inputError(() => inviteUser(store, links, { email, fullName }, Date.now(), mailed))
      await cliAudit(store, 'user.invited', { userId: invited.user.id, detail: { mailed } })
      return { ...invited, mailed }
    })
    if (json) return printJson({ ...toUserView(user), invite_url: mailed ? null : url, mailed })
    if (mailed) printJson(toUserView(user))
    else process.stdout.write(`${url}\n`)
  },
})

const resetLink = command({
  name: 'reset-link',
  args: USER_ARG,
  positionals: 1,
  summary: 'print a 30-minute password reset link for a user',
  detail: byIdOrEmail,
  options: {},
  examples: ['user reset-link ann@example.com'],
  json: '{id, email, reset_url, expires_at}',
  async run({ positionals, json }) {
    const ref = positionals[0]
    if (!ref) throw new UsageError('user reset-link needs a USER (id or email); see latchkey user reset-link --help')
    const { user, url, expiresAt } = await withStore(async (store, config) => {
      const user = await namedUser(store, ref)
      const link = newLink(await linkConfig(store, config), 'reset', user.id, user.email, Date.now())
      await store.mail.issueToken(link.token, null, Date.now())
      // That a link was made and until when, never the link: it sets the password.
      await cliAudit(store, 'user.reset_link_made', { userId: user.id, detail: { expires_at: new Date(link.token.expiresAt).toISOString() } })
      return { user, url: link.url, expiresAt: link.token.expiresAt }
    })
    if (json) return printJson({ id: user.id, email: user.email, reset_url: url, expires_at: new Date(expiresAt).toISOString() })
    process.stdout.write(`${url}\n`)
  },
})

const resetMfa = command({
  name: 'reset-mfa',
  args: USER_ARG,
  positionals: 1,
  summary: 'remove TOTP and recovery codes (a lost phone); ends their sessions',
  detail: byIdOrEmail,
  options: {},
  examples: ['user reset-mfa ann@example.com'],
  json: '{id, email, two_step_reset: true}',
  async run({ positionals, json }) {
    // For a user who lost their phone: TOTP and recovery codes go, and so do their sessions.
    const ref = positionals[0]
    if (!ref) throw new UsageError('user reset-mfa needs a USER (id or email); see latchkey user reset-mfa --help')
    const user = await withStore(async (store, config) => {
      const user = await namedUser(store, ref)
      if (!(await resetTwoStep(store, config, user.id, Date.now()))) throw new UsageError(`no user "${escapeForTerminal(ref)}"`)
      await cliAudit(store, 'user.two_step_reset', { userId: user.id })
      return user
    })
    if (json) return printJson({ id: user.id, email: user.email, two_step_reset: true })
    process.stdout.write(`reset two-step verification of user ${escapeForTerminal(user.id)} (${escapeForTerminal(user.email)})\n`)
  },
})

/** `latchkey user …`: the accounts. */
export const userCommands: CommandGroup = {
  name: 'user',
  summary: 'accounts: create, invite, list, change, delete; reset links and two-step',
  commands: [create, list, update, remove, invite, resetLink, resetMfa],
}
