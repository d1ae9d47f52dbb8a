import { Elysia, t } from 'elysia'
import { decideWindowAttempt } from '../accounts/throttle'
import type { AppContext } from '../context'
import type { ClientRecord, IdTokenAlg } from '../db/store'
import { errorResponses } from '../docs/openapi'
import { constantTimeEqual, randomToken, sha256 } from '../lib/crypto'
import { InvalidClientMetadata, InvalidRedirectUri, InvalidToken, TooManyRequests } from '../lib/errors'
import { apiHeaders, json, readJsonObject } from '../lib/http'
import { hasInvisible } from '../lib/text'
import { clientAddressOf, rateLimitKey } from '../web/client-address'
import { ClientInputError, ID_TOKEN_ALGS, checkBackchannelLogoutUri, checkRedirectUri, insecureRedirectUris, isClientId } from './clients'

/** `DYNAMIC_REGISTRATION=open`: registrations per client address (an IPv6 /64) per hour. */
const REGISTRATIONS_PER_HOUR = 20
const HOUR_MS = 3600_000
const MAX_REDIRECT_URIS = 20
const MAX_FIELD_CHARS = 2000
const REGISTRATION_ACCESS_PREFIX = 'lk_ra_'

const NO_STORE = apiHeaders({ pragma: 'no-cache' })
const AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post'] as const
type AuthMethod = (typeof AUTH_METHODS)[number]

interface Registration {
  name: string
  redirectUris: string[]
  authMethod: AuthMethod
  grantTypes: string[]
  idTokenAlg: IdTokenAlg
}

function strings(value: unknown, field: string, allowed?: readonly string[]): string[] | undefined {
  if (value === undefined) return undefined
  if (!Array.isArray(value) || value.length > MAX_REDIRECT_URIS || !value.every((v) => typeof v === 'string' && v.length <= MAX_FIELD_CHARS))
    throw new InvalidClientMetadata(`${field} must be an array of at most ${MAX_REDIRECT_URIS} strings`)
  const bad = allowed && value.find((v) => !allowed.includes(v))
  if (bad !== undefined && bad !== false) throw new InvalidClientMetadata(`${field} may only contain ${allowed!.join(', ')}; got "${bad}"`)
  return value as string[]
}

/**
 * RFC 7591 §2 client metadata, as much as Latchkey uses: redirect URIs (https, or http on a
 * loopback address), the token endpoint auth method, grant and response types, a name. Other
 * members are accepted and ignored (§2), but every string is bounded.
 */
export function readRegistration(body: Record<string, unknown>): Registration {
  for (const [key, value] of Object.entries(body))
    if (typeof value === 'string' && (value.length > MAX_FIELD_CHARS || hasInvisible(value))) throw new InvalidClientMetadata(`${key} must be at most ${MAX_FIELD_CHARS} characters, without control characters`)
  const uris = strings(body.redirect_uris, 'redirect_uris')
  if (!uris || uris.length === 0) throw new InvalidRedirectUri('redirect_uris must list at least one redirect URI')
  let redirectUris: string[]
  try {
    redirectUris = [...new Set(uris.map(checkRedirectUri))]
  } catch (error) {
    throw new InvalidRedirectUri((error as ClientInputError).message)
  }
  const other = redirectUris.find((u) => !/^https?:/.test(u)) ?? insecureRedirectUris(redirectUris)[0]
  if (other !== undefined) throw new InvalidRedirectUri(`redirect URI "${other}" must be https:// or http:// on a loopback address`)
  const method = body.token_endpoint_auth_method ?? 'client_secret_basic'
  if (!AUTH_METHODS.includes(method as AuthMethod)) throw new InvalidClientMetadata(`token_endpoint_auth_method must be one of ${AUTH_METHODS.join(', ')}`)
  const grantTypes = strings(body.grant_types, 'grant_types', ['authorization_code', 'refresh_token']) ?? ['authorization_code']
  strings(body.response_types, 'response_types', ['code'])
  if (body.client_name !== undefined && typeof body.client_name !== 'string') throw new InvalidClientMetadata('client_name must be a string')
  const rawName = ((body.client_name as string | undefined) ?? '').trim().normalize('NFC')
  if (rawName.length > 200) throw new InvalidClientMetadata('client_name must be at most 200 characters')
  // OpenID Connect Dynamic Client Registration §2: RS256 unless the client asks for another we sign with.
  const alg = body.id_token_signed_response_alg ?? 'RS256'
  if (!ID_TOKEN_ALGS.includes(alg as IdTokenAlg)) throw new InvalidClientMetadata(`id_token_signed_response_alg must be one of ${ID_TOKEN_ALGS.join(', ')}`)
  return { name: rawName || new URL(redirectUris[0]!).host || 'Unnamed app', redirectUris, authMethod: method as AuthMethod, grantTypes, idTokenAlg: alg as IdTokenAlg }
}

/**
 * OpenID Connect Back-Channel Logout §2.2's registration metadata: the URI obeys the metadata
 * fetcher's address rules (https, public addresses; CLIENT_ID_METADATA_ALLOW_HOSTS excepted).
 */
export function readBackchannel(body: Record<string, unknown>, allowHosts: readonly string[]): Pick<ClientRecord, 'backchannelLogoutUri' | 'backchannelLogoutSessionRequired'> {
  const uri = body.backchannel_logout_uri
  const required = body.backchannel_logout_session_required ?? false
  if (uri !== undefined && typeof uri !== 'string') throw new InvalidClientMetadata('backchannel_logout_uri must be a string')
  if (typeof required !== 'boolean') throw new InvalidClientMetadata('backchannel_logout_session_required must be a boolean')
  if (uri === undefined) return { backchannelLogoutUri: null, backchannelLogoutSessionRequired: false }
  try {
    return { backchannelLogoutUri: checkBackchannelLogoutUri(uri, 'dynamic', allowHosts), backchannelLogoutSessionRequired: required }
  } catch (error) {
    if (error instanceof ClientInputError) throw new InvalidClientMetadata(error.message)
    throw error
  }
}

/** The client's registration as RFC 7591 §3.2.1 and RFC 7592 §3 answer it. */
function describe(ctx: AppContext, client: ClientRecord, method: AuthMethod, grantTypes: string[]) {
  return {
    client_id: client.id,
    client_name: client.name,
    redirect_uris: client.redirectUris,
    token_endpoint_auth_method: method,
    grant_types: grantTypes,
    response_types: ['code'],
    id_token_signed_response_alg: client.idTokenAlg,
    ...(client.backchannelLogoutUri ? { backchannel_logout_uri: client.backchannelLogoutUri, backchannel_logout_session_required: client.backchannelLogoutSessionRequired ?? false } : {}),
    registration_client_uri: `${ctx.config.issuer}/api/oauth/register/${client.id}`,
  }
}

/** RFC 6750 challenges for the registration endpoints' bearer tokens. */
const invalidToken = (description: string) => new InvalidToken(description, { 'www-authenticate': 'Bearer realm="latchkey", error="invalid_token"' })

function bearerOf(request: Request): string | undefined {
  const header = request.headers.get('authorization')
  return header && /^bearer /i.test(header) ? header.slice(7).trim() : undefined
}

/**
 * Dynamic client registration (RFC 7591) and its management (RFC 7592, read and delete), when
 * DYNAMIC_REGISTRATION is `open` (throttled per client address) or `token` (an initial access
 * token). Such apps are labelled "not verified by your administrator" on the consent page and
 * are deleted after 30 days unused. Off: the routes do not exist (404).
 */
export function registrationRoutes(ctx: AppContext) {
  const app = new Elysia({ name: 'oauth-registration' })
  const mode = ctx.config.dynamicRegistration
  if (mode === 'off') return app

  async function admit(request: Request): Promise<void> {
    const now = ctx.clock.now()
    if (mode === 'token') {
      const token = bearerOf(request)
      if (!token) throw new InvalidToken('an initial access token is required (Authorization: Bearer)', { 'www-authenticate': 'Bearer realm="latchkey"' })
      if (!(await ctx.store.clients.registrationTokenValid(sha256(token), now))) throw invalidToken('the initial access token is invalid or expired')
      return
    }
    const key = `register:${rateLimitKey(clientAddressOf(request, ctx.config.trustedProxies))}`
    const wait = await ctx.store.throttle.updateThrottle(key, (row) => decideWindowAttempt(row, now, REGISTRATIONS_PER_HOUR, HOUR_MS))
    if (wait > 0) throw new TooManyRequests('too many registrations from this address; try again later', { 'retry-after': String(wait) })
  }

  /** The client a registration access token manages (RFC 7592 §3: anything else is 401). */
  async function managed(request: Request, clientId: string): Promise<ClientRecord> {
    const token = bearerOf(request)
    const row = isClientId(clientId) ? await ctx.store.clients.findClient(clientId) : undefined
    if (!token || !row || row.kind !== 'dynamic' || row.registrationTokenHash === null || !constantTimeEqual(sha256(token), row.registrationTokenHash))
      throw invalidToken('the registration access token is invalid')
    return row
  }

  const methodOf = (row: ClientRecord): AuthMethod => (row.secretHash === null ? 'none' : 'client_secret_basic')

  return app
    .post(
      '/api/oauth/register',
      async function register({ request, body }) {
        await admit(request)
        const registration = readRegistration(body as Record<string, unknown>)
        const backchannel = readBackchannel(body as Record<string, unknown>, ctx.config.clientIdMetadataAllowHosts)
        const now = ctx.clock.now()
        const secret = registration.authMethod === 'none' ? null : randomToken('lk_cs_')
        const accessToken = randomToken(REGISTRATION_ACCESS_PREFIX)
        const record: ClientRecord = {
          id: Buffer.from(crypto.getRandomValues(new Uint8Array(12))).toString('hex'),
          name: registration.name,
          secretHash: secret && sha256(secret),
          redirectUris: registration.redirectUris,
          postLogoutRedirectUris: [],
          skipConsent: false,
          requireMfa: false,
          kind: 'dynamic',
          metadataExpiresAt: null,
          registrationTokenHash: sha256(accessToken),
          idTokenAlg: registration.idTokenAlg,
          introspects: [],
          ...backchannel,
          grantTypes: ['authorization_code'],
          allowedScopes: [],
          requirePar: false,
          authMethod: null,
          jwks: null,
          jwksUri: null,
        }
        await ctx.store.clients.insertClient(record, now)
        ctx.log.info('client registered dynamically', { client: record.id })
        const answer = {
          ...describe(ctx, record, registration.authMethod, registration.grantTypes),
          client_id_issued_at: Math.floor(now / 1000),
          // RFC 7591 §3.2.1: a public client's answer has no client_secret member at all (SPEC).
          ...(secret === null ? {} : { client_secret: secret, client_secret_expires_at: 0 }),
          registration_access_token: accessToken,
        }
        return json(answer, 201, NO_STORE)
      },
      {
        parse: [({ request }) => readJsonObject(request), 'json'],
        response: errorResponses(400, 401, 429),
        detail: {
          tags: ['OAuth'],
          summary: 'Dynamic client registration (RFC 7591), when DYNAMIC_REGISTRATION is open or token',
          description: 'A JSON object of client metadata: redirect_uris (https, or http on loopback), token_endpoint_auth_method (none, client_secret_basic, client_secret_post), grant_types, response_types, client_name.',
          security: [{}, { bearer: [] }],
        },
      },
    )
    .get(
      '/api/oauth/register/:client_id',
      async function readRegistration({ request, params }) {
        const row = await managed(request, params.client_id)
        return json(describe(ctx, row, methodOf(row), ['authorization_code', 'refresh_token']), 200, NO_STORE)
      },
      { params: t.Object({ client_id: t.String() }), detail: { tags: ['OAuth'], summary: 'Read a dynamically registered client (RFC 7592)', security: [{ bearer: [] }] } },
    )
    .delete(
      '/api/oauth/register/:client_id',
      async function deregister({ request, params }) {
        const row = await managed(request, params.client_id)
        await ctx.store.clients.deleteClient(row.id)
        return new Response(null, { status: 204, headers: NO_STORE })
      },
      { params: t.Object({ client_id: t.String() }), detail: { tags: ['OAuth'], summary: 'Delete a dynamically registered client and all it was granted (RFC 7592)', security: [{ bearer: [] }] } },
    )
}
