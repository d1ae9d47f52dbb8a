import {
  checkAvatarUrl,
  checkFullName,
  checkPassword,
  insertUser,
  normalizeEmail,
  toUserView,
} from '../accounts/users'
import { hashPassword } from '../lib/crypto'
import { inviteUser, newLink, resetTwoStep } from '../accounts/email-links'
import { UsageError, cliAudit, inputError, parse, printJson, printTable, withStore } from './common'
import { escapeForTerminal } from '../lib/text'

async function readPassword(): Promise<string> {
  const text = await Bun.stdin.text()
  return text.replace(/\r?\n$/, '')
}

export async function userCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args
  switch (sub) {
    case 'create': {
      const { values } = parse(rest, {
        email: { type: 'string' },
        name: { type: 'string' },
        'avatar-url': { type: 'string' },
        'password-stdin': { type: 'boolean' },
        admin: { type: 'boolean' },
      })
      if (!values.email) throw new UsageError('--email is required')
      if (!values.name) throw new UsageError('--name is required')
      if (!values['password-stdin']) throw new UsageError('--password-stdin is required (the password is read from standard input)')
      const stdinPassword = await readPassword()
      const email = await inputError(() => normalizeEmail(values.email!))
      const fullName = await inputError(() => checkFullName(values.name!))
      const avatarUrl = values['avatar-url'] === undefined ? null : await inputError(() => checkAvatarUrl(values['avatar-url']!))
      const password = await inputError(() => checkPassword(stdinPassword))
      const passwordHash = await hashPassword(password)
      const admin = values.admin ?? false
      const user = await withStore(async (store) => {
        const made = await inputError(() => insertUser(store, { email, fullName, avatarUrl, passwordHash, emailVerified: true }, Date.now()))
        if (admin) await store.users.setAdmin(made.id, true)
        await cliAudit(store, 'user.created', { userId: made.id, detail: { admin } })
        return made
      })
      printJson({ ...toUserView(user), admin })
      return
    }
    case 'list': {
      const { values } = parse(rest, { json: { type: 'boolean' } })
      const { list, mfa } = await withStore(async (store) => ({ list: await store.users.listUsers(), mfa: await store.mfa.summaries() }))
      const users = list.map((u) => ({ ...toUserView(u), admin: u.admin, disabled: u.disabled, mfa: mfa.get(u.id) ?? { totp: false, passkeys: 0 } }))
      if (values.json) return printJson(users)
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
      return
    }
    case 'delete': {
      const { positionals } = parse(rest, {}, 1)
      const id = positionals[0]
      if (!id) throw new UsageError('usage: latchkey user delete ID')
      if (!(await withStore(async (store) => (await store.users.deleteUser(id)) && (await cliAudit(store, 'user.deleted', { userId: id }), true))))
        throw new UsageError(`no user with id "${id}"`)
      process.stdout.write(`deleted user ${escapeForTerminal(id)}\n`)
      return
    }
    case 'invite': {
      // A user without a password and a 7-day link to choose one: mailed, or printed alone on stdout.
      const { values } = parse(rest, { email: { type: 'string' }, name: { type: 'string' }, 'print-link': { type: 'boolean' } })
      if (!values.email) throw new UsageError('--email is required')
      if (!values.name) throw new UsageError('--name is required')
      const email = await inputError(() => normalizeEmail(values.email!))
      const fullName = await inputError(() => checkFullName(values.name!))
      const { user, url, mailed } = await withStore(async (store, config) => {
        const mailed = config.smtpUrl !== null && !values['print-link']
        const invited = await inputError(() => inviteUser(store, config, { email, fullName }, Date.now(), mailed))
        await cliAudit(store, 'user.invited', { userId: invited.user.id, detail: { mailed } })
        return { ...invited, mailed }
      })
      if (mailed) printJson(toUserView(user))
      else process.stdout.write(`${url}\n`)
      return
    }
    case 'reset-link': {
      const { positionals } = parse(rest, {}, 1)
      const id = positionals[0]
      if (!id) throw new UsageError('usage: latchkey user reset-link ID')
      const url = await withStore(async (store, config) => {
        const user = await store.users.findUser(id)
        if (!user) return undefined
        const link = newLink(config, 'reset', user.id, user.email, Date.now())
        await store.mail.issueToken(link.token, null, Date.now())
        // That a link was made and until when, never the link: it sets the password.
        await cliAudit(store, 'user.reset_link_made', { userId: user.id, detail: { expires_at: new Date(link.token.expiresAt).toISOString() } })
        return link.url
      })
      if (!url) throw new UsageError(`no user with id "${escapeForTerminal(id)}"`)
      process.stdout.write(`${url}\n`)
      return
    }
    case 'reset-mfa': {
      // For a user who lost their phone: TOTP and recovery codes go, and so do their sessions.
      const { positionals } = parse(rest, {}, 1)
      const id = positionals[0]
      if (!id) throw new UsageError('usage: latchkey user reset-mfa ID')
      const found = await withStore(async (store, config) => (await resetTwoStep(store, config, id, Date.now())) && (await cliAudit(store, 'user.two_step_reset', { userId: id }), true))
      if (!found) throw new UsageError(`no user with id "${escapeForTerminal(id)}"`)
      process.stdout.write(`reset two-step verification of user ${escapeForTerminal(id)}\n`)
      return
    }
    case 'update': {
      // --admin: may use /admin. --disabled true: cannot sign in, and every session and token of theirs ends at once, on every instance.
      const { values, positionals } = parse(rest, { admin: { type: 'string' }, disabled: { type: 'string' } }, 1)
      const id = positionals[0]
      if (!id || (values.admin === undefined && values.disabled === undefined)) throw new UsageError('usage: latchkey user update ID [--admin true|false] [--disabled true|false]')
      for (const [name, value] of Object.entries(values))
        if (value !== undefined && value !== 'true' && value !== 'false') throw new UsageError(`--${name} must be true or false`)
      const user = await withStore(async (store) => {
        if (!(await store.users.findUser(id))) throw new UsageError(`no user with id "${escapeForTerminal(id)}"`)
        if (values.admin !== undefined) await store.users.setAdmin(id, values.admin === 'true')
        if (values.disabled !== undefined) await store.users.setDisabled(id, values.disabled === 'true', Date.now())
        await cliAudit(store, 'user.updated', { userId: id, detail: { ...(values.admin ? { admin: values.admin === 'true' } : {}), ...(values.disabled ? { disabled: values.disabled === 'true' } : {}) } })
        return (await store.users.listUsers()).find((u) => u.id === id)!
      })
      printJson({ ...toUserView(user), admin: user.admin, disabled: user.disabled })
      return
    }
    default:
      throw new UsageError(`unknown user command "${sub ?? ''}" (create, list, update, delete, invite, reset-link, reset-mfa)`)
  }
}
