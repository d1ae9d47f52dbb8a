import { UniqueViolation, type EmailToken, type NewMail, type Store, type UserRecord } from '../db/store'
import { hasInvisible } from '../lib/text'
import type { AppContext } from '../context'
import { InputError } from '../lib/errors'

export type User = UserRecord

export interface UserView {
  id: string
  email: string
  full_name: string
  avatar_url: string | null
}

export class UserInputError extends InputError {}
export class EmailTakenError extends InputError {
  constructor() {
    super('an account with this email already exists')
  }
}

export const PASSWORD_MIN = 8
export const PASSWORD_MAX = 256

export const EMAIL_MAX = 254
export const NAME_MAX = 200

/**
 * One mailbox, one spelling (SPEC "Hostile input"): trimmed, compatibility-normalized (NFKC,
 * which includes NFC and also folds fullwidth and other look-alike forms, as IDNA does for the
 * domain), lower-cased, at most 254 characters; control and invisible characters are refused.
 */
export function normalizeEmail(raw: string): string {
  // Bound the work before normalizing: nothing this long can become a valid address.
  if (raw.length > 4 * EMAIL_MAX) throw new UserInputError('email address is not valid')
  const trimmed = raw.trim()
  if (hasInvisible(trimmed)) throw new UserInputError('email address contains control or invisible characters')
  const email = trimmed.normalize('NFKC').toLowerCase()
  if (email.length > EMAIL_MAX || hasInvisible(email) || !/^[^\s@]+@[^\s@]+$/.test(email))
    throw new UserInputError('email address is not valid')
  return email
}

/** A display name: trimmed, NFC, 1 to 200 characters, no control or invisible characters. */
export function checkFullName(raw: string): string {
  if (raw.length > 4 * NAME_MAX) throw new UserInputError(`full name must be 1 to ${NAME_MAX} characters`)
  const name = raw.trim().normalize('NFC')
  if (hasInvisible(name)) throw new UserInputError('full name contains control or invisible characters')
  if (name.length < 1 || name.length > NAME_MAX) throw new UserInputError(`full name must be 1 to ${NAME_MAX} characters`)
  return name
}

export function checkPassword(password: string): string {
  if (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX)
    throw new UserInputError(`password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`)
  return password
}

export function checkAvatarUrl(raw: string): string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new UserInputError('avatar URL is not an absolute URL')
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new UserInputError('avatar URL must be http(s)')
  return raw
}

export function toUserView(user: User): UserView {
  return { id: user.id, email: user.email, full_name: user.fullName, avatar_url: user.avatarUrl }
}

/** Inserts a user whose password was already hashed; the unique email decides a race. */
export async function insertUser(
  store: Store,
  input: { email: string; fullName: string; avatarUrl: string | null; passwordHash: string; emailVerified?: boolean },
  now: number,
  /** A link for the new user (verify, invite) and its message, written with the user. */
  welcome?: (user: User) => { token: EmailToken; mail: NewMail | null },
): Promise<User> {
  const user: User = { id: crypto.randomUUID(), email: input.email, fullName: input.fullName, avatarUrl: input.avatarUrl, emailVerified: input.emailVerified ?? false }
  try {
    await store.users.insertUser({ ...user, passwordHash: input.passwordHash }, now, welcome?.(user))
  } catch (error) {
    if (error instanceof UniqueViolation) throw new EmailTakenError()
    throw error
  }
  return user
}

/**
 * Disables (or enables) an account: a disabled user cannot sign in, and every session and token
 * of theirs ends at once — here, and on other instances, through the change feed.
 */
export function setUserDisabled(ctx: Pick<AppContext, 'store' | 'clock'>, id: string, disabled: boolean): Promise<boolean> {
  return ctx.store.users.setDisabled(id, disabled, ctx.clock.now())
}
