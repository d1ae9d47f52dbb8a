import type { AppContext } from '../../../context'
import type { ResourceRecord } from '../../../db/store'
import { InvalidScope, InvalidTarget } from '../../../lib/errors'
import type { Client } from '../../clients'
import { jwtAccessToken } from '../../jwt-access-tokens'
import { requestedAudience } from '../issue'
import { replayed, takeDeferredJti } from '../client-assertion'
import type { TokenRequest, TokenResponse } from '../model'

export const grantType = 'client_credentials'
export const parameters = [] as const

/**
 * RFC 6749 §4.4: a confidential client's own token, for one registered resource (RFC 8707), with
 * scopes among its `--allowed-scope`. No user: `sub` is the client, and there is no refresh
 * token (§4.4.3). Without `resource`, the audience is the one resource whose scopes were asked.
 */
export async function handler(ctx: AppContext, client: Client, body: TokenRequest, request?: Request): Promise<TokenResponse> {
  const resource = await audienceOf(ctx, client, body)
  const asked = body.scope === undefined ? undefined : [...new Set(body.scope.split(' ').filter(Boolean))]
  // §3.3: no scope asked means the client's allowed scopes of that resource.
  const scopes = asked ?? client.allowedScopes.filter((s) => Object.hasOwn(resource.scopes, s))
  if (scopes.length === 0) throw new InvalidScope('scope is required: name scopes of a resource this client is allowed')
  for (const s of scopes) {
    if (!client.allowedScopes.includes(s)) throw new InvalidScope(`this client is not allowed the scope ${s}`)
    if (!Object.hasOwn(resource.scopes, s)) throw new InvalidScope(`${s} is not a scope of ${resource.uri}`)
  }
  // The resource's order, as the consent's scopes are kept.
  const scope = Object.keys(resource.scopes).filter((s) => scopes.includes(s)).join(' ')
  const minted = ctx.tokens.mintForClient({ clientId: client.id, scope, resource: resource.uri })
  // Committed with the token, before it is answered (SPEC "Audit log"), as a code exchange's.
  // private_key_jwt: the assertion's jti is used in the same transaction (one commit); used already, nothing is issued.
  const jti = request && takeDeferredJti(request)
  const id = await ctx.store.tokens.insertClientToken(minted.row, ctx.audit.event('token.issued', { clientId: client.id, request, detail: { grant: grantType, scope } }), jti)
  if (id === undefined) throw replayed(ctx, client.id)
  const accessToken = resource.tokenFormat === 'jwt' ? await jwtAccessToken(ctx, { ...minted.row, userId: null }, resource.uri, id) : minted.spell(id)
  return { access_token: accessToken, token_type: 'Bearer', expires_in: minted.expiresIn, scope }
}

/**
 * The resource the token is for: the one `resource` names, else the only one owning the scopes
 * asked (scopes of two resources, or of none: invalid_target). Latchkey's own API serves users,
 * not clients: it is no audience here.
 */
async function audienceOf(ctx: AppContext, client: Client, body: TokenRequest): Promise<ResourceRecord> {
  const named = await requestedAudience(ctx, body.resource)
  if (named === null) throw new InvalidTarget("Latchkey's own API is for tokens on behalf of a user; name a registered resource")
  if (named !== undefined) return (await ctx.resources.byUri(named))!
  const asked = body.scope?.split(' ').filter(Boolean) ?? client.allowedScopes
  const owners = (await ctx.resources.list()).filter((r) => asked.some((s) => Object.hasOwn(r.scopes, s)))
  if (owners.length === 1) return owners[0]!
  if (owners.length === 0 && body.scope !== undefined) throw new InvalidScope('no registered resource has these scopes')
  throw new InvalidTarget(owners.length ? 'the scopes belong to more than one resource: name one with resource' : 'name a resource (this client is allowed no scope)')
}
