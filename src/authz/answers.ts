/** What the check answers the proxy (SPEC "Answers"); the names are Authelia's. */
import type { AppContext } from '../context'
import type { SiteRecord } from '../db/store'
import { signJwt } from '../oidc/jwt'
import { withBrand } from '../brand'
import type { Speech } from '../i18n'
import { errorPageSaying } from '../views/error-page'
import type { Caller } from './check'
import type { ForwardedRequest } from './forwarded'

const NO_STORE = { 'cache-control': 'no-store' }
export const JWT_TTL_SECONDS = 60

/** Header values are bytes: UTF-8 goes out as is (Latin-1 code units), control characters never. */
const headerValue = (text: string) => (/^[\x20-\x7e]*$/.test(text) ? text : Buffer.from(text.replace(/[\u0000-\u001f\u007f]/g, ''), 'utf8').toString('latin1'))

/**
 * Where a browser signs in for this request: the site's own /.latchkey/start?rd=<the original URL>,
 * which sets the browser's state cookie there and goes on to ISSUER/authz/start (site-sessions.ts).
 */
export const startUrl = (forwarded: ForwardedRequest) => `${forwarded.origin}/.latchkey/start?rd=${encodeURIComponent(forwarded.url)}`

/**
 * 200, with who it is for the app behind the proxy. Every Remote-* header is sent, empty when
 * nobody is signed in (a bypass): a proxy that copies them then overwrites whatever the client
 * sent under those names instead of letting a forged `Remote-User` through (Caddy's
 * forward_auth keeps a client's header when the answer lacks it, GHSA-7r4p-vjf4-gxv4).
 */
export function allowed(ctx: AppContext, site: SiteRecord, forwarded: ForwardedRequest, caller: Caller): Response | Promise<Response> {
  if (caller.user && site.jwt) return remoteJwt(ctx, forwarded, caller).then((jwt) => new Response(null, { status: 200, headers: remoteHeaders(caller, jwt) }))
  // A cached site session's identity answers with the same headers every time: built once (a
  // Headers instance is copied natively, ~0.3 µs, where an object of them costs 2–5 µs).
  const key = caller.shared
  let headers = key && answerHeaders.get(key)
  if (!headers) {
    headers = new Headers(remoteHeaders(caller, ''))
    if (key) answerHeaders.set(key, headers)
  }
  return new Response(null, { status: 200, headers })
}

const answerHeaders = new WeakMap<object, Headers>()

function remoteHeaders(caller: Caller, jwt: string): Record<string, string> {
  const { user, groups } = caller
  const email = user ? headerValue(user.email) : ''
  return {
    ...NO_STORE,
    // SPEC: a machine is `client:<client_id>`.
    'remote-user': caller.clientId ? headerValue(`client:${caller.clientId}`) : email,
    'remote-email': email,
    'remote-name': user ? headerValue(user.fullName) : '',
    'remote-groups': (groups ?? []).join(','),
    'remote-id': user?.id ?? '',
    'remote-jwt': jwt,
  }
}

/** A short-lived proof for the app (60 s, aud = the site's origin), signed like ID tokens. */
async function remoteJwt(ctx: AppContext, forwarded: ForwardedRequest, caller: Caller): Promise<string> {
  const now = Math.floor(ctx.clock.now() / 1000)
  const user = caller.user!
  const payload = { iss: ctx.config.issuer, sub: user.id, aud: forwarded.origin, iat: now, exp: now + JWT_TTL_SECONDS, email: user.email, name: user.fullName, groups: caller.groups ?? [] }
  return signJwt(payload, await ctx.signingKeys.signingKey())
}

/** 403 with the "Access denied" page (the proxy shows it to the browser), in the brand and language: /api/* runs outside the brand's context (src/app.ts). */
export function denied(ctx: AppContext, speech?: Speech): Response {
  return withBrand(ctx.brand, () => errorPageSaying(403, 'error.siteDenied', speech, undefined, NO_STORE))
}

/** A browser's page load, as opposed to an app's script or API call (which gets a 401 it can act on). */
function isPageLoad(headers: Headers): boolean {
  return (headers.get('accept') ?? '').includes('text/html') && !headers.has('x-requested-with') && !headers.has('authorization')
}

/** forward-auth, nobody signed in: a page load goes to sign in (302 for GET/HEAD, else 303); anything else gets 401. */
export function signInForwardAuth(ctx: AppContext, headers: Headers, forwarded: ForwardedRequest): Response {
  if (!isPageLoad(headers)) return unauthorized(ctx, forwarded)
  const status = forwarded.method === 'GET' || forwarded.method === 'HEAD' ? 302 : 303
  return new Response(null, { status, headers: { ...NO_STORE, location: startUrl(forwarded) } })
}

/** auth-request (nginx): always 401, the sign-in URL in Location for nginx's own redirect. */
export function signInAuthRequest(ctx: AppContext, forwarded: ForwardedRequest): Response {
  const response = unauthorized(ctx, forwarded)
  response.headers.set('location', startUrl(forwarded))
  return response
}

function unauthorized(ctx: AppContext, forwarded: ForwardedRequest): Response {
  return new Response(JSON.stringify({ error: 'unauthorized', error_description: 'sign in first' }), {
    status: 401,
    headers: { ...NO_STORE, 'content-type': 'application/json', 'www-authenticate': `Bearer realm="${forwarded.origin}"` },
  })
}
