import type { NewMail, Store } from '../db/store'
import { constantTimeEqual, hmacSha256, randomToken, sha256 } from '../lib/crypto'
import type { User } from './users'

/** SESSION_TTL's default (SPEC "Sessions"): 30 days after sign-in. */
export const SESSION_TTL_MS = 30 * 24 * 3600 * 1000
/** SESSION_IDLE_TTL's default: 7 days after the last request. */
export const SESSION_IDLE_TTL_MS = 7 * 24 * 3600 * 1000
/** At most this much of a User-Agent is kept (it is only shown, parsed into "Chrome on Linux"). */
export const USER_AGENT_MAX = 512
/** A sign-in waiting for its second factor (/login/two-step) lasts as long as a WebAuthn challenge. */
export const PENDING_TTL_MS = 5 * 60 * 1000

/**
 * The session cookie, and anonymous visitors' CSRF secret for the sign-in and sign-up forms.
 * Under https they carry the `__Host-` prefix: Secure, Path=/, no Domain, so no sibling
 * subdomain can set or shadow them.
 */
export function cookieNames(secure: boolean) {
  const prefix = secure ? '__Host-' : ''
  return { session: `${prefix}lk_session`, csrf: `${prefix}lk_csrf`, device: `${prefix}lk_device` }
}

export interface Session {
  user: User
  /** The user may use /admin. */
  admin: boolean
  /** The raw cookie value: the secret the CSRF token is derived from. */
  token: string
  /** When the user presented their last factor (OpenID Connect auth_time). */
  authTime: number
  /** How they signed in (RFC 8176): ["pwd"], ["pwd", "otp", "mfa"], ["hwk", "user", "mfa"] … */
  amr: string[]
  /** The password was right and a second factor is due: not signed in yet. */
  pending: boolean
  /** The session's public id: id_tokens' `sid`, and its handle on /account (never the secret token). */
  sid: string
  /** The last request written down (at most once a minute). */
  lastActiveAt: number
}

/** How a session starts: its lifetime and what "Where you're signed in" shows of the browser. */
export interface SessionStart {
  amr: readonly string[]
  pending?: boolean
  /** SESSION_TTL in milliseconds (default 30 days). */
  ttlMs?: number
  userAgent?: string
  address?: string
  /** The browser's device cookie (stored hashed). */
  device?: string
  /** "New sign-in to your account": queued only when the user had not signed in from `device` before. */
  newDevice?: NewMail
}

/** Two factors: what an app with `--require-mfa` needs. */
export const hasTwoFactors = (session: Session) => session.amr.includes('mfa')

/**
 * Stores only the SHA-256 of the session token (Lucia's guide); returns the token for the
 * cookie. `replacing` (the browser's previous session token) ends in the same write. A pending
 * sign-in (second factor due) lives five minutes.
 */
export async function createSession(
  store: Store,
  userId: string,
  now: number,
  how: SessionStart,
  replacing?: string,
): Promise<string | undefined> {
  const token = randomToken()
  const pending = how.pending ?? false
  const expiresAt = now + (pending ? PENDING_TTL_MS : (how.ttlMs ?? SESSION_TTL_MS))
  const started = await store.sessions.createSession(
    {
      idHash: sha256(token),
      sid: randomToken(),
      userId,
      expiresAt,
      authTime: now,
      amr: how.amr,
      pending,
      userAgent: (how.userAgent ?? '').slice(0, USER_AGENT_MAX),
      address: how.address ?? '',
      deviceHash: how.device && sha256(how.device),
    },
    replacing && sha256(replacing),
    how.newDevice,
  )
  // A disabled (or deleted) account gets no session.
  return started ? token : undefined
}

/** The session of `token`, unless it expired or was idle `idleTtlMs` (default 7 days): checked on read. */
export async function findSession(store: Store, token: string, now: number, idleTtlMs = SESSION_IDLE_TTL_MS): Promise<Session | undefined> {
  const found = await store.sessions.findSession(sha256(token), now, now - idleTtlMs)
  return found && { ...found, token }
}

/** The user presented a factor again: the session's auth_time becomes `now`. */
export function reauthenticated(store: Store, session: Session, now: number): Promise<void> {
  return store.sessions.reauthenticated(sha256(session.token), now)
}

export function deleteSession(store: Store, token: string): Promise<void> {
  return store.sessions.deleteSession(sha256(token))
}

/** "Sign out everywhere": every session of the user ends (but the one `keeping`, when given). */
export function deleteSessionsOf(store: Store, userId: string, keeping?: Session): Promise<void> {
  return store.sessions.deleteSessionsOf(userId, keeping && sha256(keeping.token))
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
