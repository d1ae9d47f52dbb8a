import type { NewMail } from './mail'
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
  /** The session's public id (id_tokens' `sid`, its handle on /account). */
  sid: string
  /** The last request written down (at most once a minute: SESSION_IDLE_TTL counts from it). */
  lastActiveAt: number
}

/** A session as "Where you're signed in" lists it. */
export interface SessionListing {
  sid: string
  createdAt: number
  lastActiveAt: number
  userAgent: string
  address: string
}

export interface NewSession {
  idHash: string
  sid: string
  userId: string
  expiresAt: number
  authTime: number
  amr: readonly string[]
  pending: boolean
  userAgent: string
  address: string
  /** The SHA-256 of the browser's device cookie. */
  deviceHash?: string
}

/** A back-channel logout to send: the app, its URI, and the ended session (OpenID Connect Back-Channel Logout 1.0). */
export interface LogoutDelivery {
  id: number
  clientId: string
  sid: string
  userId: string
  /** The first claim (the trigger that queued it has no clock of the app's). */
  createdAt: number
  attempts: number
  /** The app's backchannel_logout_uri now; null when it was removed since (nothing to send). */
  uri: string | null
  /** Registered dynamically: its URI obeys the metadata fetcher's public-address rules. */
  dynamic: boolean
  /** The app's id_token algorithm: the logout token is signed the same way. */
  idTokenAlg: string
}

export interface SessionStore {
  /**
   * Creates a session, ending `replacing` (the browser's previous session) in the same write.
   * false when the user is disabled or gone: no session starts. A full (not pending) session with a
   * `deviceHash` remembers the browser for the user; `newDevice` is queued in the same transaction
   * only when the user had not signed in from it before.
   */
  createSession(session: NewSession, replacing?: string, newDevice?: NewMail): Promise<boolean>
  /** The session, unless it expired or was idle since `idleSince` (expiry is checked on read). */
  findSession(idHash: string, now: number, idleSince: number): Promise<SessionRecord | undefined>
  deleteSession(idHash: string): Promise<void>
  /** The user presented a factor again (/admin's re-authentication): auth_time moves to `now`. */
  reauthenticated(idHash: string, now: number): Promise<void>
  /** Every session of the user, but `except` (the hash of the one asking) when given. */
  deleteSessionsOf(userId: string, except?: string): Promise<void>
  /** The user's live, full sessions, the last active first. */
  listSessions(userId: string, now: number, idleSince: number): Promise<SessionListing[]>
  /** Ends the session `sid` only if it is the user's: false (nothing changes) otherwise. */
  deleteSessionOf(userId: string, sid: string): Promise<boolean>
  /** Writes many sessions' last activity in one write (never earlier than what is stored). */
  touchSessions(touches: ReadonlyMap<string, number>): Promise<void>
  /** The app got an id_token in the session `sid` (no-op when the session is gone). */
  recordIdToken(sid: string, clientId: string): Promise<void>

  /** Leases up to `limit` due logout deliveries to this sender until `leaseUntil` (once across instances). */
  claimLogouts(now: number, leaseUntil: number, limit: number): Promise<LogoutDelivery[]>
  logoutSent(id: number, now: number): Promise<void>
  logoutRetryLater(id: number, nextAttemptAt: number, error: string): Promise<void>
  logoutFailed(id: number, now: number, error: string): Promise<void>
  logoutCounts(): Promise<{ waiting: number; sent: number; failed: number }>
}
