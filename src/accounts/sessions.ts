import { and, eq, gt, sql } from 'drizzle-orm'
import type { Db } from '../db/client'
import { prepared } from '../db/prepared'
import { sessions, users } from '../db/schema'
import { constantTimeEqual, hmacSha256, randomToken, sha256 } from '../lib/crypto'
import type { User } from './users'

export const SESSION_TTL_MS = 7 * 24 * 3600 * 1000

/**
 * The session cookie, and anonymous visitors' CSRF secret for the sign-in and sign-up forms.
 * Under https they carry the `__Host-` prefix: Secure, Path=/, no Domain, so no sibling
 * subdomain can set or shadow them.
 */
export function cookieNames(secure: boolean) {
  const prefix = secure ? '__Host-' : ''
  return { session: `${prefix}lk_session`, csrf: `${prefix}lk_csrf` }
}

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

/** "Sign out everywhere": every session of the user ends. Call in a write job. */
export function deleteSessionsOf(db: Db, userId: string): void {
  db.orm.delete(sessions).where(eq(sessions.userId, userId)).run()
}

/**
 * The CSRF token of a form: an HMAC, under the server's key, of the session (or the anonymous
 * CSRF cookie) it was rendered for. Without the key, nobody who merely chose or planted the
 * cookie can compute a token that matches it.
 */
export function csrfTokenFor(key: string, secret: string): string {
  return hmacSha256(key, `csrf:${secret}`)
}

export function csrfValid(key: string, secret: string | undefined, submitted: unknown): boolean {
  if (!secret || typeof submitted !== 'string') return false
  return constantTimeEqual(csrfTokenFor(key, secret), submitted)
}
