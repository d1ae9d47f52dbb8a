import type { AppContext } from '../../../context'
import type { FoundRefresh, RefreshDecision, RefreshRecord, RefreshRefusal } from '../../../db/store'
import { ApiError, InvalidGrant, InvalidScope, InvalidTarget } from '../../../lib/errors'
import type { Client } from '../../clients'
import { MAX_LIVE_BRANCHES, REFRESHES_PER_MINUTE, type PresentedRefresh } from '../../refresh-tokens'
import { AUDIENCE_MISMATCH, mintTokens, requestedAudience, withIdToken } from '../issue'
import type { TokenRequest, TokenResponse } from '../model'

export const grantType = 'refresh_token'
export const parameters = ['refresh_token'] as const

const refuse = (description: string, error: RefreshRefusal['error'] = 'invalid_grant'): RefreshDecision => ({ refuse: { error, description } })
const INVALID = 'refresh token is invalid, expired or revoked'
const MINUTE = 60_000
const REUSED = 'refresh token was already used; every token of its grant is revoked'
const NOT_ALLOWED = 'the user is no longer in a group allowed to use this app'

/**
 * RFC 6749 §6 with rotation and reuse detection (RFC 9700 §4.14.2), decided on the locked family:
 * a token rotated less than REFRESH_TOKEN_REUSE_GRACE seconds ago still works (two tabs
 * refreshing at once) and revokes nothing; later — or a token of the family whose row is gone —
 * it revokes the whole family. At most REFRESHES_PER_MINUTE refreshes per family.
 */
function decide(
  ctx: AppContext,
  client: Client,
  body: TokenRequest,
  presented: PresentedRefresh,
  audience: string | null | undefined,
  found: FoundRefresh,
  now: number,
  keep: (pair: ReturnType<typeof mintTokens>) => void,
): RefreshDecision {
  const { family, token } = found
  if (!ctx.refreshTokens.isMember(presented, found)) return refuse(INVALID)
  if (family.clientId !== client.id) return refuse('refresh token was issued to another client')
  if (token === undefined) return { revokeFamily: REUSED, reuse: true }
  if (token.expiresAt <= now) return refuse('refresh token has expired')
  // A refresh keeps the grant's audience (RFC 8707 §2.2): `resource`, when sent, must name it.
  if (audience !== undefined && audience !== family.resource) return refuse(AUDIENCE_MISMATCH, 'invalid_target')
  const granted = token.scope.split(' ')
  let scope = token.scope
  if (body.scope !== undefined) {
    const asked = new Set(body.scope.split(' ').filter(Boolean))
    if (asked.size === 0 || ![...asked].every((s) => granted.includes(s))) return refuse('scope must be within the scope originally granted', 'invalid_scope')
    scope = granted.filter((s) => asked.has(s)).join(' ')
  }
  // With no grace, any second use is a reuse, whatever two instances' clocks say.
  if (!ctx.refreshTokens.isCurrent(found, now)) return { revokeFamily: REUSED, reuse: true }
  // --allowed-group holds for as long as the grant lives (SPEC, Groups): a user no longer in a
  // group the app allows gets nothing more from it, and the grant ends. Leaving a group revokes
  // the grant already; this catches a grant that outlived the membership some other way. Read
  // with the locked family, so it costs the refresh no statement of its own.
  if (!family.allowed) return { revokeFamily: NOT_ALLOWED, reuse: false }
  const sameMinute = now - family.windowStart < MINUTE
  if (sameMinute && family.windowCount >= REFRESHES_PER_MINUTE) return refuse('this grant was refreshed too often; try again in a minute', 'too_many_refreshes')
  // A second use within the grace starts another live token; a family keeps only a few.
  if (token.rotatedAt !== null && family.live >= MAX_LIVE_BRANCHES) return refuse(INVALID)
  const pair = mintTokens(ctx, {
    clientId: client.id,
    userId: token.userId,
    grantScope: token.scope,
    accessScope: scope,
    familyId: token.familyId,
    authTime: token.authTime,
    resource: family.resource,
    // A member's key matched the stored hash (isMember above): it is passed on, not hashed again.
    familyKey: presented.key === undefined ? undefined : { key: presented.key, hash: family.keyHash! },
  })
  keep(pair)
  return {
    issue: pair.issued,
    markRotated: token.rotatedAt === null,
    window: sameMinute ? { start: family.windowStart, count: family.windowCount + 1 } : { start: now, count: 1 },
    pruneRotatedBefore: now - ctx.refreshTokens.graceSeconds * 1000,
  }
}

export async function handler(ctx: AppContext, client: Client, body: TokenRequest, request?: Request): Promise<TokenResponse> {
  const presented = ctx.refreshTokens.read(body.refresh_token!)
  if (presented === undefined) throw new InvalidGrant(INVALID)
  const audience = await requestedAudience(ctx, body.resource)
  let pair: ReturnType<typeof mintTokens> | undefined
  let token: RefreshRecord | undefined
  let windowStart = 0
  let signIn: { authTime: number | null; amr: string | null; sid?: string | null } = { authTime: null, amr: null }
  // The time is read once the family is locked: a refresh that waited for another must see its rotation as past.
  const outcome = await ctx.store.grants.refresh(presented.lookup, ctx.clock.now(), (found) => {
    token = found.token
    windowStart = found.family.windowStart
    signIn = found.family
    const decision = decide(ctx, client, body, presented, audience, found, ctx.clock.now(), (minted) => (pair = minted))
    // Committed with the new tokens, before they are answered (SPEC "Audit log").
    return 'issue' in decision ? { ...decision, audit: ctx.audit.event('token.refreshed', { userId: found.token!.userId, clientId: client.id, request }) } : decision
  })
  if (!outcome.ok) {
    if (outcome.familyRevoked) {
      ctx.metrics.reuseDetected()
      await ctx.audit.record('refresh.reuse_detected', { userId: token?.userId, clientId: client.id })
    }
    if (outcome.error === 'too_many_refreshes') {
      const wait = Math.max(1, Math.ceil((windowStart + MINUTE - ctx.clock.now()) / 1000))
      throw new ApiError('invalid_grant', 429, outcome.description, { 'retry-after': String(wait) })
    }
    if (outcome.error === 'invalid_target') throw new InvalidTarget(outcome.description)
    throw outcome.error === 'invalid_scope' ? new InvalidScope(outcome.description) : new InvalidGrant(outcome.description)
  }
  const grant = token!
  // A refreshed id_token keeps the original auth_time and carries no nonce (Core §12.2).
  return withIdToken(ctx, await pair!.response(outcome), { userId: grant.userId, clientId: client.id, idTokenAlg: client.idTokenAlg, grantScope: grant.scope, nonce: null, authTime: signIn.authTime ?? grant.authTime, amr: signIn.amr, sid: signIn.sid })
}
