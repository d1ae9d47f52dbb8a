import { Elysia, t } from 'elysia'
import type { AppContext } from '../context'
import { errorResponses } from '../docs/openapi'
import { InvalidRequest } from '../lib/errors'
import { json } from '../lib/http'
import type { Client } from './clients'
import { REFRESH_TOKEN_PREFIX } from './refresh-tokens'
import { authenticateClient } from './token/client-auth'
import { parseTokenBody } from './token/parse'

export const RevocationRequest = t.Object(
  {
    token: t.String({ description: 'the access or refresh token' }),
    token_type_hint: t.Optional(t.String({ description: 'access_token or refresh_token (the token says which it is)' })),
    client_id: t.Optional(t.String()),
    client_secret: t.Optional(t.String()),
  },
  { additionalProperties: true },
)

const notYours = () => new InvalidRequest('the token was not issued to this client')

/** Revokes a refresh token's whole family, or one access token; unknown tokens are nothing to do. */
async function revoke(ctx: AppContext, client: Client, token: string): Promise<void> {
  // Our tokens say what they are, so token_type_hint needs no reading (RFC 7009 §2.1: it is a hint).
  if (token.startsWith(REFRESH_TOKEN_PREFIX)) {
    const found = await ctx.refreshTokens.identify(token)
    if (!found) return
    if (found.family.clientId !== client.id) throw notYours()
    // The store tells every instance's token cache which tokens went (the change feed).
    await ctx.store.grants.revokeFamily(found.family.familyId)
    return
  }
  const found = await ctx.tokens.identify(token)
  if (!found) return
  if (found.clientId !== client.id) throw notYours()
  await ctx.tokens.revoke(found.id)
}

/**
 * RFC 7009 token revocation, with the token endpoint's client authentication. Revoked and
 * unknown tokens both answer 200 (§2.2: nothing to learn); a token issued to another client is
 * refused (§2.1). Revoking a refresh token ends every token of its grant (RFC 9700 §4.14.2).
 */
export function revocationRoutes(ctx: AppContext) {
  return new Elysia({ name: 'oauth-revoke' }).post(
    '/api/oauth/revoke',
    async function revokeToken({ request, body }) {
      const client = await authenticateClient(ctx, request, body)
      if (body.token === '') throw new InvalidRequest('token is required')
      await revoke(ctx, client, body.token)
      await ctx.audit.record('token.revoked', { clientId: client.id, request })
      // §2.2 asks only for 200; an empty JSON object keeps clients that always parse JSON happy.
      return json({})
    },
    {
      // parseTokenBody answers every request; the names after it only tell the OpenAPI document.
      parse: [parseTokenBody, 'urlencoded', 'json'],
      body: RevocationRequest,
      response: errorResponses(400, 401),
      detail: {
        tags: ['OAuth'],
        summary: 'Revoke an access token, or a refresh token and its whole grant (RFC 7009): 200 whether it was valid or not',
        security: [{}, { clientBasic: [] }],
      },
    },
  )
}
