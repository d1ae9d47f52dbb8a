import type { AppContext } from '../../../context'
import type { CodeRecord } from '../../../db/store'
import { constantTimeEqual, s256, sha256 } from '../../../lib/crypto'
import { InvalidGrant, InvalidTarget } from '../../../lib/errors'
import type { Client } from '../../clients'
import type { TokenRequest, TokenResponse } from '../model'
import { AUDIENCE_MISMATCH, mintTokens, newFamilyId, requestedAudience, withIdToken } from '../issue'

export const grantType = 'authorization_code'
export const parameters = ['code', 'redirect_uri'] as const

const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/

/** RFC 6749 §4.1.3 and RFC 7636 §4.6: what binds a code; a reason to refuse it, or undefined. */
function refusal(code: CodeRecord, client: Client, body: TokenRequest, now: number): string | undefined {
  if (code.expiresAt <= now) return 'authorization code has expired'
  if (code.clientId !== client.id) return 'authorization code was issued to another client'
  if (code.redirectUri !== body.redirect_uri) return 'redirect_uri does not match the authorization request'
  const verifier = body.code_verifier
  if (code.codeChallenge !== null) {
    if (verifier === undefined || !VERIFIER.test(verifier) || !constantTimeEqual(s256(verifier), code.codeChallenge))
      return 'PKCE code_verifier is missing or wrong'
  } else if (verifier !== undefined) {
    return 'code_verifier sent but the authorization request had no code_challenge'
  }
  return undefined
}

/**
 * Checking, using up the code and issuing the tokens are one atomic store operation, correct
 * across instances; a replay (§4.1.2) revokes everything the code led to even though it fails.
 */
export async function handler(ctx: AppContext, client: Client, body: TokenRequest, request?: Request): Promise<TokenResponse> {
  const now = ctx.clock.now()
  const audience = await requestedAudience(ctx, body.resource)
  let minted: ReturnType<typeof mintTokens> | undefined
  let exchanged: CodeRecord | undefined
  let otherAudience = false
  const outcome = await ctx.store.grants.exchangeCode(
    sha256(body.code!),
    now,
    (code) => {
      const refused = refusal(code, client, body, now)
      // RFC 8707 §2.2: a code is for the resource it was asked for; the exchange may repeat it, not change it.
      if (!refused && audience !== undefined && audience !== code.resource) otherAudience = true
      return refused ?? (otherAudience ? AUDIENCE_MISMATCH : undefined)
    },
    (code) => {
      exchanged = code
      minted = mintTokens(ctx, {
        clientId: client.id,
        userId: code.userId,
        grantScope: code.scope,
        accessScope: code.scope,
        familyId: newFamilyId(),
        authTime: code.authTime,
        amr: code.amr,
        resource: code.resource,
      })
      return minted.issued
    },
  )
  if (!outcome.ok) {
    if (outcome.reason === 'used') ctx.tokens.forget()
    if (otherAudience) throw new InvalidTarget(AUDIENCE_MISMATCH)
    throw new InvalidGrant(outcome.reason === 'unknown' ? 'authorization code is invalid' : outcome.reason === 'used' ? 'authorization code was already used' : outcome.description!)
  }
  const code = exchanged!
  ctx.audit.record('token.issued', { userId: code.userId, clientId: client.id, request, detail: { grant: grantType, scope: code.scope } })
  return withIdToken(ctx, await minted!.response(outcome), { userId: code.userId, clientId: client.id, idTokenAlg: client.idTokenAlg, grantScope: code.scope, nonce: code.nonce, authTime: code.authTime, amr: code.amr })
}
