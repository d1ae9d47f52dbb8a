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

/** A user as operators list them. */
export interface UserListing extends UserRecord {
  admin: boolean
  disabled: boolean
}

export interface NewUser extends UserRecord {
  passwordHash: string
}

export interface UserStore {
  /** With `welcome`, a link (and the message carrying it, when there is one) in the same transaction. */
  insertUser(user: NewUser, now: number, welcome?: { token: EmailToken; mail: NewMail | null }): Promise<void>
  findUser(id: string): Promise<UserRecord | undefined>
  findUserByEmail(email: string): Promise<(UserRecord & { passwordHash: string }) | undefined>
  listUsers(): Promise<UserListing[]>
  /** false for an unknown user. */
  setAdmin(id: string, admin: boolean): Promise<boolean>
  setFullName(id: string, fullName: string): Promise<boolean>
  /**
   * Disabling revokes everything the user holds — sessions, codes, refresh families, access
   * tokens — in the same transaction, and no session can start for them afterwards (the session
   * insert checks, under a lock on the user's row). Enabling clears the flag. false: unknown user.
   */
  setDisabled(id: string, disabled: boolean, now: number): Promise<boolean>
  /** With their sessions, consents, codes, tokens and settings. */
  deleteUser(id: string): Promise<boolean>
}
