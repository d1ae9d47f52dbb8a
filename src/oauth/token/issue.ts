import type { AppContext } from '../../context'
import type { CodeExchange, CodeRecord, IdTokenAlg, IssuedTokens, NewToken, TokenSecrets } from '../../db/store'
import type { FamilyKey, MintedRefresh } from '../refresh-tokens'
import type { MintedToken } from '../tokens'
import type { TokenResponse } from './model'
import { issueIdToken } from '../../oidc/id-token'
import { jwtAccessToken } from '../jwt-access-tokens'
import { InvalidTarget } from '../../lib/errors'

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
 * one family (a refresh passes the family's key on; without one, the family gets a new key). `response` spells them once the store has given their rows ids.
 */
export function mintTokens(
  ctx: AppContext,
  input: {
    clientId: string
    userId: string
    grantScope: string
    accessScope: string
    familyId: string
    authTime?: number | null
    amr?: string | null
    familyKey?: FamilyKey
    /** The resource the tokens are for (RFC 8707); null for Latchkey's own API. */
    resource: string | null
  },
): { issued: IssuedTokens; response(ids: { tokenId: number; familyRef: number }): Promise<TokenResponse> } {
  const { clientId, userId, familyId, resource } = input
  const access = ctx.tokens.mint({ clientId, userId, familyId, scope: input.accessScope, resource })
  const refresh = ctx.refreshTokens.mint({ clientId, userId, familyId, scope: input.grantScope, resource }, input.familyKey)
  return {
    issued: { access: access.row, refresh: { ...refresh.row, authTime: input.authTime ?? null }, keyHash: refresh.keyHash, amr: input.amr ?? null },
    response: (ids) => tokenResponse(ctx, access, refresh, ids, input.accessScope),
  }
}

type Ids = { tokenId: number; familyRef: number }

async function tokenResponse(ctx: AppContext, access: MintedToken, refresh: MintedRefresh, ids: Ids, scope: string): Promise<TokenResponse> {
  const { resource } = access.row
  return {
    // A --token-format jwt resource gets an RFC 9068 JWT naming the same row (revocation and introspection find it).
    access_token: resource !== null && (await ctx.resources.byUri(resource))?.tokenFormat === 'jwt' ? await jwtAccessToken(ctx, access.row, resource, ids.tokenId) : access.spell(ids.tokenId),
    token_type: 'Bearer',
    expires_in: access.expiresIn,
    refresh_token: refresh.spell(ids.familyRef),
    scope,
  }
}

const secretsOf = (row: NewToken): TokenSecrets => ({ verifierHash: row.verifierHash, expiresAt: row.expiresAt, createdAt: row.createdAt })

/**
 * A code exchange's pair, minted before the code is read (the store reads the code and stores
 * the pair in one statement): the secrets go to the store, and the response is spelled with the
 * grant the code held.
 */
export function mintForCode(ctx: AppContext, clientId: string): { tokens: CodeExchange['tokens']; response(ids: Ids, code: CodeRecord): Promise<TokenResponse> } {
  const familyId = newFamilyId()
  // Only the secrets leave here: the rows' user, scope and resource are the code's.
  const pending = { clientId, familyId, userId: '', scope: '', resource: null }
  const access = ctx.tokens.mint(pending)
  const refresh = ctx.refreshTokens.mint(pending)
  return {
    tokens: { familyId, access: secretsOf(access.row), refresh: secretsOf(refresh.row), keyHash: refresh.keyHash },
    response: (ids, code) => {
      const row = { ...access.row, userId: code.userId, scope: code.scope, resource: code.resource }
      return tokenResponse(ctx, { ...access, row }, refresh, ids, code.scope)
    },
  }
}

/** OpenID Connect: with `openid` granted, the response also carries an id_token (Core §3.1.3.3, §12.2). */
export async function withIdToken(
  ctx: AppContext,
  response: TokenResponse,
  input: { userId: string; clientId: string; idTokenAlg: IdTokenAlg; grantScope: string; nonce: string | null; authTime: number | null; amr: string | null; sid?: string | null; firstInSession?: boolean },
): Promise<TokenResponse> {
  if (!input.grantScope.split(' ').includes('openid')) return response
  const user = await ctx.store.users.findUser(input.userId)
  if (!user) return response
  // The app now holds an id_token of this session: it is sent a logout token when the session ends (Back-Channel Logout §2.7).
  if (input.sid && input.firstInSession) await ctx.store.sessions.recordIdToken(input.sid, input.clientId)
  const idToken = await issueIdToken(ctx, { user, clientId: input.clientId, alg: input.idTokenAlg, scopes: response.scope.split(' '), nonce: input.nonce, authTime: input.authTime, amr: input.amr, sid: input.sid })
  return { ...response, id_token: idToken }
}

/**
 * RFC 8707 §2.2 at the token endpoint: the `resource` a code exchange or a refresh names, if any,
 * as its audience (null: Latchkey's own API). An unregistered one, or several, is
 * invalid_target; the caller compares it with the grant's.
 */
export async function requestedAudience(ctx: AppContext, resource: string | string[] | undefined): Promise<string | null | undefined> {
  if (resource === undefined) return undefined
  const audience = typeof resource === 'string' ? await ctx.resources.audience(resource) : undefined
  if (!audience) throw new InvalidTarget(typeof resource === 'string' ? 'resource is not a resource registered with this server' : 'one resource per token request')
  return audience.resource?.uri ?? null
}

export const AUDIENCE_MISMATCH = 'resource is not the one the authorization was for'
