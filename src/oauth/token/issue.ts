import type { AppContext } from '../../context'
import type { IssuedTokens } from '../../db/store'
import type { TokenResponse } from './model'

/**
 * A family id: time-ordered (UUIDv7), so the family indexes grow at their end rather than at a
 * random page per token.
 */
export function newFamilyId(): string {
  return Bun.randomUUIDv7()
}

/**
 * The pair every grant issues: an access token with the scope asked for, and a refresh token
 * carrying the whole grant's scope (a later refresh may narrow again, never widen), both in
 * one family. `response` spells them once the store has given their rows ids.
 */
export function mintTokens(
  ctx: AppContext,
  input: { clientId: string; userId: string; grantScope: string; accessScope: string; familyId: string; authTime?: number | null },
): { issued: IssuedTokens; response(ids: { tokenId: number; refreshId: number }): TokenResponse } {
  const { clientId, userId, familyId } = input
  const access = ctx.tokens.mint({ clientId, userId, familyId, scope: input.accessScope })
  const refresh = ctx.refreshTokens.mint({ clientId, userId, familyId, scope: input.grantScope })
  return {
    issued: { access: access.row, refresh: { ...refresh.row, authTime: input.authTime ?? null } },
    response: (ids) => ({
      access_token: access.spell(ids.tokenId),
      token_type: 'Bearer',
      expires_in: access.expiresIn,
      refresh_token: refresh.spell(ids.refreshId),
      scope: input.accessScope,
    }),
  }
}
