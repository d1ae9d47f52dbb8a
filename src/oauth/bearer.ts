import type { AppContext } from '../context'
import { AccessDenied, InsufficientScope, InvalidToken } from '../lib/errors'
import type { Scope } from './scopes'
import type { TokenGrant, UserGrant } from './tokens'

const REALM = 'Bearer realm="latchkey"'

/** RFC 9728 §2: where the API's protected-resource metadata is, for its 401 challenges (§5.1). */
export const resourceMetadataUrl = (issuer: string) => `${issuer}/.well-known/oauth-protected-resource`

/**
 * RFC 6750 §3: no credentials → 401 with a bare challenge; a bad token → 401 with
 * error="invalid_token"; a token without the scope → 403 insufficient_scope naming it. The 401s
 * name the API's resource metadata (RFC 9728 §5.1), which MCP clients start from.
 * `clientId`, when the caller passed one, must be the token's own application. A token issued
 * for another resource (RFC 8707) is not for this API — invalid_token — unless `anyAudience`
 * (userinfo, which answers whoever the token is for).
 */
export function authenticateBearer(
  ctx: AppContext,
  request: Request,
  scope?: Scope,
  clientId?: string,
  anyAudience = false,
): UserGrant | Promise<UserGrant> {
  const header = request.headers.get('authorization')
  if (!header || header.length < 8 || header.slice(0, 7).toLowerCase() !== 'bearer ')
    throw new InvalidToken('an access token is required (Authorization: Bearer)', { 'www-authenticate': `${REALM}, resource_metadata="${resourceMetadataUrl(ctx.config.issuer)}"` })
  const found = ctx.tokens.validate(header.slice(7).trim())
  // A cache hit answers synchronously: no promise on the hot path.
  return found instanceof Promise
    ? found.then((grant) => checkGrant(ctx, grant, scope, clientId, anyAudience))
    : checkGrant(ctx, found, scope, clientId, anyAudience)
}

function checkGrant(ctx: AppContext, grant: TokenGrant | undefined, scope: Scope | undefined, clientId: string | undefined, anyAudience: boolean): UserGrant {
  if (grant && grant.resource !== null && !anyAudience)
    throw new InvalidToken('the access token was issued for another resource', {
      'www-authenticate': `${REALM}, error="invalid_token", resource_metadata="${resourceMetadataUrl(ctx.config.issuer)}"`,
    })
  if (!grant)
    throw new InvalidToken('the access token is invalid, expired or revoked', {
      'www-authenticate': `${REALM}, error="invalid_token", resource_metadata="${resourceMetadataUrl(ctx.config.issuer)}"`,
    })
  // A client's own token (client_credentials) has no user to describe or keep settings for.
  if (!isUserGrant(grant))
    throw new InvalidToken('the access token was issued to a client, not on behalf of a user', {
      'www-authenticate': `${REALM}, error="invalid_token", resource_metadata="${resourceMetadataUrl(ctx.config.issuer)}"`,
    })
  if (scope && !grant.scopes.includes(scope))
    throw new InsufficientScope(`the access token lacks the scope ${scope}`, {
      'www-authenticate': `${REALM}, error="insufficient_scope", scope="${scope}"`,
    })
  if (clientId !== undefined) checkClientId(grant, clientId)
  return grant
}

export const isUserGrant = (grant: TokenGrant): grant is UserGrant => grant.user !== null

/** The seed lets callers name their application; it must be the token's own. */
export function checkClientId(grant: TokenGrant, clientId: string): void {
  if (clientId !== grant.clientId) throw new AccessDenied('client_id is not the application this access token was issued to')
}
