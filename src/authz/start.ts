/**
 * GET /authz/start?rd=<original URL>&state=<the site's state cookie> (SPEC "Sessions per site"):
 * the browser signs in as usual (/login, passkeys, two-step), the site's policy is checked, and it
 * goes to the site's own /.latchkey/callback with a one-time code for that origin and that
 * browser's state only. Without a state it goes to the site's /.latchkey/start first, which sets
 * the state cookie and comes back here.
 */
import { checkEmailPage } from '../accounts/email'
import { hasTwoFactors } from '../accounts/sessions'
import { secondFactorsOf, twoStepUrl } from '../accounts/signed-in'
import { loginUrl, readSession } from '../accounts/web'
import type { AppContext } from '../context'
import { PageError } from '../lib/errors'
import { formActionSource } from '../views/page'
import { errorPageSaying } from '../views/error-page'
import { speechOf } from '../i18n/request'
import { clientAddressOf } from '../web/client-address'
import { denied } from './answers'
import { findSite } from './check'
import { decide } from './decide'
import { parseSiteUrl, type SiteUrl } from './forwarded'
import { isState, issueSiteCode } from './site-sessions'

const START = '/authz/start?rd='

/**
 * `rd` must be an http(s) URL on a site's host (else 400: Latchkey is no open redirector); when
 * Latchkey is on https, an https one (a code and a cookie must not cross the network in clear).
 */
export async function siteReturn(ctx: AppContext, rd: string | null): Promise<SiteUrl | undefined> {
  const url = parseSiteUrl(rd)
  if (url?.proto === 'http' && ctx.config.issuer.startsWith('https:')) return undefined
  return url?.target && (await findSite(ctx, url.host)) ? url : undefined
}

/** Where a sign-in for `rd` begins: the site's own /.latchkey/start, which gives the browser its state cookie. */
export const siteStartUrl = (rd: SiteUrl) => `${rd.origin}/.latchkey/start?rd=${encodeURIComponent(rd.url)}`

/** Latchkey's /authz/start for `rd`, for the browser holding `state`. */
export const issuerStartUrl = (ctx: AppContext, rd: SiteUrl, state: string) => `${ctx.config.issuer}${START}${encodeURIComponent(rd.url)}&state=${state}`

export async function startSiteSignIn(ctx: AppContext, request: Request): Promise<Response> {
  const params = new URL(request.url).searchParams
  const rd = await siteReturn(ctx, params.get('rd'))
  if (!rd) throw new PageError(400, 'error.siteUnknown')
  const state = params.get('state')
  if (!isState(state)) return redirect(siteStartUrl(rd), 302)
  const here = `${START}${encodeURIComponent(rd.url)}&state=${state}`
  const session = await readSession(ctx, request)
  if (!session) return redirect(loginUrl(here))
  if (ctx.config.emailVerification === 'required' && !session.user.emailVerified) return checkEmailPage(ctx, request, session, false, here)
  const site = (await findSite(ctx, rd.host))!
  const groups = await ctx.store.groups.groupsOf(session.user.id)
  const identity = { kind: 'user' as const, groups, twoFactor: hasTwoFactors(session) }
  const decision = decide(site, { method: 'GET', path: rd.target!.path, address: clientAddressOf(request, ctx.config.trustedProxies) }, identity)
  // Latchkey's own pages, for the signed-in user: their language.
  if (decision === 'deny') return denied(ctx, speechOf(ctx.config, request, { user: session.user }))
  if (decision === 'step-up') {
    const { totp, passkeys } = await secondFactorsOf(ctx, session.user.id)
    if (totp || passkeys) return redirect(twoStepUrl(here))
    return errorPageSaying(403, 'error.siteTwoStep', speechOf(ctx.config, request, { user: session.user }))
  }
  const code = await issueSiteCode(ctx, session.token, rd.host, rd.url, state)
  await ctx.audit.record('site.sign_in', { userId: session.user.id, request, detail: { site: site.host, host: rd.host } })
  return redirect(`${rd.origin}/.latchkey/callback?code=${code}&rd=${encodeURIComponent(rd.url)}`, 302)
}

function redirect(location: string, status = 303): Response {
  return new Response(null, { status, headers: { location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' } })
}

/**
 * The sign-in and two-step pages' CSP form-action for a return to /authz/start: the site's origin,
 * where the redirect chain after the form's POST ends (Chromium applies form-action to it).
 */
export async function siteFormAction(ctx: AppContext, returnTo: string | undefined): Promise<string[]> {
  if (!returnTo?.startsWith(START)) return []
  const rd = await siteReturn(ctx, new URLSearchParams(returnTo.slice(returnTo.indexOf('?') + 1)).get('rd'))
  return rd ? [formActionSource(rd.origin)] : []
}
