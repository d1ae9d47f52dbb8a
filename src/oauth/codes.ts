import type { NewCode, Store } from '../db/store'
import { randomToken, sha256 } from '../lib/crypto'

export interface CodeGrant {
  clientId: string
  userId: string
  redirectUri: string
  scope: string
  codeChallenge: string | null
  /** OpenID Connect: the request's nonce (for the id_token), and when the user signed in. */
  nonce?: string | null
  authTime?: number | null
  /** How the user signed in (RFC 8176 values, space-separated). */
  amr?: string | null
  /** The resource (RFC 8707) the tokens will be for; null for Latchkey's own API. */
  resource?: string | null
  /** The sign-in session that approved it (id_tokens' `sid`). */
  sid?: string | null
}

/**
 * Issues a single-use code bound to client, user, redirect_uri, scope and PKCE challenge; with
 * `rememberScopes`, the user's consent grows by them in the same write.
 */
export async function issueCode(
  store: Store,
  grant: CodeGrant,
  now: number,
  ttlSeconds: number,
  remember?: { scopes: readonly string[]; canonicalOrder: readonly string[] },
): Promise<string> {
  const { code, record } = newCode(grant, now, ttlSeconds)
  await store.grants.issueCode(record, remember && { ...remember, now })
  return code
}

/** A new code for the grant and the row that stores it (its hash), for a caller that writes it in its own transaction. */
export function newCode(grant: CodeGrant, now: number, ttlSeconds: number): { code: string; record: NewCode } {
  const code = randomToken()
  const record = { ...grant, nonce: grant.nonce ?? null, authTime: grant.authTime ?? null, amr: grant.amr ?? null, resource: grant.resource ?? null, sid: grant.sid ?? null }
  return { code, record: { ...record, codeHash: sha256(code), expiresAt: now + ttlSeconds * 1000 } }
}
