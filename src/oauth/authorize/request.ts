import { constantTimeEqual, hmacSha256, randomToken, sha256 } from '../../lib/crypto'
import type { AppContext } from '../../context'
import { PageError } from '../../lib/errors'
import { formFields } from '../../web/forms'
import { clientForAuthorization } from '../client-metadata'
import { redirectUriMatches, type Client } from '../clients'
import type { ResourceRecord } from '../../db/store'
import { parseRequestScope } from '../scopes'

export type Prompt = 'none' | 'login' | 'consent' | 'select_account'

/** A validated authorization request (RFC 6749 §4.1.1, RFC 7636 §4.3, OpenID Connect Core §3.1.2.1). */
export interface AuthorizationRequest {
  client: Client
  redirectUri: string
  /** Latchkey's scopes first, then the resource's (see parseRequestScope). */
  scopes: string[]
  /** The resource the tokens will be for (RFC 8707); null for Latchkey's own API. */
  resource: ResourceRecord | null
  state?: string
  codeChallenge?: string
  nonce?: string
  prompt: Set<Prompt>
  /** Seconds since the user's sign-in beyond which they must sign in again. */
  maxAge?: number
  /** Set by Latchkey when it sent the user to sign in again: a session from before it does not count. */
  loginAfter?: number
  /** A pushed request's request_uri (RFC 9126): the consent form carries it, and a decision uses it up. */
  requestUri?: string
  /** ui_locales (OpenID Connect Core §3.1.2.1): the language of the flow's pages; a pushed request's comes from its push. */
  uiLocales?: string
}

/** An error sent back to the verified redirect_uri (RFC 6749 §4.1.2.1). */
export class AuthorizationRedirect extends Error {
  constructor(
    public readonly location: string,
    /** The error it carries, for the PAR endpoint, which answers it as JSON instead (RFC 9126 §2.3). */
    public readonly error = 'invalid_request',
    public readonly description = '',
  ) {
    super('authorization redirect')
  }
}

export type Params = Record<string, unknown>

export const PARAMS = [
  'client_id',
  'redirect_uri',
  'scope',
  'state',
  'response_type',
  'code_challenge',
  'code_challenge_method',
  'nonce',
  'prompt',
  'max_age',
  'login_after',
  'resource',
] as const

const PROMPTS = new Set<string>(['none', 'login', 'consent', 'select_account'])
const NONCE_MAX = 512

/**
 * Query parameters as a record; a repeated parameter becomes an array (and is refused). As page
 * forms are read (src/web/forms.ts formFields): in linear time (`?a&a&…` once copied the array so
 * far on each repeat) and `__proto__` a parameter like any other.
 */
export function paramsFromSearch(search: URLSearchParams): Params {
  return formFields(search)
}

/** The callback URL with the response parameters, `state` and `iss` (RFC 9207). */
export function callbackUrl(ctx: AppContext, redirectUri: string, params: Record<string, string>, state?: string): string {
  const url = new URL(redirectUri)
  for (const [k, v] of Object.entries(params)) url.searchParams.append(k, v)
  if (state !== undefined) url.searchParams.append('state', state)
  url.searchParams.append('iss', ctx.config.issuer)
  return url.href
}

const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/

export const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:'
const REQUEST_URI = /^urn:ietf:params:oauth:request_uri:([A-Za-z0-9_-]{43})$/
/** The random part of a request_uri; undefined for one not well formed. */
function requestUriSecret(raw: unknown): string | undefined {
  return (typeof raw === 'string' ? REQUEST_URI.exec(raw) : null)?.[1]
}

/** The stored key of a pushed request_uri: the hash of its random part; undefined for one not well formed. */
export function requestUriHash(raw: unknown): string | undefined {
  const secret = requestUriSecret(raw)
  return secret && sha256(secret)
}

/** The stored key of a redeemed request (its own hash domain: a redeemed handle is never a fresh request_uri). */
const redeemedHash = (secret: string) => sha256(`redeemed:${secret}`)

/**
 * How long the flow a request_uri started may take once redeemed: a sign-in (with a second
 * factor) and a decision, as long as a re-authentication marker lives.
 */
const REDEEMED_TTL_MS = 15 * 60_000

/**
 * RFC 9126 §4: a request_uri stands for the parameters its client pushed; besides it only
 * client_id (which must be that client's) and Latchkey's own MACed login_after are read.
 * Its expiry (60 s) is checked once, when the browser first brings it: then it is redeemed —
 * used up, on any instance, in one statement — for a handle of the same form that only this
 * browser holds, and the sign-in and decision go on with that, on their own lifetime. Another
 * client's, an expired or a used request_uri is a page, never a redirect.
 */
async function pushedParams(ctx: AppContext, params: Params): Promise<Params | undefined> {
  if (params.request_uri === undefined) return undefined
  const secret = requestUriSecret(params.request_uri)
  const clientId = typeof params.client_id === 'string' ? params.client_id : undefined
  if (!secret || !clientId) throw new PageError(400, 'error.pushedGone')
  const now = ctx.clock.now()
  const flow = await ctx.store.pushed.findPushedRequest(redeemedHash(secret), now)
  if (flow) {
    if (flow.clientId !== clientId) throw new PageError(400, 'error.pushedGone')
    return { ...flow.params, client_id: flow.clientId, login_after: params.login_after, request_uri: params.request_uri }
  }
  const next = randomToken()
  const redeemed = await ctx.store.pushed.redeemPushedRequest(sha256(secret), clientId, now, redeemedHash(next), now + REDEEMED_TTL_MS)
  if (!redeemed) throw new PageError(400, 'error.pushedGone')
  return { ...redeemed.params, client_id: redeemed.clientId, login_after: params.login_after, request_uri: REQUEST_URI_PREFIX + next }
}

/** Uses a redeemed request up when the user decides (RFC 9126 §4: once); a second decision is a page. */
export async function usePushedRequest(ctx: AppContext, authz: AuthorizationRequest): Promise<void> {
  if (authz.requestUri === undefined) return
  if (!(await ctx.store.pushed.usePushedRequest(redeemedHash(requestUriSecret(authz.requestUri)!), ctx.clock.now()))) throw new PageError(400, 'error.pushedGone')
}

/** An authorization that ends in an error redirect ends its redeemed request too (it could be used no more anyway). */
export async function dropPushedRequest(ctx: AppContext, authz: Pick<AuthorizationRequest, 'requestUri'>): Promise<void> {
  if (authz.requestUri !== undefined) await ctx.store.pushed.usePushedRequest(redeemedHash(requestUriSecret(authz.requestUri)!), ctx.clock.now())
}

/**
 * Checks in the order RFC 6749 §4.1.2.1 demands: until client and redirect_uri are verified,
 * errors are pages (never a redirect); after that they go back to the client.
 */
export async function validateAuthorizationRequest(ctx: AppContext, given: Params, opts: { pushing?: boolean } = {}): Promise<AuthorizationRequest> {
  const pushed = opts.pushing ? undefined : await pushedParams(ctx, given)
  if (!pushed) return checkRequest(ctx, given, undefined, opts)
  try {
    return await checkRequest(ctx, pushed, pushed, opts)
  } catch (error) {
    // A pushed request that no longer passes (its app or resource changed since): redeemed for nothing.
    if (error instanceof AuthorizationRedirect) await dropPushedRequest(ctx, { requestUri: pushed.request_uri as string })
    throw error
  }
}

async function checkRequest(ctx: AppContext, params: Params, pushed: Params | undefined, opts: { pushing?: boolean }): Promise<AuthorizationRequest> {
  const single = (name: string) => {
    const v = params[name]
    return typeof v === 'string' ? v : undefined
  }
  const clientId = single('client_id')
  const client = clientId ? await clientForAuthorization(ctx, clientId) : undefined
  if (!client) throw new PageError(400, 'error.unknownClient')
  // RFC 9126 §5: --require-par apps send their requests through the PAR endpoint only.
  if (client.requirePar && !pushed && !opts.pushing) throw new PageError(400, 'error.parRequired')
  const redirectUri = single('redirect_uri')
  if (!redirectUri || !redirectUriMatches(client, redirectUri))
    throw new PageError(400, 'error.invalidRedirect')

  const state = single('state')
  const fail = (error: string, description: string) =>
    new AuthorizationRedirect(callbackUrl(ctx, redirectUri, { error, error_description: description }, state), error, description)

  // RFC 8707 §2: several resources may be asked for at once; Latchkey issues a token for one.
  if (Array.isArray(params.resource)) throw fail('invalid_target', 'one resource per authorization request')
  for (const name of PARAMS) {
    if (Array.isArray(params[name])) throw fail('invalid_request', `parameter "${name}" is repeated`)
  }
  const responseType = single('response_type')
  if (responseType !== undefined && responseType !== 'code')
    throw fail('unsupported_response_type', 'only response_type=code is supported')
  const resourceParam = single('resource')
  const audience = resourceParam === undefined ? { resource: null } : await ctx.resources.audience(resourceParam)
  if (!audience) throw fail('invalid_target', 'resource is not a resource registered with this server')
  const scopes = parseRequestScope(single('scope'), audience.resource?.scopes)
  if (!scopes)
    throw fail('invalid_scope', audience.resource ? `scope is missing, empty or names a scope ${audience.resource.name} does not have` : 'scope is missing, empty or names an unknown scope')

  const codeChallenge = single('code_challenge')
  const method = single('code_challenge_method')
  if (method !== undefined && method !== 'S256') throw fail('invalid_request', 'code_challenge_method must be S256')
  if (codeChallenge !== undefined && method === undefined)
    throw fail('invalid_request', 'code_challenge_method is required (only S256 is supported)')
  if (method !== undefined && codeChallenge === undefined) throw fail('invalid_request', 'code_challenge is missing')
  if (codeChallenge !== undefined && !S256_CHALLENGE.test(codeChallenge))
    throw fail('invalid_request', 'code_challenge must be 43 base64url characters (S256)')
  if (client.public && codeChallenge === undefined)
    throw fail('invalid_request', 'public clients must use PKCE (code_challenge with S256)')

  // OpenID Connect Core §3.1.2.1
  const nonce = single('nonce')
  if (nonce !== undefined && nonce.length > NONCE_MAX) throw fail('invalid_request', `nonce must be at most ${NONCE_MAX} characters`)
  const prompt = new Set((single('prompt') ?? '').split(' ').filter(Boolean))
  for (const p of prompt) if (!PROMPTS.has(p)) throw fail('invalid_request', `prompt "${p}" is not supported`)
  if (prompt.has('none') && prompt.size > 1) throw fail('invalid_request', 'prompt=none cannot be combined with other values')
  const maxAgeRaw = single('max_age')
  if (maxAgeRaw !== undefined && !/^\d{1,10}$/.test(maxAgeRaw)) throw fail('invalid_request', 'max_age must be a number of seconds')
  const loginAfter = readLoginAfter(ctx, single('login_after'), client.id)

  return {
    client,
    redirectUri,
    scopes,
    resource: audience.resource,
    state,
    codeChallenge,
    nonce,
    prompt: prompt as Set<Prompt>,
    maxAge: maxAgeRaw === undefined ? undefined : Number(maxAgeRaw),
    loginAfter,
    requestUri: pushed ? (params.request_uri as string) : undefined,
    uiLocales: single('ui_locales'),
  }
}

/** How long a re-authentication marker stays good: the sign-in it asks for takes no longer. */
const LOGIN_AFTER_TTL_MS = 15 * 60_000
const LOGIN_AFTER = /^(\d{1,15})\.([A-Za-z0-9_-]{43})$/

const loginAfterMac = (ctx: AppContext, at: number, clientId: string) => hmacSha256(ctx.csrfKey, `login_after:${at}:${clientId}`)

/**
 * The re-authentication marker Latchkey adds when it sends a user to sign in again (prompt=login,
 * max_age): the time, MACed with the server's key for this client. It travels in the URL but is
 * never taken from it on trust: `login_after=0`, a forged or an old one is ignored, so the
 * request's own prompt and max_age decide again.
 */
export function loginAfterParam(ctx: AppContext, at: number, clientId: string): string {
  return `${at}.${loginAfterMac(ctx, at, clientId)}`
}

function readLoginAfter(ctx: AppContext, raw: string | undefined, clientId: string): number | undefined {
  const match = raw === undefined ? null : LOGIN_AFTER.exec(raw)
  if (!match) return undefined
  const at = Number(match[1])
  const age = ctx.clock.now() - at
  if (age < 0 || age > LOGIN_AFTER_TTL_MS || !constantTimeEqual(loginAfterMac(ctx, at, clientId), match[2]!)) return undefined
  return at
}

