import type { AppContext } from '../../../context'
import { sha256 } from '../../../lib/crypto'
import { AuthorizationPending, ExpiredToken, InvalidGrant, PollAccessDenied, SlowDown } from '../../../lib/errors'
import { DEVICE_CODE, type Client } from '../../clients'
import { DEVICE_REDIRECT } from '../../device/pages'
import { mintForCode, withIdToken } from '../issue'
import type { TokenRequest, TokenResponse } from '../model'

export const grantType = DEVICE_CODE
export const parameters = ['device_code'] as const

/**
 * RFC 8628 §3.4–3.5: a poll, decided on the locked row (one answer per poll on any instance).
 * Once the user allowed, the one poll that sees it exchanges the code issued then — as an
 * authorization code exchange: a refresh token, an id_token with openid.
 */
export async function handler(ctx: AppContext, client: Client, body: TokenRequest, request?: Request): Promise<TokenResponse> {
  const outcome = await ctx.store.devices.pollDeviceCode(sha256(body.device_code as string), client.id, ctx.clock.now())
  switch (outcome.answer) {
    case 'authorization_pending':
      throw new AuthorizationPending('the user has not finished yet')
    case 'slow_down':
      throw new SlowDown('polling too fast: wait 5 seconds more between polls')
    case 'access_denied':
      throw new PollAccessDenied('the user denied access')
    case 'expired_token':
      throw new ExpiredToken('the device code has expired; start again')
    case 'invalid_grant':
      throw new InvalidGrant('device code is invalid or was used already')
  }
  const minted = mintForCode(ctx, client.id)
  const exchanged = await ctx.store.grants.exchangeCode({
    codeHash: outcome.codeHash,
    now: ctx.clock.now(),
    expect: { clientId: client.id, redirectUri: DEVICE_REDIRECT, challenge: null, audience: undefined },
    tokens: minted.tokens,
    // Written in the exchange's transaction, with the code's user and scope.
    audit: ctx.audit.event('token.issued', { clientId: client.id, request, detail: { grant: 'device_code' } }),
  })
  if (!exchanged.ok) throw new InvalidGrant('device code is invalid or was used already')
  const { code } = exchanged
  return withIdToken(ctx, await minted.response(exchanged, code), { userId: code.userId, clientId: client.id, idTokenAlg: client.idTokenAlg, grantScope: code.scope, nonce: null, authTime: code.authTime, amr: code.amr })
}
