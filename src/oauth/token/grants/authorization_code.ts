import type { AppContext } from '../../../context'
import type { CodeRefusal } from '../../../db/store'
import { s256, sha256 } from '../../../lib/crypto'
import { InvalidGrant, InvalidTarget } from '../../../lib/errors'
import type { Client } from '../../clients'
import type { TokenRequest, TokenResponse } from '../model'
import { AUDIENCE_MISMATCH, mintForCode, requestedAudience, withIdToken } from '../issue'

export const grantType = 'authorization_code'
export const parameters = ['code', 'redirect_uri'] as const

const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/

/** RFC 6749 §4.1.3 and RFC 7636 §4.6: why the store refused a code, as the error's description. */
const REFUSALS: Record<Exclude<CodeRefusal, 'audience'>, string> = {
  expired: 'authorization code has expired',
  client: 'authorization code was issued to another client',
  redirect_uri: 'redirect_uri does not match the authorization request',
  pkce: 'PKCE code_verifier is missing or wrong',
  verifier: 'code_verifier sent but the authorization request had no code_challenge',
}

/** The S256 of a presented verifier (RFC 7636 §4.6); '' for one not well formed, which matches no challenge. */
function challengeOf(verifier: string | undefined): string | null {
  if (verifier === undefined) return null
  return VERIFIER.test(verifier) ? s256(verifier) : ''
}

/**
 * Checking, using up the code and issuing the tokens are one atomic store operation, correct
 * across instances; a replay (§4.1.2) revokes everything the code led to even though it fails.
 */
export async function handler(ctx: AppContext, client: Client, body: TokenRequest, request?: Request): Promise<TokenResponse> {
  const audience = await requestedAudience(ctx, body.resource)
  const minted = mintForCode(ctx, client.id)
  const outcome = await ctx.store.grants.exchangeCode({
    codeHash: sha256(body.code!),
    now: ctx.clock.now(),
    // RFC 8707 §2.2: a code is for the resource it was asked for; the exchange may repeat it, not change it.
    expect: { clientId: client.id, redirectUri: body.redirect_uri, challenge: challengeOf(body.code_verifier), audience },
    tokens: minted.tokens,
    // Committed with the tokens, before they are answered (SPEC "Audit log"); user and scope are the code's.
    audit: ctx.audit.event('token.issued', { clientId: client.id, request, detail: { grant: grantType } }),
  })
  if (!outcome.ok) {
    if (outcome.reason === 'unknown') throw new InvalidGrant('authorization code is invalid')
    // What the code issued is revoked by the store, which tells the token caches (the change feed).
    if (outcome.reason === 'used') throw new InvalidGrant('authorization code was already used')
    throw outcome.refusal === 'audience' ? new InvalidTarget(AUDIENCE_MISMATCH) : new InvalidGrant(REFUSALS[outcome.refusal])
  }
  const { code } = outcome
  return withIdToken(ctx, await minted.response(outcome, code), { userId: code.userId, clientId: client.id, idTokenAlg: client.idTokenAlg, grantScope: code.scope, nonce: code.nonce, authTime: code.authTime, amr: code.amr, sid: code.sid, firstInSession: true })
}
