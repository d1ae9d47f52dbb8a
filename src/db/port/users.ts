/** The users a person signs in as. */
import type { EmailToken, NewMail } from './mail'

export interface UserRecord {
  id: string
  email: string
  fullName: string
  avatarUrl: string | null
  /** Whether an operator vouched for the email (CLI), as opposed to self sign-up. */
  emailVerified: boolean
}

export interface NewUser extends UserRecord {
  passwordHash: string
}

export interface UserStore {
  /** With `welcome`, a link (and the message carrying it, when there is one) in the same transaction. */
  insertUser(user: NewUser, now: number, welcome?: { token: EmailToken; mail: NewMail | null }): Promise<void>
  findUser(id: string): Promise<UserRecord | undefined>
  findUserByEmail(email: string): Promise<(UserRecord & { passwordHash: string }) | undefined>
  listUsers(): Promise<UserRecord[]>
  /** With their sessions, consents, codes, tokens and settings. */
  deleteUser(id: string): Promise<boolean>
}
