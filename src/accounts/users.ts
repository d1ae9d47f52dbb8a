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
    super('an account with this email already exists', { key: 'admin.input.emailTaken' })
  }
}

export const PASSWORD_MIN = 8
export const PASSWORD_MAX = 256

export const EMAIL_MAX = 254
export const NAME_MAX = 200

/**
 * RFC 5321 §4.1.2 addr-spec as one mailbox: a dot-atom local part (atext, RFC 5322 §3.2.3, and
 * the UTF-8 letters and marks RFC 6531 adds), `@`, and a domain of dot-separated labels of
 * letters, digits and hyphens. No quoted local part, display name, angle brackets, comma, space
 * or comment: `x<attacker@evil.example>` or `victim@corp.example,x` name one mailbox here and
 * another to a mail server.
 */
const ATEXT = "[\\p{L}\\p{M}\\p{N}!#$%&'*+\\-/=?^_`{|}~]+"
const LABEL = '[\\p{L}\\p{M}\\p{N}](?:[\\p{L}\\p{M}\\p{N}-]*[\\p{L}\\p{M}\\p{N}])?'
const ADDR_SPEC = new RegExp(`^${ATEXT}(?:\\.${ATEXT})*@${LABEL}(?:\\.${LABEL})*$`, 'u')

/**
 * One mailbox, one spelling (SPEC "Hostile input", "Addresses"): trimmed, compatibility-normalized
 * (NFKC, which includes NFC and also folds fullwidth and other look-alike forms, as IDNA does for
 * the domain), lower-cased, at most 254 characters, a plain `local@domain` (ADDR_SPEC); control
 * and invisible characters are refused. Every surface that takes an address calls this.
 */
export function normalizeEmail(raw: string): string {
  const email = emailSpelling(raw)
  if (!ADDR_SPEC.test(email)) throw new UserInputError('email address must be a plain address like name@example.com, without a name, brackets, commas, spaces or quotes')
  return email
}

/**
 * The spelling alone, for finding an account by what was typed at sign-in (no address is taken
 * or mailed there): an account made before addresses had to be plain can still sign in.
 */
export function emailSpelling(raw: string): string {
  // Bound the work before normalizing: nothing this long can become a valid address.
  if (raw.length > 4 * EMAIL_MAX) throw new UserInputError('email address is not valid')
  const trimmed = raw.trim()
  if (hasInvisible(trimmed)) throw new UserInputError('email address contains control or invisible characters')
  const email = trimmed.normalize('NFKC').toLowerCase()
  if (email.length > EMAIL_MAX || hasInvisible(email) || !/^[^\s@]+@[^\s@]+$/.test(email)) throw new UserInputError('email address is not valid')
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

export const AVATAR_URL_MAX = 2048

/**
 * A picture a person links on /account (SPEC "Your account and your sessions"): an absolute
 * `https://` URL of at most 2048 characters, no credentials in it, no control or invisible
 * characters. Browsers load it from the app's pages and ours: `http:` would be mixed content,
 * `data:` or `javascript:` no picture at all.
 */
export function checkProfileAvatarUrl(raw: string): string {
  const text = raw.trim()
  if (text.length > AVATAR_URL_MAX) throw new UserInputError(`the picture's address must be at most ${AVATAR_URL_MAX} characters`)
  if (hasInvisible(text)) throw new UserInputError("the picture's address contains control or invisible characters")
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new UserInputError("the picture's address must be a full https:// URL")
  }
  if (url.protocol !== 'https:' || !url.hostname) throw new UserInputError("the picture's address must be a full https:// URL")
  if (url.username || url.password) throw new UserInputError("the picture's address must not contain a user name or password")
  return url.href
}

/**
 * Changes a user's name (checked as at sign-up) and, when given, their picture (`null`: the
 * generated one). /account's profile and `apply` go through here. Grants cached here hold the
 * user as it was, so the cache is emptied: userinfo answers with the new name at once.
 */
export async function updateProfile(
  ctx: Pick<AppContext, 'store'>,
  id: string,
  input: { fullName: string; avatarUrl?: string | null },
): Promise<boolean> {
  const fullName = checkFullName(input.fullName)
  const avatarUrl = input.avatarUrl == null ? input.avatarUrl : checkProfileAvatarUrl(input.avatarUrl)
  // The store's write tells the caches (here and on every instance) of the changed user.
  return avatarUrl === undefined ? ctx.store.users.setFullName(id, fullName) : ctx.store.users.setProfile(id, { fullName, avatarUrl })
}

/** With `issuer`, an uploaded picture's path becomes its URL (as apps get it). */
export function toUserView(user: User, issuer?: string): UserView {
  const uploaded = issuer !== undefined && user.avatarUrl?.startsWith('/')
  return { id: user.id, email: user.email, full_name: user.fullName, avatar_url: uploaded ? issuer + user.avatarUrl : user.avatarUrl }
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
 * of theirs ends at once — here, and on other instances, through the change feed. The CLI and
 * `apply` call it too.
 */
export function setUserDisabled(ctx: Pick<AppContext, 'store' | 'clock'>, id: string, disabled: boolean): Promise<boolean> {
  return ctx.store.users.setDisabled(id, disabled, ctx.clock.now())
}
