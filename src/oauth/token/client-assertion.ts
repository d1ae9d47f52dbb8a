import { decodeJwt, decodeProtectedHeader, errors, jwtVerify } from 'jose'
import type { AppContext } from '../../context'
import { InvalidClient } from '../../lib/errors'
import { findClient, type Client } from '../clients'
import type { KeySet } from './client-keys'

export const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'
/** Asymmetric only: never none, never HS* (a public key used as an HMAC secret). */
export const ASSERTION_ALGS = ['RS256', 'PS256', 'ES256', 'EdDSA']
/** RFC 7523 §3: a short-lived assertion; one that claims to live longer is refused. */
const MAX_AHEAD_MS = 5 * 60_000

const refused = () => new InvalidClient('client authentication failed')

/**
 * `aud` names this server and nothing else: one value (a string, or a list of one), the
 * endpoint's URL or the issuer (SPEC). jwtVerify passes a list that merely *contains* one of
 * them; an assertion addressed to other audiences too could be replayed here by any of them
 * (the attack draft-ietf-oauth-rfc7523bis closes by asking for the issuer as the only value).
 */
function onlyAudience(aud: unknown, accepted: readonly string[]): boolean {
  const values = typeof aud === 'string' ? [aud] : aud
  return Array.isArray(values) && values.length === 1 && accepted.includes(values[0] as string)
}

/**
 * private_key_jwt (RFC 7523 §2.2, §3; OpenID Connect Core §9): `iss` = `sub` = the client id,
 * `aud` this endpoint's URL or the issuer, `exp` at most 5 minutes ahead, a `jti` used once on
 * every instance, signed (RS256, PS256, ES256 or EdDSA) by the key of the client's JWKS its
 * `kid` names. Every failure is the same 401 invalid_client; the reason goes to the log only.
 */
export async function authenticateWithAssertion(ctx: AppContext, request: Request, assertion: string, claimedId: string | undefined, deferJti = false): Promise<Client> {
  let iss: unknown
  let kid: unknown
  try {
    iss = decodeJwt(assertion).iss
    kid = decodeProtectedHeader(assertion).kid
  } catch {
    throw refused()
  }
  if (typeof iss !== 'string' || typeof kid !== 'string' || (claimedId !== undefined && claimedId !== iss)) throw refused()
  const client = await findClient(ctx.store, iss)
  if (!client || client.authMethod !== 'private_key_jwt') throw refused()
  const endpoint = ctx.config.issuer + new URL(request.url).pathname
  const now = ctx.clock.now()
  const verify = (keys: KeySet) =>
    jwtVerify(assertion, keys, { algorithms: ASSERTION_ALGS, issuer: client.id, subject: client.id, audience: [endpoint, ctx.config.issuer], currentDate: new Date(now), requiredClaims: ['exp', 'jti'] })
  let payload: Awaited<ReturnType<typeof verify>>['payload']
  try {
    const keys = await ctx.clientKeys.keysOf(client)
    if (!keys) throw refused()
    try {
      payload = (await verify(keys)).payload
    } catch (error) {
      // A kid the cached keys lack: the client may have rotated; fetch its jwks_uri again (once a minute at most).
      const again = error instanceof errors.JWKSNoMatchingKey ? await ctx.clientKeys.refetch(client) : undefined
      if (!again) throw error
      payload = (await verify(again)).payload
    }
  } catch (error) {
    ctx.log.info('client assertion refused', { client_id: client.id, reason: (error as Error).message })
    throw refused()
  }
  const expiresAt = payload.exp! * 1000
  if (!onlyAudience(payload.aud, [endpoint, ctx.config.issuer])) {
    ctx.log.info('client assertion refused', { client_id: client.id, reason: 'aud names another audience besides this server' })
    throw refused()
  }
  if (expiresAt - now > MAX_AHEAD_MS || typeof payload.jti !== 'string' || payload.jti.length > 256) throw refused()
  const used = { clientId: client.id, jti: payload.jti, expiresAt }
  if (deferJti) deferred.set(request, used)
  else await useJti(ctx, used)
  return client
}

/** An assertion's `jti`, to be recorded until the assertion expires. */
export interface AssertionJti {
  clientId: string
  jti: string
  expiresAt: number
}

/**
 * The jti a request's authentication left to its token's own transaction (issue 38 "Speed": a
 * client_credentials token with private_key_jwt waited on two commits): taken once, by the grant
 * (takeDeferredJti), or else used on its own before the request is answered (useJti).
 */
const deferred = new WeakMap<Request, AssertionJti>()

export function takeDeferredJti(request: Request): AssertionJti | undefined {
  const jti = deferred.get(request)
  deferred.delete(request)
  return jti
}

/** Records the jti, once on every instance: used already, the assertion is a replay (invalid_client). */
export async function useJti(ctx: AppContext, used: AssertionJti): Promise<void> {
  if (!(await ctx.store.clients.useAssertionJti(used.clientId, used.jti, used.expiresAt))) throw replayed(ctx, used.clientId)
}

export function replayed(ctx: AppContext, clientId: string) {
  ctx.log.warn('client assertion replayed', { client_id: clientId })
  return refused()
}
