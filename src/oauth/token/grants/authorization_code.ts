import type { AppContext } from '../../../context'
import { constantTimeEqual, s256, sha256 } from '../../../lib/crypto'
import { InvalidGrant } from '../../../lib/errors'
import type { Client } from '../../clients'
import { findCode, markCodeUsed } from '../../codes'
import type { TokenRequest, TokenResponse } from '../model'

export const grantType = 'authorization_code'
export const parameters = ['code', 'redirect_uri'] as const

const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/

type Outcome = { ok: true; response: TokenResponse } | { ok: false; description: string }

/**
 * RFC 6749 §4.1.3 and RFC 7636 §4.6. Runs as one write job: checking, using up the code and
 * issuing the token are atomic, and the revocation on replay commits even though the request fails.
 */
function exchange(ctx: AppContext, client: Client, body: TokenRequest): Outcome {
  const now = ctx.clock.now()
  const codeHash = sha256(body.code!)
  const code = findCode(ctx.db, codeHash)
  if (!code) return { ok: false, description: 'authorization code is invalid' }
  if (code.usedAt !== null) {
    // §4.1.2: a code used twice revokes what it issued.
    if (code.tokenId !== null) ctx.tokens.revoke(code.tokenId)
    return { ok: false, description: 'authorization code was already used' }
  }
  if (code.expiresAt <= now) return { ok: false, description: 'authorization code has expired' }
  if (code.clientId !== client.id) return { ok: false, description: 'authorization code was issued to another client' }
  if (code.redirectUri !== body.redirect_uri) return { ok: false, description: 'redirect_uri does not match the authorization request' }
  const verifier = body.code_verifier
  if (code.codeChallenge !== null) {
    if (verifier === undefined || !VERIFIER.test(verifier) || !constantTimeEqual(s256(verifier), code.codeChallenge))
      return { ok: false, description: 'PKCE code_verifier is missing or wrong' }
  } else if (verifier !== undefined) {
    return { ok: false, description: 'code_verifier sent but the authorization request had no code_challenge' }
  }
  const { token, id, expiresIn } = ctx.tokens.issue({ clientId: client.id, userId: code.userId, scope: code.scope })
  // The single writer saw used_at empty above, so this cannot fail; if it ever did, throwing
  // rolls the job (and the token) back.
  if (!markCodeUsed(ctx.db, codeHash, now, id)) throw new Error('authorization code changed during its exchange')
  return { ok: true, response: { access_token: token, token_type: 'Bearer', expires_in: expiresIn, scope: code.scope } }
}

export async function handler(ctx: AppContext, client: Client, body: TokenRequest): Promise<TokenResponse> {
  const outcome = await ctx.writer.write(() => exchange(ctx, client, body))
  if (!outcome.ok) throw new InvalidGrant(outcome.description)
  return outcome.response
}
