import { Elysia, t } from 'elysia'
import type { AppContext } from '../../context'
import { UniqueViolation } from '../../db/store'
import { errorResponses } from '../../docs/openapi'
import { randomToken, sha256 } from '../../lib/crypto'
import { ApiError, InvalidRequest, InvalidScope, InvalidTarget, UnauthorizedClient } from '../../lib/errors'
import { apiHeaders, json } from '../../lib/http'
import { clientAddressOf } from '../../web/client-address'
import { DEVICE_CODE } from '../clients'
import { parseRequestScope } from '../scopes'
import { authenticateClient } from '../token/client-auth'
import { parseTokenBody } from '../token/parse'
import { formatUserCode, newUserCode, userCodeHash } from './codes'

/** RFC 8628 §3.2: ten minutes to finish on another device, polling every five seconds. */
export const DEVICE_CODE_TTL = 600
export const POLL_INTERVAL = 5
export const DEVICE_CODE_PREFIX = 'lk_dc_'
const HEADERS = apiHeaders({ pragma: 'no-cache' })
/**
 * Requests a client may have pending (no decision yet): the table stays bounded whatever a
 * client asks. RFC 8628 names no error for it; 429 with slow_down — RFC 8628's own "you are
 * asking too often", which device clients already handle — and Retry-After a minute, by when
 * some pending ones have been decided or expired.
 */
export const MAX_PENDING_DEVICE_CODES = 100

/**
 * RFC 8628 §3.1–3.2: a device (public or confidential client allowed the grant) asks for a
 * device code and a user code; the user types the code at ISSUER/device, or follows
 * verification_uri_complete. The scope and resource are checked as /oauth/authorize checks them.
 */
export function deviceAuthorizationRoutes(ctx: AppContext) {
  return new Elysia({ name: 'oauth-device-authorization' }).post(
    '/api/oauth/device_authorization',
    async function deviceAuthorization({ request, body }) {
      const client = await authenticateClient(ctx, request, body)
      if (!client.grantTypes.includes(DEVICE_CODE)) throw new UnauthorizedClient(`this client may not use the grant ${DEVICE_CODE}`)
      if (Array.isArray(body.resource)) throw new InvalidTarget('one resource per request')
      if (body.scope !== undefined && typeof body.scope !== 'string') throw new InvalidRequest('scope is repeated')
      const audience = typeof body.resource === 'string' ? await ctx.resources.audience(body.resource) : { resource: null }
      if (!audience) throw new InvalidTarget('resource is not a resource registered with this server')
      const scopes = parseRequestScope(body.scope as string | undefined, audience.resource?.scopes)
      if (!scopes) throw new InvalidScope('scope is missing, empty or names an unknown scope')
      const deviceCode = randomToken(DEVICE_CODE_PREFIX)
      const now = ctx.clock.now()
      const address = clientAddressOf(request, ctx.config.trustedProxies)
      for (;;) {
        const userCode = newUserCode()
        let stored: boolean
        try {
          stored = await ctx.store.devices.insertDeviceCode({
            deviceCodeHash: sha256(deviceCode),
            userCodeHash: userCodeHash(userCode),
            clientId: client.id,
            scope: scopes.join(' '),
            resource: audience.resource?.uri ?? null,
            createdAt: now,
            expiresAt: now + DEVICE_CODE_TTL * 1000,
            interval: POLL_INTERVAL,
            address,
          }, MAX_PENDING_DEVICE_CODES)
        } catch (error) {
          // 20^8 codes: a clash with a live one is rare; draw another.
          if (error instanceof UniqueViolation) continue
          throw error
        }
        if (!stored) throw new ApiError('slow_down', 429, `this client has ${MAX_PENDING_DEVICE_CODES} device requests pending; try again later`, { 'retry-after': '60' })
        const shown = formatUserCode(userCode)
        const verificationUri = `${ctx.config.issuer}/device`
        return json(
          { device_code: deviceCode, user_code: shown, verification_uri: verificationUri, verification_uri_complete: `${verificationUri}?user_code=${shown}`, expires_in: DEVICE_CODE_TTL, interval: POLL_INTERVAL },
          200,
          HEADERS,
        )
      }
    },
    {
      parse: [parseTokenBody, 'urlencoded', 'json'],
      body: t.Object({ client_id: t.Optional(t.String()), client_secret: t.Optional(t.String()), scope: t.Optional(t.Unknown()), resource: t.Optional(t.Unknown()) }, { additionalProperties: true }),
      response: errorResponses(400, 401, 429),
      detail: {
        tags: ['OAuth'],
        summary: 'Device authorization (RFC 8628): {device_code, user_code, verification_uri, verification_uri_complete, expires_in: 600, interval: 5}',
        security: [{}, { clientBasic: [] }],
      },
    },
  )
}
