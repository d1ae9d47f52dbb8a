import type { UserRecord } from './users'

/** A signed-in browser: the user, and when they entered their password. */
export interface SessionRecord {
  user: UserRecord
  authTime: number
}

export interface SessionStore {
  /** Creates a session, ending `replacing` (the browser's previous session) in the same write. */
  createSession(idHash: string, userId: string, expiresAt: number, authTime: number, replacing?: string): Promise<void>
  findSession(idHash: string, now: number): Promise<SessionRecord | undefined>
  deleteSession(idHash: string): Promise<void>
  deleteSessionsOf(userId: string): Promise<void>
}
