import type { AuditEvent } from './audit'
import type { UserRecord } from './users'

/** An access token's row with its user, for validation. */
export interface TokenRecord {
  id: number
  verifierHash: string
  clientId: string
  scope: string
  expiresAt: number
  createdAt: number
  /** The authorization it was issued from (null for tokens older than families). */
  familyId: string | null
  /** The resource it is for (RFC 8707), null for Latchkey's own API. */
  resource: string | null
  /** null for a client's own token (client_credentials, RFC 6749 §4.4). */
  user: UserRecord | null
}

/** A client's own access token (client_credentials, RFC 6749 §4.4): no user, no family, no refresh token. */
export interface NewClientToken {
  verifierHash: string
  clientId: string
  scope: string
  expiresAt: number
  createdAt: number
  /** The resource (RFC 8707) it is for, its audience. */
  resource: string
}

/** Access tokens as the bearer-protected API checks them (issued through the grants). */
export interface TokenStore {
  /**
   * The token validation miss path: SQLite answers synchronously (no promise per request),
   * PostgreSQL with a promise. SQLite takes the user from `knownUser` when it has it instead of
   * reading the row again (PostgreSQL reads it in the same round trip anyway): no code path
   * updates a user in place, and another process's change empties what the caller knows.
   */
  findToken(id: number, knownUser?: (userId: string) => UserRecord | undefined): TokenRecord | undefined | Promise<TokenRecord | undefined>
  deleteToken(id: number): Promise<boolean>
  /**
   * A client's own token (client_credentials), with its 'token.issued' event in the same
   * transaction; its row id (what the token spells). With `jti` (private_key_jwt), the assertion's
   * jti is recorded in that transaction too: used already (on any instance), nothing is stored
   * and the answer is undefined.
   */
  insertClientToken(token: NewClientToken, audit?: AuditEvent, jti?: { clientId: string; jti: string; expiresAt: number }): Promise<number | undefined>
  /** Which of these tokens still exist (open settings streams ask after a revocation somewhere). */
  existingTokens(ids: readonly number[]): Promise<Set<number>>
  /** A one-time ticket standing for an access token (EventSource cannot send a header). */
  insertStreamTicket(ticketHash: string, tokenId: number, expiresAt: number): Promise<void>
  /** Uses a ticket up: the token it stands for, once, before it expires. */
  useStreamTicket(ticketHash: string, now: number): Promise<number | undefined>
}
