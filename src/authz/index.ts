import { Elysia } from 'elysia'
import type { AppContext } from '../context'
import { PageError } from '../lib/errors'
import { addressIn, peerAddressOf } from '../web/client-address'
import { allowed, denied, signInAuthRequest, signInForwardAuth } from './answers'
import { check, requireTrustedProxy, type CheckResult } from './check'
import { fromAuthRequest, fromForwardAuth, type ForwardedRequest } from './forwarded'
import { parseHostHeader } from './hosts'
import { siteCookieName, exchangeSiteCode, signOutSite, siteCookie, siteTokenOf } from './site-sessions'
import { startSiteSignIn } from './start'

/** The answer to a check; `signIn` says how this endpoint sends someone to sign in. */
function answer(ctx: AppContext, result: CheckResult, forwarded: ForwardedRequest, signIn: () => Response): Response | Promise<Response> {
  if (result.kind !== 'decided') return denied()
  switch (result.decision) {
    case 'allow':
      return allowed(ctx, result.site, forwarded, result.caller)
    case 'deny':
      return denied()
    default:
      return signIn()
  }
}

/**
 * The host a /.latchkey/ request was made to: the proxy's X-Forwarded-Host when a trusted proxy
 * sent it, else Host. Routing never depends on it (the route is the same on every host); it only
 * names the host a code must be for and a cookie is looked up at.
 */
function siteHostOf(ctx: AppContext, request: Request): string | undefined {
  const fromProxy = addressIn(peerAddressOf(request), ctx.config.trustedProxies) && request.headers.get('x-forwarded-host')
  return parseHostHeader(fromProxy || request.headers.get('host'))?.host
}

const expired = () => new PageError(400, 'Sign-in link expired', 'This sign-in link has expired or was already used. Open the site again to sign in.')

/** Forward-auth (SPEC "Protecting apps that speak no OAuth"): the proxies' checks and the per-site sign-in. */
export function authzRoutes(ctx: AppContext) {
  return new Elysia({ name: 'authz' })
    .get('/api/authz/forward-auth', async function forwardAuth({ request }) {
      requireTrustedProxy(ctx, request)
      const forwarded = fromForwardAuth(request.headers)
      return answer(ctx, await check(ctx, request, forwarded), forwarded, () => signInForwardAuth(ctx, request.headers, forwarded))
    }, { detail: { tags: ['Forward-auth'], summary: 'Traefik/Caddy/HAProxy/Envoy: 200 with Remote-* headers, 403, or 302/303 to sign in (401 for non-page requests)' } })
    .get('/api/authz/auth-request', async function authRequest({ request }) {
      requireTrustedProxy(ctx, request)
      const forwarded = fromAuthRequest(request.headers)
      return answer(ctx, await check(ctx, request, forwarded), forwarded, () => signInAuthRequest(ctx, forwarded))
    }, { detail: { tags: ['Forward-auth'], summary: 'nginx auth_request: 200 with Remote-* headers, 403, or 401 with the sign-in URL in Location' } })
    .get('/authz/start', ({ request }) => startSiteSignIn(ctx, request), { detail: { hide: true } })
    .get('/.latchkey/callback', async function siteCallback({ request }) {
      const host = siteHostOf(ctx, request)
      const code = new URL(request.url).searchParams.get('code') ?? ''
      const made = host === undefined ? undefined : await exchangeSiteCode(ctx, code, host)
      if (!made) throw expired()
      const proto = made.returnTo.startsWith('https:') ? 'https' : 'http'
      const headers = new Headers({ location: made.returnTo, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' })
      headers.append('set-cookie', siteCookie(proto, made.token, made.maxAgeSeconds))
      return new Response(null, { status: 302, headers })
    }, { detail: { hide: true } })
    .get('/.latchkey/logout', async function siteLogout({ request }) {
      const host = siteHostOf(ctx, request)
      const headers = new Headers({ location: `${ctx.config.issuer}/login`, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' })
      for (const proto of ['https', 'http'] as const) {
        const token = siteTokenOf(request.headers, proto)
        if (token === undefined) continue
        if (host !== undefined) await signOutSite(ctx, token, host)
        headers.append('set-cookie', `${siteCookieName(proto)}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${proto === 'https' ? '; Secure' : ''}`)
      }
      return new Response(null, { status: 303, headers })
    }, { detail: { hide: true } })
}
