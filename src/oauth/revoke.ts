import { Elysia, t } from 'elysia'
import type { AppContext } from '../context'
import { errorResponses } from '../docs/openapi'
import { InvalidRequest } from '../lib/errors'
import { json } from '../lib/http'
import { authenticateClient } from './token/client-auth'
import { parseTokenBody } from './token/parse'

const RevocationRequest = t.Object(
  {
    token: t.String({ description: 'the access token to revoke' }),
    token_type_hint: t.Optional(t.String()),
    client_id: t.Optional(t.String()),
    client_secret: t.Optional(t.String()),
  },
  { additionalProperties: true },
)

/**
 * RFC 7009 token revocation, with the token endpoint's client authentication. Revoked and
 * unknown tokens both answer 200 (§2.2: nothing to learn); a token issued to another client is
 * refused (§2.1). Only access tokens exist, so token_type_hint needs no reading (§2.1).
 */
export function revocationRoutes(ctx: AppContext) {
  return new Elysia({ name: 'oauth-revoke' }).post(
    '/api/oauth/revoke',
    async function revokeToken({ request, body }) {
      const client = await authenticateClient(ctx, request, body)
      if (body.token === '') throw new InvalidRequest('token is required')
      const found = await ctx.tokens.identify(body.token)
      if (found && found.clientId !== client.id) throw new InvalidRequest('the token was not issued to this client')
      if (found) await ctx.tokens.revoke(found.id)
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
        summary: 'Revoke an access token (RFC 7009): 200 whether it was valid or not',
        security: [{}, { clientBasic: [] }],
      },
    },
  )
}
