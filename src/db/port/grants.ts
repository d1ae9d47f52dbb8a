/**
 * Grants: what a user allowed an app (consent), and what that authorization issued — codes, then
 * access and refresh tokens that share a family.
 */

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
}

/** A refresh token's row; `scope` is the original grant's (a refresh may only narrow it). */
export interface NewRefreshToken extends NewToken {
  /** When the user signed in for this grant (a refreshed id_token keeps it). */
  authTime: number | null
}

export interface RefreshRecord extends NewRefreshToken {
  id: number
  /** When it was first used to rotate; null while it is the family's newest. */
  rotatedAt: number | null
}

/** What a code exchange or a refresh issues. */
export interface IssuedTokens {
  access: NewToken
  refresh: NewRefreshToken
}

/** What a refresh decides on the locked refresh token (RFC 6749 §6, RFC 9700 §4.14.2). */
export type RefreshDecision =
  | { refuse: { error: 'invalid_grant' | 'invalid_scope'; description: string } }
  | { revokeFamily: string }
  | { issue: IssuedTokens; markRotated: boolean }

export type RefreshOutcome =
  | { ok: true; tokenId: number; refreshId: number }
  | { ok: false; error: 'invalid_grant' | 'invalid_scope'; description: string; familyRevoked?: boolean }

/** The outcome of a code exchange, decided inside its transaction. */
export type ExchangeOutcome =
  | { ok: true; tokenId: number; refreshId: number }
  | { ok: false; reason: 'unknown' | 'used' | 'refused'; description?: string }

export interface AuthorizedApp {
  clientId: string
  name: string
  scopes: string[]
  grantedAt: number
  /** Its last code exchange or refresh for the user; null if none yet. */
  lastUsedAt: number | null
}

export interface GrantStore {
  grantedScope(userId: string, clientId: string): Promise<string[]>
  listAuthorizedApps(userId: string): Promise<AuthorizedApp[]>
  /** Issues a code; with `remember`, first adds those scopes to the user's consent (a union, in SQL). */
  issueCode(code: NewCode, remember: { scopes: readonly string[]; canonicalOrder: readonly string[]; now: number } | undefined): Promise<void>
  /** "Revoke access": the consent, the access and refresh tokens and the pending codes of the user at the client. */
  revokeAccess(userId: string, clientId: string): Promise<boolean>
  /**
   * RFC 6749 §4.1.2, §4.1.3: claims the code once. An unknown code is `unknown`; a used one is
   * `used` and revokes every token it led to (its family); otherwise `check` decides (client,
   * redirect_uri, expiry, PKCE) and, when it accepts, the tokens `issue` describes are inserted,
   * the code marked used, and the consent's last use noted.
   */
  exchangeCode(
    codeHash: string,
    now: number,
    check: (code: CodeRecord) => string | undefined,
    issue: (code: CodeRecord) => IssuedTokens,
  ): Promise<ExchangeOutcome>
  /**
   * The refresh grant on the locked refresh token `id`: `decide` refuses, revokes the family
   * (reuse after the grace window) or issues the next tokens, stamping the presented one
   * rotated. An unknown id is invalid_grant. Two refreshes of one token, on any instances, run
   * one after the other.
   */
  refresh(id: number, now: number, decide: (token: RefreshRecord) => RefreshDecision): Promise<RefreshOutcome>
  findRefreshToken(id: number): Promise<RefreshRecord | undefined>
  /** Every access and refresh token of the family. */
  revokeFamily(familyId: string): Promise<boolean>
}
