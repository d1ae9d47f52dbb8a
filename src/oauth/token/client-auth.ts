import type { AppContext } from '../../context'
import { InvalidClient, InvalidRequest } from '../../lib/errors'
import { findClient, verifyClientSecret, type Client } from '../clients'
import { ASSERTION_TYPE, authenticateWithAssertion } from './client-assertion'

/** The body parameters client authentication reads (RFC 6749 §2.3.1). */
export interface ClientCredentials {
  client_id?: string
  client_secret?: string
  /** RFC 7523 §2.2: private_key_jwt. */
  client_assertion?: unknown
  client_assertion_type?: unknown
}

const BASIC_CHALLENGE = { 'www-authenticate': 'Basic realm="latchkey", charset="UTF-8"' }

/** RFC 6749 §2.3.1: the Basic credentials are form-urlencoded before base64. */
function parseBasic(header: string): { id: string; secret: string } | undefined {
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon < 0) return undefined
  try {
    return {
      id: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')),
      secret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')),
    }
  } catch {
    return undefined
  }
}

/**
 * client_secret_basic, client_secret_post, private_key_jwt (RFC 7523), or none (public client with PKCE). Exactly one
 * method per request (RFC 6749 §2.3). Failures are 401 invalid_client, with a Basic challenge
 * when Basic was tried (§5.2).
 */
export async function authenticateClient(ctx: AppContext, request: Request, body: ClientCredentials, { deferJti = false } = {}): Promise<Client> {
  const client = await credentialsOf(ctx, request, body, deferJti)
  // A client with keys authenticates with them only: its old secret (if any) no longer counts.
  if (client.authMethod === 'private_key_jwt' && body.client_assertion === undefined) throw new InvalidClient('this client authenticates with private_key_jwt')
  return client
}

/** `deferJti`: an assertion's jti is left to the token's transaction (client-assertion.ts takeDeferredJti). */
async function credentialsOf(ctx: AppContext, request: Request, body: ClientCredentials, deferJti: boolean): Promise<Client> {
  const authorization = request.headers.get('authorization')
  if (body.client_assertion !== undefined || body.client_assertion_type !== undefined) {
    if (body.client_assertion_type !== ASSERTION_TYPE || typeof body.client_assertion !== 'string') throw new InvalidRequest(`client_assertion_type must be ${ASSERTION_TYPE}, with one client_assertion`)
    if (body.client_secret !== undefined || (authorization && /^basic /i.test(authorization))) throw new InvalidRequest('use one client authentication method, not two')
    return authenticateWithAssertion(ctx, request, body.client_assertion, body.client_id, deferJti)
  }
  const basic = authorization && /^basic /i.test(authorization) ? parseBasic(authorization) : undefined
  // A public client whose library sends `Basic base64(client_id:)` (Go's x/oauth2 does) is
  // identifying itself, not authenticating: treated as "none", as Ory fosite does.
  if (basic?.secret === '' && body.client_secret === undefined) {
    const client = await findClient(ctx.store, basic.id)
    if (client?.public) {
      if (body.client_id !== undefined && body.client_id !== client.id) throw new InvalidRequest('client_id does not match the Basic credentials')
      return client
    }
  }
  if (authorization && /^basic /i.test(authorization)) {
    if (body.client_secret !== undefined) throw new InvalidRequest('use one client authentication method, not two')
    const client = basic && (await verifyClientSecret(ctx.store, basic.id, basic.secret))
    if (!client) throw new InvalidClient('client authentication failed', BASIC_CHALLENGE)
    if (body.client_id !== undefined && body.client_id !== client.id)
      throw new InvalidRequest('client_id does not match the authenticated client')
    return client
  }
  if (body.client_id === undefined) throw new InvalidClient('client authentication is required')
  if (body.client_secret !== undefined) {
    const client = await verifyClientSecret(ctx.store, body.client_id, body.client_secret)
    if (!client) throw new InvalidClient('client authentication failed')
    return client
  }
  return publicClient(ctx, body.client_id)
}

/** Method "none": only a public client may use it. */
async function publicClient(ctx: AppContext, clientId: string): Promise<Client> {
  const client = await findClient(ctx.store, clientId)
  if (!client || !client.public) throw new InvalidClient('client authentication failed')
  return client
}
