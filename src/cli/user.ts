import {
  EmailTakenError,
  UserInputError,
  checkAvatarUrl,
  checkFullName,
  checkPassword,
  insertUser,
  normalizeEmail,
  toUserView,
} from '../accounts/users'
import { hashPassword } from '../lib/crypto'
import { UsageError, parse, printJson, printTable, withStore } from './common'
import { escapeForTerminal } from '../lib/text'

async function readPassword(): Promise<string> {
  const text = await Bun.stdin.text()
  return text.replace(/\r?\n$/, '')
}

async function inputError<T>(fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (error) {
    if (error instanceof UserInputError || error instanceof EmailTakenError) throw new UsageError(error.message)
    throw error
  }
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
      const user = await withStore((store) => inputError(() => insertUser(store, { email, fullName, avatarUrl, passwordHash, emailVerified: true }, Date.now())))
      printJson(toUserView(user))
      return
    }
    case 'list': {
      const { values } = parse(rest, { json: { type: 'boolean' } })
      const users = (await withStore((store) => store.users.listUsers())).map(toUserView)
      if (values.json) return printJson(users)
      if (users.length === 0) return void process.stdout.write('no users\n')
      printTable(users.map((u) => ({ id: u.id, email: u.email, full_name: u.full_name, avatar_url: u.avatar_url ?? '' })))
      return
    }
    case 'delete': {
      const { positionals } = parse(rest, {}, 1)
      const id = positionals[0]
      if (!id) throw new UsageError('usage: latchkey user delete ID')
      if (!(await withStore((store) => store.users.deleteUser(id)))) throw new UsageError(`no user with id "${id}"`)
      process.stdout.write(`deleted user ${escapeForTerminal(id)}\n`)
      return
    }
    default:
      throw new UsageError(`unknown user command "${sub ?? ''}" (create, list, delete)`)
  }
}
