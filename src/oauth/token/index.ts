import { Elysia } from 'elysia'
import type { AppContext } from '../../context'
import { ApiError, InvalidRequest, UnauthorizedClient, UnsupportedGrantType } from '../../lib/errors'
import { DEVICE_CODE, type Client } from '../clients'
import { apiHeaders, errorResponse, json } from '../../lib/http'
import { authenticateClient } from './client-auth'
import { takeDeferredJti, useJti } from './client-assertion'
import * as authorizationCode from './grants/authorization_code'
import * as clientCredentials from './grants/client_credentials'
import * as deviceCode from './grants/device_code'
import * as refreshToken from './grants/refresh_token'
import { TokenRequest, TokenResponse } from './model'
import { parseTokenBody } from './parse'
import { errorResponses } from '../../docs/openapi'

// RFC 6749 §5.1: no-store, and Pragma: no-cache for old caches.
const TOKEN_HEADERS = apiHeaders({ pragma: 'no-cache' })

const grants = { [authorizationCode.grantType]: authorizationCode, [refreshToken.grantType]: refreshToken, [clientCredentials.grantType]: clientCredentials, [deviceCode.grantType]: deviceCode } as const

function grantFor(grantType: string) {
  return Object.hasOwn(grants, grantType) ? grants[grantType as keyof typeof grants] : undefined
}

/**
 * A known grant's required parameters are checked first: missing ones are invalid_request (SPEC
 * order). Written plainly on purpose: as `for (const name of grant?.parameters ?? [])` it crashed
 * the server (a segfault in JavaScriptCore's FTL-compiled code, Bun 1.4.5) once it had been
 * optimized on one grant's requests and then met a grant it does not know — thousands of device
 * polls, then any request with an unknown grant_type. Found by the bench; pinned by
 * tests/e2e/token-endpoint-jit.test.ts, which drives the compiled binary that way.
 */
function checkParameters(body: TokenRequest): void {
  const grant = grantFor(body.grant_type)
  if (grant === undefined) return
  const names: readonly string[] = grant.parameters
  for (let i = 0; i < names.length; i++) {
    const value = body[names[i] as keyof TokenRequest]
    if (typeof value !== 'string' || value === '') throw new InvalidRequest(`${names[i]} is required`)
  }
}

/**
 * RFC 6749 §5.2 unauthorized_client: a grant the app was not given (`--grant`). A refresh token
 * comes from a grant with a user (a code or a device code).
 */
function checkAllowed(client: Client, grantType: string): void {
  const from = grantType === refreshToken.grantType ? [authorizationCode.grantType, DEVICE_CODE] : [grantType]
  if (!from.some((g) => client.grantTypes.includes(g))) throw new UnauthorizedClient(`this client may not use the grant ${grantType}`)
}

/**
 * The endpoint's answer to a parsed, validated body: the route's, and the device poll's before
 * the router (./fast-path.ts), so both are one code.
 */
export async function answerToken(ctx: AppContext, request: Request, body: TokenRequest): Promise<Response> {
  try {
    checkParameters(body)
    // client_credentials records an assertion's jti in its token's own transaction: one commit, not two.
    const client = await authenticateClient(ctx, request, body, { deferJti: body.grant_type === clientCredentials.grantType })
    const grant = grantFor(body.grant_type)
    if (!grant) throw new UnsupportedGrantType(`grant_type "${body.grant_type}" is not supported`)
    checkAllowed(client, body.grant_type)
    const response = await grant.handler(ctx, client, body, request)
    ctx.metrics.tokenIssued(body.grant_type)
    return json(response, 200, TOKEN_HEADERS)
  } catch (thrown) {
    let error = thrown
    // A jti left to the grant, which failed before using it, is used now, as authentication
    // always did: a replayed assertion is invalid_client whatever else is wrong with the request,
    // and a refused request's assertion is used up all the same.
    const jti = takeDeferredJti(request)
    if (jti) await useJti(ctx, jti).catch((replay: unknown) => (error = replay))
    // The RFC's refusals answered here, as errorAnswer answers them on an API path (never a
    // page): a device's poll is one each time (authorization_pending), and Elysia's error
    // hooks took a fifth of it (issue 38 "Speed"). Anything else goes on to errorAnswer.
    if (error instanceof ApiError) return errorResponse(error)
    throw error
  }
}

export function tokenRoutes(ctx: AppContext) {
  return new Elysia({ name: 'oauth-token' }).post(
    '/api/oauth/token',
    function token({ request, body }) {
      return answerToken(ctx, request, body)
    },
    {
      // parseTokenBody answers every request; the names after it only tell the OpenAPI document.
      parse: [parseTokenBody, 'urlencoded', 'json'],
      body: TokenRequest,
      response: { 200: TokenResponse, ...errorResponses(400, 401) },
      detail: {
        tags: ['OAuth'],
        summary: 'Exchange an authorization code or a refresh token for tokens; or a client\'s own token (client_credentials)',
        description:
          'application/json (seed) or application/x-www-form-urlencoded. grant_type=authorization_code (code, redirect_uri, code_verifier) or grant_type=refresh_token (refresh_token, optional narrower scope; the refresh token rotates), or grant_type=client_credentials (scope among the allowed scopes of the client, resource; no refresh token). Client authentication: client_id + client_secret in the body, HTTP Basic, or client_id alone for public clients.',
        security: [{}, { clientBasic: [] }],
      },
    },
  )
}
