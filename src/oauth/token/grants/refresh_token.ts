import type { AppContext } from '../../../context'
import type { RefreshDecision, RefreshRecord } from '../../../db/store'
import { InvalidGrant, InvalidScope } from '../../../lib/errors'
import type { Client } from '../../clients'
import { parseScope } from '../../scopes'
import { mintTokens, withIdToken } from '../issue'
import type { TokenRequest, TokenResponse } from '../model'

export const grantType = 'refresh_token'
export const parameters = ['refresh_token'] as const

const refuse = (description: string, error: 'invalid_grant' | 'invalid_scope' = 'invalid_grant'): RefreshDecision => ({ refuse: { error, description } })

/**
 * RFC 6749 §6 with rotation and reuse detection (RFC 9700 §4.14.2), decided on the locked row:
 * a token rotated less than REFRESH_TOKEN_REUSE_GRACE seconds ago still works (two tabs
 * refreshing at once) and revokes nothing; later, it revokes its whole family.
 */
function decide(
  ctx: AppContext,
  client: Client,
  body: TokenRequest,
  token: RefreshRecord,
  now: number,
  keep: (pair: ReturnType<typeof mintTokens>) => void,
): RefreshDecision {
  if (!ctx.refreshTokens.matches(body.refresh_token!, token)) return refuse('refresh token is invalid, expired or revoked')
  if (token.clientId !== client.id) return refuse('refresh token was issued to another client')
  if (token.expiresAt <= now) return refuse('refresh token has expired')
  const granted = token.scope.split(' ')
  let scope = token.scope
  if (body.scope !== undefined) {
    const asked = parseScope(body.scope)
    if (!asked || !asked.every((s) => granted.includes(s))) return refuse('scope must be within the scope originally granted', 'invalid_scope')
    scope = asked.join(' ')
  }
  // With no grace, any second use is a reuse, whatever two instances' clocks say.
  const grace = ctx.refreshTokens.graceSeconds * 1000
  if (token.rotatedAt !== null && !(grace > 0 && now - token.rotatedAt < grace))
    return { revokeFamily: 'refresh token was already used; every token of its grant is revoked' }
  const pair = mintTokens(ctx, {
    clientId: client.id,
    userId: token.userId,
    grantScope: token.scope,
    accessScope: scope,
    familyId: token.familyId,
    authTime: token.authTime,
  })
  keep(pair)
  return { issue: pair.issued, markRotated: token.rotatedAt === null }
}

export async function handler(ctx: AppContext, client: Client, body: TokenRequest): Promise<TokenResponse> {
  const id = ctx.refreshTokens.idOf(body.refresh_token!)
  if (id === undefined) throw new InvalidGrant('refresh token is invalid, expired or revoked')
  let pair: ReturnType<typeof mintTokens> | undefined
  let presented: RefreshRecord | undefined
  // The time is read once the row is locked: a refresh that waited for another must see its rotation as past.
  const outcome = await ctx.store.grants.refresh(id, ctx.clock.now(), (token) => {
    presented = token
    return decide(ctx, client, body, token, ctx.clock.now(), (minted) => (pair = minted))
  })
  if (!outcome.ok) {
    if (outcome.familyRevoked) ctx.tokens.forget()
    throw outcome.error === 'invalid_scope' ? new InvalidScope(outcome.description) : new InvalidGrant(outcome.description)
  }
  const token = presented!
  // A refreshed id_token keeps the original auth_time and carries no nonce (Core §12.2).
  return withIdToken(ctx, pair!.response(outcome), { userId: token.userId, clientId: client.id, grantScope: token.scope, nonce: null, authTime: token.authTime })
}
