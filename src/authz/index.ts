import { Elysia } from 'elysia'
import { csrfTokenFor, csrfValid } from '../accounts/sessions'
import { CsrfForm } from '../accounts/model'
import { forbidden } from '../accounts/sign-in'
import type { AppContext } from '../context'
import { PageError } from '../lib/errors'
import { randomToken } from '../lib/crypto'
import { seeOther } from '../views/page'
import { addressIn, peerAddressOf } from '../web/client-address'
import { parsePageForm } from '../web/forms'
import { allowed, denied, signInAuthRequest, signInForwardAuth } from './answers'
import { check, requireTrustedProxy, type CheckResult } from './check'
import { fromAuthRequest, fromForwardAuth, parseSiteUrl, type ForwardedRequest, type SiteUrl } from './forwarded'
import { siteLogoutPage } from './logout-page'
import { exchangeSiteCode, signOutSite, siteCookieName, siteCookie, siteTokenOf, stateCookie, stateOf } from './site-sessions'
import { issuerStartUrl, siteReturn, startSiteSignIn } from './start'
import { isLocale } from '../i18n/locales'
import { langCookieName, SITE_LANGUAGE_PATH, speechOf } from '../i18n/request'
import { fromThisSite, LanguageForm, languageChosen } from '../i18n/routes'

/**
 * The "Access denied" page the proxy shows at the site's original URL: in the language of the
 * browser's headers, which the proxy passes on (that host's language cookie, Accept-Language);
 * its menu posts to the site's /.latchkey/language and comes back to that URL.
 */
function deniedHere(ctx: AppContext, request: Request, forwarded: ForwardedRequest): Response {
  return denied(ctx, { ...speechOf(ctx.config, request, { site: forwarded.proto }), here: forwarded.url.slice(forwarded.origin.length) })
}

/** The answer to a check; `nginx`: auth-request's way of sending someone to sign in, else forward-auth's. */
function answer(ctx: AppContext, result: CheckResult, forwarded: ForwardedRequest, request: Request, nginx: boolean): Response | Promise<Response> {
  if (result.kind !== 'decided') return deniedHere(ctx, request, forwarded)
  switch (result.decision) {
    case 'allow':
      return allowed(ctx, result.site, forwarded, result.caller)
    case 'deny':
      return deniedHere(ctx, request, forwarded)
    default:
      return nginx ? signInAuthRequest(ctx, forwarded) : signInForwardAuth(ctx, request.headers, forwarded)
  }
}

/**
 * The origin a /.latchkey/ request was made to: the proxy's X-Forwarded-Proto and X-Forwarded-Host
 * when a trusted proxy sent them, else this request's own. Routing never depends on it (the route
 * is the same on every host); it names the origin a code must be for and a cookie is looked up at.
 */
export function siteOriginOf(ctx: AppContext, request: Request): SiteUrl | undefined {
  const fromProxy = addressIn(peerAddressOf(request), ctx.config.trustedProxies)
  const proto = (fromProxy && request.headers.get('x-forwarded-proto')) || new URL(request.url).protocol.slice(0, -1)
  const host = (fromProxy && request.headers.get('x-forwarded-host')) || request.headers.get('host')
  return host === null ? undefined : parseSiteUrl(`${proto.toLowerCase()}://${host}/`)
}

const expired = () => new PageError(400, 'error.siteLinkExpired')
const notASite = () => new PageError(400, 'error.siteNotAPage')

/** `rd` (a query parameter) when it is a page of a site protected here, at this very origin. */
async function returnHere(ctx: AppContext, request: Request, here: SiteUrl | undefined): Promise<SiteUrl | undefined> {
  const rd = await siteReturn(ctx, new URL(request.url).searchParams.get('rd'))
  return here && rd?.origin === here.origin ? rd : undefined
}

/** On to Latchkey's /authz/start for `rd`, with the browser's state cookie (re)set at the site. */
function toIssuer(ctx: AppContext, rd: SiteUrl, state: string): Response {
  const headers = { location: issuerStartUrl(ctx, rd, state), 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', 'set-cookie': stateCookie(rd.proto, state) }
  return new Response(null, { status: 302, headers })
}

/** The sign-out form's CSRF secret: the site cookie it was shown to (another site's, or none, cannot post it). */
const logoutSecret = (proto: 'http' | 'https', token: string) => `site-logout:${proto} ${token}`

export const FORWARD_AUTH_PATH = '/api/authz/forward-auth'
export const AUTH_REQUEST_PATH = '/api/authz/auth-request'

/**
 * Traefik forwardAuth, Caddy forward_auth, HAProxy, Envoy: GET /api/authz/forward-auth. Answered
 * without a promise when what it needs is cached; a refusal of the caller or its headers is thrown.
 */
export function forwardAuth(ctx: AppContext, request: Request): Response | Promise<Response> {
  requireTrustedProxy(ctx, request)
  return checked(ctx, request, fromForwardAuth(request.headers), false)
}

/** nginx auth_request: GET /api/authz/auth-request (as forwardAuth). */
export function authRequest(ctx: AppContext, request: Request): Response | Promise<Response> {
  requireTrustedProxy(ctx, request)
  return checked(ctx, request, fromAuthRequest(request.headers), true)
}

function checked(ctx: AppContext, request: Request, forwarded: ForwardedRequest, nginx: boolean): Response | Promise<Response> {
  const result = check(ctx, request, forwarded)
  return result instanceof Promise ? result.then((r) => answer(ctx, r, forwarded, request, nginx)) : answer(ctx, result, forwarded, request, nginx)
}

/** Forward-auth (SPEC "Protecting apps that speak no OAuth"): the proxies' checks and the per-site sign-in. */
export function authzRoutes(ctx: AppContext) {
  return new Elysia({ name: 'authz' })
    .get(FORWARD_AUTH_PATH, ({ request }) => forwardAuth(ctx, request), { detail: { tags: ['Forward-auth'], summary: 'Traefik/Caddy/HAProxy/Envoy: 200 with Remote-* headers, 403, or 302/303 to sign in (401 for non-page requests)' } })
    .get(AUTH_REQUEST_PATH, ({ request }) => authRequest(ctx, request), { detail: { tags: ['Forward-auth'], summary: 'nginx auth_request: 200 with Remote-* headers, 403, or 401 with the sign-in URL in Location' } })
    .get('/authz/start', ({ request }) => startSiteSignIn(ctx, request), { detail: { hide: true } })
    .get('/.latchkey/start', async function siteStart({ request }) {
      // The browser's state at this site (kept when it has one: sign-ins in two tabs both finish).
      const here = siteOriginOf(ctx, request)
      const rd = await returnHere(ctx, request, here)
      if (!here || !rd) throw notASite()
      return toIssuer(ctx, rd, stateOf(request.headers, here.proto) ?? randomToken())
    }, { detail: { hide: true } })
    .get('/.latchkey/callback', async function siteCallback({ request }) {
      const here = siteOriginOf(ctx, request)
      const code = new URL(request.url).searchParams.get('code') ?? ''
      const made = here && (await exchangeSiteCode(ctx, code, here.origin, stateOf(request.headers, here.proto)))
      if (made) {
        const headers = new Headers({ location: made.returnTo, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' })
        headers.append('set-cookie', siteCookie(here.proto, made.token, made.maxAgeSeconds))
        headers.append('set-cookie', stateCookie(here.proto, '', 0))
        return new Response(null, { status: 302, headers })
      }
      // Refused — another browser's code (login CSRF), expired, used: spent all the same; this
      // browser signs in again as whoever it is, under a fresh state.
      const rd = await returnHere(ctx, request, here)
      if (!rd) throw expired()
      return toIssuer(ctx, rd, randomToken())
    }, { detail: { hide: true } })
    .get('/.latchkey/logout', function siteLogoutForm({ request }) {
      const here = siteOriginOf(ctx, request)
      const token = here && siteTokenOf(request.headers, here.proto)
      if (!here || token === undefined) return seeOther(`${ctx.config.issuer}/login`)
      return siteLogoutPage(csrfTokenFor(ctx.csrfKey, logoutSecret(here.proto, token)), ctx.config.issuer, speechOf(ctx.config, request, { site: here.proto }))
    }, { detail: { hide: true } })
    .post(
      SITE_LANGUAGE_PATH,
      function siteLanguage({ request, body }) {
        // The footer menu of a page on this site's origin (POST /language's twin, src/i18n/routes.ts):
        // from a page of this very origin only, and the cookie is this host's (`__Host-` under https).
        const here = siteOriginOf(ctx, request)
        if (!here || !fromThisSite(request, here.origin)) throw new PageError(403, 'error.forbidden')
        if (!isLocale(body.locale)) throw new PageError(400, 'error.badLanguage')
        return languageChosen(langCookieName(here.proto === 'https'), body.locale, body.return_to, here.proto === 'https')
      },
      { parse: parsePageForm, body: LanguageForm, detail: { hide: true } },
    )
    .post(
      '/.latchkey/logout',
      async function siteLogout({ request, body }) {
        const here = siteOriginOf(ctx, request)
        const token = here && siteTokenOf(request.headers, here.proto)
        if (!here || token === undefined) return seeOther(`${ctx.config.issuer}/login`)
        if (!csrfValid(ctx.csrfKey, logoutSecret(here.proto, token), body.csrf_token)) throw forbidden()
        await signOutSite(ctx, here.proto, token, here.host)
        return seeOther(`${ctx.config.issuer}/login`, [`${siteCookieName(here.proto)}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${here.proto === 'https' ? '; Secure' : ''}`])
      },
      { parse: parsePageForm, body: CsrfForm, detail: { hide: true } },
    )
}
