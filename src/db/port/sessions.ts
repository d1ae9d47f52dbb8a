import type { UserRecord } from './users'

/** A signed-in browser: the user, how they signed in (RFC 8176 amr) and when they presented the last factor. */
export interface SessionRecord {
  user: UserRecord
  /** The user may use /admin. */
  admin: boolean
  authTime: number
  amr: string[]
  /** The password was right, a second factor is still due: not signed in yet. */
  pending: boolean
}

export interface NewSession {
  idHash: string
  userId: string
  expiresAt: number
  authTime: number
  amr: readonly string[]
  pending: boolean
}

export interface SessionStore {
  /** Creates a session, ending `replacing` (the browser's previous session) in the same write. */
  /** false when the user is disabled or gone: no session starts. */
  createSession(session: NewSession, replacing?: string): Promise<boolean>
  findSession(idHash: string, now: number): Promise<SessionRecord | undefined>
  deleteSession(idHash: string): Promise<void>
  /** The user presented a factor again (/admin's re-authentication): auth_time moves to `now`. */
  reauthenticated(idHash: string, now: number): Promise<void>
  /** Every session of the user, but `except` (the hash of the one asking) when given. */
  deleteSessionsOf(userId: string, except?: string): Promise<void>
}
