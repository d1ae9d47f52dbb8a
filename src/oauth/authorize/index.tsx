/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import { Elysia, t } from 'elysia'
import { checkEmailPage } from '../../accounts/email'
import { hasTwoFactors, type Session } from '../../accounts/sessions'
import { secondFactorsOf, twoStepUrl } from '../../accounts/signed-in'
import { csrfAccepted, formCsrf, loginUrl, readSession } from '../../accounts/web'
import type { AppContext } from '../../context'
import { PageError } from '../../lib/errors'
import { formActionSource, htmlPage, seeOther } from '../../views/page'
import { parsePageForm } from '../../web/forms'
import { issueCode } from '../codes'
import { includesAll, scopeOrder } from '../scopes'
import { AccessDeniedPage, ConsentPage, MfaRequiredPage } from './consent-page'
import { speechOf } from '../../i18n/request'
import {
  type AuthorizationRequest,
  AuthorizationRedirect,
  callbackUrl,
  dropPushedRequest,
  loginAfterParam,
  paramsFromSearch,
  usePushedRequest,
  validateAuthorizationRequest,
} from './request'

// Array-valued fields are accepted here so a repeated parameter is answered by the
// request validator (invalid_request to the client), not by a 400 page.
const field = t.Optional(t.Union([t.String(), t.Array(t.String())]))
const ConsentForm = t.Object({
  csrf_token: field,
  decision: field,
  client_id: field,
  redirect_uri: field,
  scope: field,
  state: field,
  response_type: field,
  code_challenge: field,
  code_challenge_method: field,
  nonce: field,
  prompt: field,
  max_age: field,
  login_after: field,
  resource: field,
  request_uri: field,
})

/**
 * Whether the user must (again) enter their password: no session, or OpenID Connect's
 * prompt=login or max_age (Core §3.1.2.1). Once Latchkey sent them to sign in again
 * (`login_after`), a sign-in since then is what counts — so max_age=0 cannot loop.
 */
function needsSignIn(authz: AuthorizationRequest, session: Session | undefined, now: number): boolean {
  if (!session) return true
  if (authz.loginAfter !== undefined) return session.authTime < authz.loginAfter
  return authz.prompt.has('login') || (authz.maxAge !== undefined && now - session.authTime > authz.maxAge * 1000)
}

/** The sign-in page, returning to this request; when re-authenticating, without prompt=login and with login_after. */
function signInUrl(ctx: AppContext, url: URL, authz: AuthorizationRequest, session: Session | undefined, now: number): string {
  // A pushed request's prompt and max_age are not in the URL: the request says whether they were asked.
  if (!session && authz.prompt.size === 0 && authz.maxAge === undefined) return loginUrl(url.pathname + url.search)
  const back = new URLSearchParams(url.searchParams)
  const prompt = (back.get('prompt') ?? '').split(' ').filter((p) => p && p !== 'login')
  if (prompt.length) back.set('prompt', prompt.join(' '))
  else back.delete('prompt')
  if (authz.loginAfter === undefined) back.set('login_after', loginAfterParam(ctx, now, authz.client.id))
  return `${loginUrl(`${url.pathname}?${back}`)}&reauth=1`
}

/** An error sent back to the verified redirect_uri, with state and iss. */
function redirectError(ctx: AppContext, authz: AuthorizationRequest, error: string, description: string): AuthorizationRedirect {
  return new AuthorizationRedirect(callbackUrl(ctx, authz.redirectUri, { error, error_description: description }, authz.state))
}

export function authorizeRoutes(ctx: AppContext) {
  /**
   * The speech of this request's pages: its ui_locales (a pushed request's from its push), and a
   * language menu that comes back to `url` — for a pushed request, under its redeemed handle (the
   * request_uri the browser brought is used up).
   */
  const flowSpeech = (request: Request, url: URL, authz: AuthorizationRequest, session: Session) => ({
    ...speechOf(ctx.config, request, { user: session.user, uiLocales: authz.uiLocales }),
    here: url.pathname + url.search,
  })

  /** Issues the code (remembering consent when the user just gave it) and sends the browser back. */
  async function approve(request: AuthorizationRequest, session: Session, remember: boolean, from: Request): Promise<Response> {
    await usePushedRequest(ctx, request)
    const grant = {
      clientId: request.client.id,
      userId: session.user.id,
      redirectUri: request.redirectUri,
      scope: request.scopes.join(' '),
      codeChallenge: request.codeChallenge ?? null,
      nonce: request.nonce ?? null,
      authTime: session.authTime,
      amr: session.amr.join(' '),
      resource: request.resource?.uri ?? null,
      sid: session.sid,
    }
    const remembered = remember ? { scopes: request.scopes, canonicalOrder: scopeOrder(request.resource?.scopes) } : undefined
    const code = await issueCode(ctx.store, grant, ctx.clock.now(), ctx.config.codeTtl, remembered)
    if (remember) await ctx.audit.record('consent.granted', { userId: session.user.id, clientId: request.client.id, request: from, detail: { scope: grant.scope, ...(grant.resource ? { resource: grant.resource } : {}) } })
    return seeOther(callbackUrl(ctx, request.redirectUri, { code }, request.state))
  }

  /**
   * An app with `--require-mfa` needs a session signed in with two factors (SPEC): one with a
   * single factor steps up at /login/two-step when the user has a second one; otherwise the
   * page says how to get one, with "Cancel" (access_denied).
   */
  async function requireTwoFactors(request: Request, url: URL, authz: AuthorizationRequest, session: Session): Promise<Response | undefined> {
    if (!authz.client.requireMfa || hasTwoFactors(session)) return undefined
    if (authz.prompt.has('none')) throw redirectError(ctx, authz, 'interaction_required', 'the application requires two-step verification')
    const { totp, passkeys } = await secondFactorsOf(ctx, session.user.id)
    if (totp || passkeys) return seeOther(twoStepUrl(url.pathname + url.search))
    const csrf = formCsrf(ctx, request, session)
    return htmlPage(() => <MfaRequiredPage request={authz} csrf={csrf.token} returnTo={url.pathname + url.search} />, {
      formAction: [formActionSource(authz.redirectUri)],
      speech: flowSpeech(request, url, authz, session!),
    })
  }

  /** The GET's answer once the request is valid: sign-in, the checks, then consent or the code. */
  async function answer(request: Request, url: URL, authz: AuthorizationRequest): Promise<Response> {
    const session = await readSession(ctx, request)
    const now = ctx.clock.now()
    const silent = authz.prompt.has('none')
    if (needsSignIn(authz, session, now)) {
      if (silent) throw redirectError(ctx, authz, 'login_required', 'the user must sign in')
      return seeOther(signInUrl(ctx, url, authz, session, now))
    }
    // EMAIL_VERIFICATION=required: an unverified account authorizes nothing until it verifies.
    if (ctx.config.emailVerification === 'required' && !session!.user.emailVerified) {
      if (silent) throw redirectError(ctx, authz, 'interaction_required', 'the user must verify their email')
      return checkEmailPage(ctx, request, session!, false, url.pathname + url.search)
    }
    // SPEC: an app restricted to groups is for their members only; anyone else gets "Access denied".
    if (!(await ctx.store.groups.mayAuthorize(authz.client.id, session!.user.id))) {
      const denied = redirectError(ctx, authz, 'access_denied', 'the user is in none of the groups allowed to use the application')
      if (silent) throw denied
      return htmlPage(() => <AccessDeniedPage request={authz} back={denied.location} />, { status: 403, speech: flowSpeech(request, url, authz, session!) })
    }
    const stepUp = await requireTwoFactors(request, url, authz, session!)
    if (stepUp) return stepUp
    const remembered = includesAll(await ctx.store.grants.grantedScope(session!.user.id, authz.client.id, authz.resource?.uri ?? null), authz.scopes)
    // A first-party app skips the page, but its access is still recorded, so the user sees
    // it on /account and can revoke it there. prompt=consent asks again in any case.
    if (!authz.prompt.has('consent') && (remembered || authz.client.skipConsent)) return approve(authz, session!, !remembered, request)
    if (silent) throw redirectError(ctx, authz, 'consent_required', 'the user must consent')
    const csrf = formCsrf(ctx, request, session)
    return htmlPage(() => <ConsentPage request={authz} user={session!.user} csrf={csrf.token} returnTo={url.pathname + url.search} />, {
      formAction: [formActionSource(authz.redirectUri)],
      speech: flowSpeech(request, url, authz, session!),
    })
  }

  /** An authorization ending in an error redirect ends its redeemed pushed request with it (RFC 9126 §4: used once). */
  async function endingPushed(authz: AuthorizationRequest, run: () => Promise<Response>): Promise<Response> {
    try {
      return await run()
    } catch (error) {
      if (error instanceof AuthorizationRedirect) await dropPushedRequest(ctx, authz)
      throw error
    }
  }

  /** The user's decision on the consent page; anything but "allow" ends the request (and a pushed one with it). */
  async function decision(request: Request, decided: unknown, authz: AuthorizationRequest, session: Session): Promise<Response> {
    if (decided === 'allow') {
      // The consent form was shown to a two-factor session; a forged "allow" from one with a single factor is refused.
      if (authz.client.requireMfa && !hasTwoFactors(session)) throw redirectError(ctx, authz, 'access_denied', 'the application requires two-step verification')
      if (ctx.config.emailVerification === 'required' && !session.user.emailVerified) throw redirectError(ctx, authz, 'access_denied', 'the user must verify their email')
      if (!(await ctx.store.groups.mayAuthorize(authz.client.id, session.user.id))) throw redirectError(ctx, authz, 'access_denied', 'the user is in none of the groups allowed to use the application')
      return approve(authz, session, true, request)
    }
    await usePushedRequest(ctx, authz)
    const error = decided === 'deny' ? 'access_denied' : 'invalid_request'
    const description = decided === 'deny' ? 'the user denied access' : 'decision must be allow or deny'
    return seeOther(callbackUrl(ctx, authz.redirectUri, { error, error_description: description }, authz.state))
  }

  return new Elysia({ name: 'oauth-authorize' })
    .get('/oauth/authorize', async function authorize({ request }) {
      const url = new URL(request.url)
      const authz = await validateAuthorizationRequest(ctx, paramsFromSearch(url.searchParams))
      // A redeemed pushed request goes on under its new handle: the sign-in returns with it, the consent form carries it.
      if (authz.requestUri) url.searchParams.set('request_uri', authz.requestUri)
      // Its ui_locales was pushed, not sent in the URL: the sign-in, two-step and sign-up pages read
      // the language from the request they return to, so it goes along (a hint only; never read as
      // an authorization parameter, RFC 9126 §4).
      if (authz.requestUri && authz.uiLocales) url.searchParams.set('ui_locales', authz.uiLocales)
      return endingPushed(authz, () => answer(request, url, authz))
    }, {
      detail: {
        tags: ['OAuth'],
        summary: 'Authorization endpoint: sign-in and consent pages, then a 303 to redirect_uri with code (or error), state and iss',
        parameters: ['client_id', 'redirect_uri', 'scope', 'state', 'response_type', 'code_challenge', 'code_challenge_method', 'nonce', 'prompt', 'max_age', 'resource'].map((name) => ({
          name,
          in: 'query' as const,
          required: ['client_id', 'redirect_uri', 'scope'].includes(name),
          schema: { type: 'string' as const },
        })),
      },
    })
    .post(
      '/oauth/authorize',
      async function decide({ request, body }) {
        const session = await readSession(ctx, request)
        if (!session || !csrfAccepted(ctx, request, session, body.csrf_token))
          throw new PageError(403, 'error.consentForbidden')
        const authz = await validateAuthorizationRequest(ctx, body)
        return endingPushed(authz, () => decision(request, body.decision, authz, session))
      },
      { parse: parsePageForm, body: ConsentForm, detail: { hide: true } },
    )
}
