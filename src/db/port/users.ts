/** The users a person signs in as. */
import type { EmailToken, NewMail } from './mail'
import type { PasskeyRecord } from './mfa'

export interface UserRecord {
  id: string
  email: string
  fullName: string
  avatarUrl: string | null
  /** Whether an operator vouched for the email (CLI), as opposed to self sign-up. */
  emailVerified: boolean
  /** The language and time zone chosen on /account (null: not chosen); read where pages and mails need them. */
  locale?: string | null
  timeZone?: string | null
}

/** A user as operators list them. */
export interface UserListing extends UserRecord {
  admin: boolean
  disabled: boolean
}

/** A picture uploaded on /account: its type (from its bytes) and a hash of them. */
export interface AvatarUpload {
  contentType: string
  bytes: Uint8Array
  etag: string
}

/** An enabled user's picture (UserStore.findAvatar). */
export interface UserPicture {
  fullName: string
  upload?: AvatarUpload & { updatedAt: number }
}

export interface NewUser extends UserRecord {
  passwordHash: string
}

export interface UserStore {
  /** With `welcome`, a link (and the message carrying it, when there is one) in the same transaction. */
  insertUser(user: NewUser, now: number, welcome?: { token: EmailToken; mail: NewMail | null }): Promise<void>
  findUser(id: string): Promise<UserRecord | undefined>
  findUserByEmail(email: string): Promise<(UserRecord & { passwordHash: string }) | undefined>
  /** In sign-up order; `query` keeps those whose email or name contains it (any case), at most `limit`. */
  listUsers(filter?: { query?: string; limit?: number }): Promise<UserListing[]>
  /** false for an unknown user. */
  setAdmin(id: string, admin: boolean): Promise<boolean>
  setFullName(id: string, fullName: string): Promise<boolean>
  /** The name and the picture in one write (/account's profile); an uploaded picture goes with it. false for an unknown user. */
  setProfile(id: string, profile: { fullName: string; avatarUrl: string | null }): Promise<boolean>
  /** /account → Language and Time zone (null: not chosen); false for an unknown user. */
  setLanguage(id: string, language: { locale: string | null; timeZone: string | null }): Promise<boolean>
  /**
   * The picture alone: `url` (an https:// address, an uploaded picture's path, or null for none)
   * and, with `upload`, its bytes in the same transaction; without, an uploaded picture is
   * deleted. false for an unknown user.
   */
  setAvatar(id: string, avatar: { url: string | null; upload?: AvatarUpload }, now: number): Promise<boolean>
  /**
   * What /avatars/<id> serves of an enabled user: their uploaded picture (if any) and the name its
   * initials come from. Undefined for an unknown or disabled user (a disabled user's upload is kept,
   * but answers as no picture: SPEC, a disabled user's data goes to no app).
   */
  findAvatar(id: string): Promise<UserPicture | undefined>
  /**
   * Disabling revokes everything the user holds — sessions, codes, refresh families, access
   * tokens — in the same transaction, and no session can start for them afterwards (the session
   * insert checks, under a lock on the user's row). Enabling clears the flag. false: unknown user.
   */
  setDisabled(id: string, disabled: boolean, now: number): Promise<boolean>
  /** With their sessions, consents, codes, tokens and settings. */
  deleteUser(id: string): Promise<boolean>
  /**
   * An admin page's change that could leave nobody to administer: demote, disable or delete
   * `id`. 'last-admin' (nothing changed) when `id` is the last enabled admin — decided under a
   * lock on every enabled admin's row, so two admins demoting each other at once cannot both
   * succeed. Disabling and deleting do what setDisabled and deleteUser do.
   */
  changeKeepingAnAdmin(id: string, change: AdminChange, now: number): Promise<'done' | 'unknown' | 'last-admin'>
  /** Whether an enabled admin exists: while none does, the server offers a setup link (SPEC "First run"). */
  adminExists(): Promise<boolean>
  /**
   * The first admin (SPEC "First run"), in one transaction: the setup token (the server value
   * `setup`, which holds its hash) is marked used — only while it is `tokenHash`, written at or
   * after `since` — and the user inserted as an admin, only while no enabled admin exists.
   * 'refused': nothing changed (of two setups with one token, one wins). A taken email is a
   * UniqueViolation, and the token stays unused. With `passkey`, the admin's first passkey is
   * inserted in the same transaction (an admin who chose a passkey has no password).
   */
  insertFirstAdmin(user: NewUser, tokenHash: string, since: number, now: number, passkey?: PasskeyRecord): Promise<'done' | 'refused'>
}

export type AdminChange = 'demote' | 'disable' | 'delete'
