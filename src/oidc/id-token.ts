import { avatarUrlOf } from '../accounts/avatar'
import type { AppContext } from '../context'
import type { IdTokenAlg, UserRecord } from '../db/store'
import { signJwt } from './jwt'

const seconds = (ms: number) => Math.floor(ms / 1000)

/** The identity claims a scope carries (OpenID Connect Core §5.4), for the id_token and userinfo. */
export function identityClaims(ctx: AppContext, user: UserRecord, scopes: readonly string[]): Record<string, unknown> {
  const claims: Record<string, unknown> = { sub: user.id }
  if (scopes.includes('email')) {
    claims.email = user.email
    claims.email_verified = user.emailVerified
  }
  if (scopes.includes('profile')) {
    claims.name = user.fullName
    claims.picture = avatarUrlOf(ctx.config, user)
  }
  return claims
}

/** Scope `groups` → claim `groups`, the names of the user's groups (id_token, userinfo, introspection). */
export async function groupsClaim(ctx: Pick<AppContext, 'store'>, userId: string, scopes: readonly string[]): Promise<{ groups?: string[] }> {
  return scopes.includes('groups') ? { groups: await ctx.store.groups.groupsOf(userId) } : {}
}

/**
 * An ID token (Core §2), signed with the client's algorithm (RS256 unless it chose ES256 or EdDSA): iss, sub, aud, exp, iat, auth_time, the request's nonce exactly
 * as sent (none on a refresh, §12.2), and the claims of the granted scopes.
 */
export async function issueIdToken(
  ctx: AppContext,
  input: { user: UserRecord; clientId: string; alg?: IdTokenAlg; scopes: readonly string[]; nonce: string | null; authTime: number | null; amr?: string | null; sid?: string | null },
): Promise<string> {
  const now = ctx.clock.now()
  const signer = await ctx.signingKeys.signingKey(input.alg)
  const payload: Record<string, unknown> = {
    iss: ctx.config.issuer,
    ...identityClaims(ctx, input.user, input.scopes),
    ...(await groupsClaim(ctx, input.user.id, input.scopes)),
    aud: input.clientId,
    exp: seconds(now) + ctx.config.accessTokenTtl,
    iat: seconds(now),
  }
  if (input.authTime !== null) payload.auth_time = seconds(input.authTime)
  if (input.nonce !== null) payload.nonce = input.nonce
  // RFC 8176: how the user signed in ("pwd"; "pwd otp mfa"; a passkey "hwk user", with "mfa" when verified).
  if (input.amr) payload.amr = input.amr.split(' ')
  // OpenID Connect Back-Channel Logout §2.4: the sign-in session, the same for every app; its logout_token names it.
  if (input.sid) payload.sid = input.sid
  return signJwt(payload, signer)
}
