import { Elysia } from 'elysia'
import type { AppContext } from '../context'
import type { SignIn } from '../db/store'
import { errorResponses } from '../docs/openapi'
import { InvalidClient, InvalidRequest } from '../lib/errors'
import { apiHeaders, json } from '../lib/http'
import { EVERY_CLIENT, type Client } from './clients'
import { REFRESH_TOKEN_PREFIX } from './refresh-tokens'
import { RevocationRequest } from './revoke'
import { authenticateClient } from './token/client-auth'
import { groupsClaim } from '../oidc/id-token'
import { parseTokenBody } from './token/parse'

const seconds = (ms: number) => Math.floor(ms / 1000)
const INACTIVE = { active: false } as const
// RFC 7662 §4 leaves caching to the server; an answer about a token must never be reused.
const HEADERS = apiHeaders({ pragma: 'no-cache' })

/** RFC 7662 §2.2: what an active token is; anything unknown, expired or revoked is exactly {active: false}. */
async function describe(ctx: AppContext, client: Client, token: string, signIns: SignIns): Promise<Record<string, unknown>> {
  const now = ctx.clock.now()
  const iss = ctx.config.issuer
  if (token.startsWith(REFRESH_TOKEN_PREFIX)) {
    const found = await ctx.refreshTokens.identify(token)
    // A refresh token is described only to its own client, and as the token endpoint treats it:
    // a rotated one is still active within the reuse grace.
    if (!found || found.family.clientId !== client.id || !ctx.refreshTokens.isCurrent(found, now)) return INACTIVE
    const row = found.token!
    const active = { active: true, scope: row.scope, client_id: row.clientId, sub: row.userId, exp: seconds(row.expiresAt), iat: seconds(row.createdAt), token_type: 'refresh_token', iss }
    return { ...active, ...audienceClaim(found.family.resource), ...signInClaims({ authTime: found.family.authTime ?? row.authTime, amr: found.family.amr }) }
  }
  const grant = await ctx.tokens.validate(token)
  // Each client learns only about the tokens issued to it (another's: as if unknown); a resource
  // server given `--introspect` about those clients' tokens; a resource's introspectors about the
  // tokens issued for that resource.
  if (!grant || !(grant.clientId === client.id || mayReadTokensOf(client, grant.clientId) || (await introspects(ctx, client, grant.resource)))) return INACTIVE
  return {
    active: true,
    scope: grant.scopes.join(' '),
    client_id: grant.clientId,
    // A client's own token (client_credentials) is about the client (RFC 7662 §2.2: sub).
    sub: grant.user?.id ?? grant.clientId,
    exp: seconds(grant.expiresAt),
    iat: seconds(grant.issuedAt),
    token_type: 'Bearer',
    iss,
    ...audienceClaim(grant.resource),
    ...(grant.user ? await groupsClaim(ctx, grant.user.id, grant.scopes) : {}),
    ...signInClaims(grant.familyId === null ? undefined : await signIns.of(grant.familyId)),
  }
}

/** RFC 7662 §2.2 `aud`: the resource a token is for (RFC 8707); a token for Latchkey's own API has none. */
const audienceClaim = (resource: string | null): { aud?: string } => (resource === null ? {} : { aud: resource })

/**
 * `client create|update RS --introspect APP… | '*'`: a mail server (Dovecot) or a web-server
 * module validates, with credentials of its own, the access tokens users' apps got.
 */
const mayReadTokensOf = (client: Client, clientId: string): boolean => client.introspects.includes(EVERY_CLIENT) || client.introspects.includes(clientId)

/** Whether the client is one of the resource's `--introspector` clients (the resource record is cached). */
async function introspects(ctx: AppContext, client: Client, resource: string | null): Promise<boolean> {
  return resource !== null && !!(await ctx.resources.byUri(resource))?.introspectors.includes(client.id)
}

/**
 * How the user signed in, per authorization: it never changes once the family exists, so a
 * resource server introspecting the same token again costs no second lookup. Bounded: emptied
 * when full, as the token cache's small maps are.
 */
class SignIns {
  private readonly known = new Map<string, SignIn>()
  constructor(private readonly store: AppContext['store']) {}

  async of(familyId: string): Promise<SignIn | undefined> {
    const known = this.known.get(familyId)
    if (known) return known
    const found = await this.store.grants.signInOf(familyId)
    if (found) {
      if (this.known.size >= 10_000) this.known.clear()
      this.known.set(familyId, found)
    }
    return found
  }
}

/** RFC 8176 amr and auth_time, as in the id_token, when the authorization kept them. */
function signInClaims(signIn: SignIn | undefined): { auth_time?: number; amr?: string[] } {
  const claims: { auth_time?: number; amr?: string[] } = {}
  if (signIn?.authTime != null) claims.auth_time = seconds(signIn.authTime)
  if (signIn?.amr) claims.amr = signIn.amr.split(' ')
  return claims
}

/**
 * RFC 7662 token introspection, for resource servers: the token endpoint's client
 * authentication, confidential clients only (a public client or none: 401 invalid_client).
 */
export function introspectionRoutes(ctx: AppContext) {
  const signIns = new SignIns(ctx.store)
  return new Elysia({ name: 'oauth-introspect' }).post(
    '/api/oauth/introspect',
    async function introspect({ request, body }) {
      const client = await authenticateClient(ctx, request, body)
      if (client.public) throw new InvalidClient('introspection is for confidential clients (authenticate with the client secret)')
      if (body.token === '') throw new InvalidRequest('token is required')
      return json(await describe(ctx, client, body.token, signIns), 200, HEADERS)
    },
    {
      parse: [parseTokenBody, 'urlencoded', 'json'],
      body: RevocationRequest,
      response: errorResponses(400, 401),
      detail: {
        tags: ['OAuth'],
        summary: 'Token introspection (RFC 7662): {active, scope, client_id, sub, exp, iat, token_type, iss}, or exactly {active: false}',
        security: [{ clientBasic: [] }, {}],
      },
    },
  )
}
