import { and, eq, gt, sql } from 'drizzle-orm'
import type { Db } from '../db/client'
import { prepared } from '../db/prepared'
import { sessions, users } from '../db/schema'
import { constantTimeEqual, randomToken, sha256 } from '../lib/crypto'
import type { User } from './users'

export const SESSION_COOKIE = 'lk_session'
/** Anonymous visitors' CSRF secret, for the sign-in and sign-up forms (double-submit). */
export const CSRF_COOKIE = 'lk_csrf'
export const SESSION_TTL_MS = 7 * 24 * 3600 * 1000

export interface Session {
  user: User
  /** The raw cookie value: the secret the CSRF token is derived from. */
  token: string
}

/** Stores only the SHA-256 of the session token (Lucia's guide); returns the token for the cookie. */
export function createSession(db: Db, userId: string, now: number): string {
  const token = randomToken()
  db.orm.insert(sessions).values({ idHash: sha256(token), userId, expiresAt: now + SESSION_TTL_MS }).run()
  return token
}

export function findSession(db: Db, token: string, now: number): Session | undefined {
  const row = prepared(db, 'sessionByHash', () =>
    db.orm
      .select({ user: users })
      .from(sessions)
      .innerJoin(users, eq(users.id, sessions.userId))
      .where(and(eq(sessions.idHash, sql.placeholder('hash')), gt(sessions.expiresAt, sql.placeholder('now'))))
      .prepare(),
  ).get({ hash: sha256(token), now })
  if (!row) return undefined
  const { id, email, fullName, avatarUrl } = row.user
  return { user: { id, email, fullName, avatarUrl }, token }
}

export function deleteSession(db: Db, token: string): void {
  db.orm.delete(sessions).where(eq(sessions.idHash, sha256(token))).run()
}

/** The CSRF token of a form: bound to the session (or the anonymous CSRF cookie) it was rendered for. */
export function csrfTokenFor(secret: string): string {
  return sha256(`csrf:${secret}`)
}

export function csrfValid(secret: string | undefined, submitted: unknown): boolean {
  if (!secret || typeof submitted !== 'string') return false
  return constantTimeEqual(csrfTokenFor(secret), submitted)
}
