/**
 * Grants: what a user allowed an app (consent), and what that authorization issued — codes, then
 * access and refresh tokens that share a family.
 */
import { constantTimeEqual } from '../../lib/crypto'
import type { AuditEvent } from './audit'

export interface CodeRecord {
  clientId: string
  userId: string
  redirectUri: string
  scope: string
  codeChallenge: string | null
  expiresAt: number
  usedAt: number | null
  /** OpenID Connect: the request's nonce, and when the user signed in. */
  nonce: string | null
  authTime: number | null
  /** How the user signed in (RFC 8176 values, space-separated); null for codes from before it was kept. */
  amr: string | null
  /** The resource (RFC 8707) the tokens will be for; null for Latchkey's own API. */
  resource: string | null
  /** The sign-in session that approved it: id_tokens' `sid` (OpenID Connect Back-Channel Logout §2.4). */
  sid?: string | null
}

/** A code about to be stored: its record before any use, under the hash of its value. */
export interface NewCode extends Omit<CodeRecord, 'usedAt'> {
  codeHash: string
}

export interface NewToken {
  verifierHash: string
  /** Every token issued from one authorization (a code, then its refreshes) shares a family. */
  familyId: string
  clientId: string
  userId: string
  scope: string
  expiresAt: number
  createdAt: number
  /** The resource (RFC 8707) the token is for, its audience; null for Latchkey's own API. */
  resource: string | null
}

/** A refresh token's row (one per live token of a family); `scope` is the original grant's (a refresh may only narrow it). */
export interface NewRefreshToken extends NewToken {
  /** When the user signed in for this grant (a refreshed id_token keeps it). */
  authTime: number | null
}

export interface RefreshRecord extends NewRefreshToken {
  id: number
  /** When it was first used to rotate; null while it is the family's newest. */
  rotatedAt: number | null
}

/**
 * A refresh-token family: one authorization and its refreshes. Reuse detection and the rate
 * limit keep their state here, per family, so rotated tokens need not be kept past the grace.
 */
export interface RefreshFamily {
  /** The number a refresh token spells. */
  id: number
  familyId: string
  clientId: string
  userId: string
  /** SHA-256 of the key every token of the family carries; null for a family older than keys. */
  keyHash: string | null
  usedAt: number
  expiresAt: number
  /** How and when the user signed in for this authorization (null for families from before it was kept). */
  authTime: number | null
  amr: string | null
  /** The sign-in session of the authorization: a refreshed id_token keeps its `sid`. */
  sid?: string | null
  /** The resource its tokens are for (null: Latchkey's own API); a refresh keeps it. */
  resource: string | null
  /** The refresh rate limit's window. */
  windowStart: number
  windowCount: number
  /** How many of its tokens are not rotated (live branches). */
  live: number
  /**
   * Whether the user may still use the client (in a group it allows, or it allows every user;
   * SPEC "Groups"): read with the family, in the refresh's own statement and transaction.
   */
  allowed: boolean
}

/** What a code exchange or a refresh issues. */
export interface IssuedTokens {
  access: NewToken
  refresh: NewRefreshToken
  /** The family's key hash: set on a new family, or given to an old one that had none. */
  keyHash: string
  /** How the user signed in (RFC 8176, space-separated): kept on a new family. */
  amr?: string | null
  /** The sign-in session: kept on a new family. */
  sid?: string | null
}

/** How and when the user signed in for an authorization: what introspection reports (RFC 8176 amr, auth_time). */
export interface SignIn {
  authTime: number | null
  amr: string | null
}

/**
 * How a presented refresh token names its rows: a family and the hash of the whole verifier,
 * or (tokens issued before families had keys) its own row id.
 */
export type RefreshLookup = { family: number; verifierHash: string } | { tokenId: number }

/** A presented refresh token's rows: its family, and its own row unless that is gone (rotated long ago). */
export interface FoundRefresh {
  family: RefreshFamily
  token: RefreshRecord | undefined
}

export type RefreshRefusal = { error: 'invalid_grant' | 'invalid_scope' | 'invalid_target' | 'too_many_refreshes'; description: string }

/** What a refresh decides on the locked family (RFC 6749 §6, RFC 9700 §4.14.2). */
export type RefreshDecision =
  | { refuse: RefreshRefusal }
  | {
      revokeFamily: string
      /** A reuse (RFC 9700 §4.14.2): counted and audited as one; false for a grant that outlived its group. */
      reuse: boolean
    }
  | {
      issue: IssuedTokens
      /** Whether the presented token is now rotated (false: a second use within the grace). */
      markRotated: boolean
      /** The rate limit's window after this refresh. */
      window: { start: number; count: number }
      /** Rotated tokens of the family older than this are deleted: past the grace, the family row detects their reuse. */
      pruneRotatedBefore: number
      /** Its 'token.refreshed' event, written in the refresh's transaction (as CodeExchange's). */
      audit?: AuditEvent
    }

export type RefreshOutcome = { ok: true; tokenId: number; familyRef: number } | ({ ok: false; familyRevoked?: boolean } & RefreshRefusal)

/**
 * What a presented code must match, as data the store checks on the code it claims (RFC 6749
 * §4.1.3, RFC 7636 §4.6, RFC 8707 §2.2): see `codeRefusal`, which PostgreSQL decides in SQL.
 */
export interface CodeExpectation {
  clientId: string
  redirectUri: string | undefined
  /** The S256 of the presented code_verifier; '' for one not well formed; null when none was sent. */
  challenge: string | null
  /** The resource the exchange names (null: Latchkey's own API); undefined when it names none. */
  audience: string | null | undefined
}

/** Why a code that exists and is unused was refused, in the order the checks run. */
export type CodeRefusal = 'expired' | 'client' | 'redirect_uri' | 'pkce' | 'verifier' | 'audience'

/** One token's secrets, minted before its code is read. */
export interface TokenSecrets {
  verifierHash: string
  expiresAt: number
  createdAt: number
}

/**
 * A code exchange as one request to the store: the pair's secrets are minted first, and each row
 * takes its user, scope and resource (the refresh token its auth_time, the family its amr) from
 * the code it claims.
 */
export interface CodeExchange {
  codeHash: string
  now: number
  expect: CodeExpectation
  tokens: { familyId: string; access: TokenSecrets; refresh: TokenSecrets; keyHash: string }
  /**
   * Its 'token.issued' event, written in the exchange's own transaction (SPEC "Audit log": never a
   * change without its event, and no write of its own on the hot path); the user and, in the
   * detail, the scope are the code's.
   */
  audit?: AuditEvent
}

/** The outcome of a code exchange, decided inside its transaction; with the code when it exists and was unused. */
export type ExchangeOutcome =
  | { ok: true; tokenId: number; familyRef: number; code: CodeRecord }
  | { ok: false; reason: 'unknown' }
  | { ok: false; reason: 'used' }
  | { ok: false; reason: 'refused'; refusal: CodeRefusal; code: CodeRecord }

/** The checks of `CodeExpectation` on an unused code, for an engine that decides them in code (SQLite). */
export function codeRefusal(code: CodeRecord, expect: CodeExpectation, now: number): CodeRefusal | undefined {
  if (code.expiresAt <= now) return 'expired'
  if (code.clientId !== expect.clientId) return 'client'
  if (code.redirectUri !== expect.redirectUri) return 'redirect_uri'
  if (code.codeChallenge !== null) {
    if (expect.challenge === null || !constantTimeEqual(expect.challenge, code.codeChallenge)) return 'pkce'
  } else if (expect.challenge !== null) return 'verifier'
  if (expect.audience !== undefined && expect.audience !== code.resource) return 'audience'
  return undefined
}

/** The rows a code exchange inserts: its secrets, with the code's grant. */
export function tokensForCode(code: CodeRecord, exchange: CodeExchange): IssuedTokens {
  const { familyId, access, refresh, keyHash } = exchange.tokens
  const grant = { familyId, clientId: code.clientId, userId: code.userId, scope: code.scope, resource: code.resource }
  return { access: { ...grant, ...access }, refresh: { ...grant, ...refresh, authTime: code.authTime }, keyHash, amr: code.amr, sid: code.sid ?? null }
}

export interface AuthorizedApp {
  clientId: string
  name: string
  scopes: string[]
  /** The resource the consent is for (null: Latchkey's own API); an app has one consent per resource. */
  resource: string | null
  grantedAt: number
  /** Its last code exchange or refresh for the user (of the families alive); null if none. */
  lastUsedAt: number | null
}

export interface GrantStore {
  /** What the user allowed the app for one resource (null: Latchkey's own API). */
  grantedScope(userId: string, clientId: string, resource: string | null): Promise<string[]>
  listAuthorizedApps(userId: string): Promise<AuthorizedApp[]>
  /** Issues a code; with `remember`, first adds those scopes to the user's consent for the code's resource (a union). */
  issueCode(code: NewCode, remember: { scopes: readonly string[]; canonicalOrder: readonly string[]; now: number } | undefined): Promise<void>
  /** "Revoke access": the consent, the access and refresh tokens and the pending codes of the user at the client. */
  revokeAccess(userId: string, clientId: string): Promise<boolean>
  /**
   * RFC 6749 §4.1.2, §4.1.3: claims the code once. An unknown code is `unknown`; a used one is
   * `used` and revokes every token it led to (its family); otherwise `codeRefusal` decides
   * (expiry, client, redirect_uri, PKCE, resource) and, when it accepts, the tokens
   * (`tokensForCode`) are inserted and the code marked used.
   */
  exchangeCode(exchange: CodeExchange): Promise<ExchangeOutcome>
  /**
   * The refresh grant on the locked family that `lookup` names: `decide` sees the family and the
   * presented token's row (undefined when it is gone) and refuses, revokes the family (reuse) or
   * issues the next tokens, stamping the presented one rotated. An unknown family is
   * invalid_grant. Every refresh, exchange and revocation of one grant, on any instance, runs
   * one after the other, and a revoked family stays revoked: nothing refreshes it afterwards.
   */
  refresh(lookup: RefreshLookup, now: number, decide: (found: FoundRefresh) => RefreshDecision): Promise<RefreshOutcome>
  findRefreshToken(lookup: RefreshLookup): Promise<FoundRefresh | undefined>
  /** The family and every access and refresh token in it. */
  revokeFamily(familyId: string): Promise<boolean>
  /** How the user signed in for an authorization (a family); undefined once it is gone. */
  signInOf(familyId: string): Promise<SignIn | undefined>
}
