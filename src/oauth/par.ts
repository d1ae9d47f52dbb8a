import { Elysia, t } from 'elysia'
import type { AppContext } from '../context'
import { errorResponses } from '../docs/openapi'
import { randomToken } from '../lib/crypto'
import { ApiError, InvalidRequest, PageError } from '../lib/errors'
import { apiHeaders, json } from '../lib/http'
import { AuthorizationRedirect, PARAMS, REQUEST_URI_PREFIX, requestUriHash, validateAuthorizationRequest } from './authorize/request'
import type { Client } from './clients'
import { authenticateClient } from './token/client-auth'
import { parseTokenBody } from './token/parse'

/** RFC 9126 §2.2: short-lived, as the example; a request_uri is used within seconds of its push. */
const EXPIRES_IN = 60
const HEADERS = apiHeaders({ pragma: 'no-cache' })
/**
 * Pushes a client may have waiting (not yet brought by a browser): the table stays bounded
 * whatever a client sends. RFC 9126 §2.3 names 429 for a client over the server's allowance and
 * takes its error codes from RFC 6749 §5.2 and §4.1.2.1: temporarily_unavailable is that list's
 * "try again later"; each push lives 60 s, so Retry-After is that.
 */
export const MAX_WAITING_PUSHES = 100

/**
 * The authorization parameters of a push: strings only (a repeated one stays a list, which the
 * checks refuse), client_id the authenticated client's. login_after is Latchkey's own marker,
 * never a client's; request_uri inside a push is refused (§2.1). ui_locales is kept for the pages.
 */
function authorizationParams(body: Record<string, unknown>, client: Client): Record<string, string> {
  if (body.request_uri !== undefined) throw new InvalidRequest('request_uri cannot be pushed (RFC 9126 §2.1)')
  const params: Record<string, string> = {}
  for (const name of PARAMS) {
    const value = body[name]
    if (name === 'login_after' || value === undefined) continue
    if (typeof value !== 'string') throw new InvalidRequest(`parameter "${name}" is repeated or not a string`)
    params[name] = value
  }
  // OpenID Connect Core §3.1.2.1's ui_locales: the language of the flow's pages, as on a plain request.
  // Only a hint, never an error (SPEC "Brand and language"): a list or an overlong one is not kept.
  if (typeof body.ui_locales === 'string' && body.ui_locales.length <= 256) params.ui_locales = body.ui_locales
  params.client_id = client.id
  return params
}

/** The authorization endpoint's refusals as the JSON errors of §2.3 (no redirect: the client asked directly). */
function asApiError(error: unknown): unknown {
  if (error instanceof AuthorizationRedirect) return new ApiError(error.error, 400, error.description)
  if (error instanceof PageError) return new InvalidRequest(error.detail)
  return error
}

/**
 * Pushed authorization requests (RFC 9126): the client authenticates as at the token endpoint,
 * sends every authorization parameter in the body, and gets a request_uri that
 * /oauth/authorize?client_id=…&request_uri=… uses once, within a minute.
 */
export function parRoutes(ctx: AppContext) {
  return new Elysia({ name: 'oauth-par' }).post(
    '/api/oauth/par',
    async function pushAuthorizationRequest({ request, body }) {
      const client = await authenticateClient(ctx, request, body)
      const params = authorizationParams(body, client)
      await validateAuthorizationRequest(ctx, params, { pushing: true }).catch((error) => {
        throw asApiError(error)
      })
      const secret = randomToken()
      const now = ctx.clock.now()
      const stored = await ctx.store.pushed.insertPushedRequest(requestUriHash(REQUEST_URI_PREFIX + secret)!, { clientId: client.id, params, expiresAt: now + EXPIRES_IN * 1000 }, { max: MAX_WAITING_PUSHES, now })
      if (!stored) throw new ApiError('temporarily_unavailable', 429, `this client has ${MAX_WAITING_PUSHES} pushed requests waiting; try again later`, { 'retry-after': String(EXPIRES_IN) })
      return json({ request_uri: REQUEST_URI_PREFIX + secret, expires_in: EXPIRES_IN }, 201, HEADERS)
    },
    {
      parse: [parseTokenBody, 'urlencoded', 'json'],
      body: t.Object({ client_id: t.Optional(t.String()), client_secret: t.Optional(t.String()) }, { additionalProperties: true }),
      response: errorResponses(400, 401, 429),
      detail: {
        tags: ['OAuth'],
        summary: 'Pushed authorization request (RFC 9126): the authorization parameters, checked as /oauth/authorize would → 201 {request_uri, expires_in: 60}',
        security: [{}, { clientBasic: [] }],
      },
    },
  )
}
