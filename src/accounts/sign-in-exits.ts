import { Elysia, t } from 'elysia'
import type { AppContext } from '../context'
import { clearCookie } from '../lib/cookies'
import { PageError } from '../lib/errors'
import { AuthorizationRedirect, callbackUrl, paramsFromSearch, validateAuthorizationRequest } from '../oauth/authorize/request'
import { seeOther } from '../views/page'
import { parsePageForm } from '../web/forms'
import { cookieNames, deleteSession } from './sessions'
import { forbidden } from './sign-in'
import { formBinding, loginUrl, safeReturnTo } from './web'

const ExitForm = t.Object({ csrf_token: t.Optional(t.String()), return_to: t.Optional(t.String()) })

/**
 * Where "Cancel" goes from an authorization request (`returnTo` is /oauth/authorize?…): back to
 * the app with `error=access_denied` (RFC 6749 §4.1.2.1), once its client and redirect_uri are
 * verified; a request that is not valid gets the app's own error, one that names no verified
 * app goes to /login.
 */
async function cancelled(ctx: AppContext, returnTo: string | undefined): Promise<string> {
  if (!returnTo?.startsWith('/oauth/authorize?')) return '/login'
  try {
    const authz = await validateAuthorizationRequest(ctx, paramsFromSearch(new URLSearchParams(returnTo.slice(returnTo.indexOf('?') + 1))))
    return callbackUrl(ctx, authz.redirectUri, { error: 'access_denied', error_description: 'the user cancelled the sign-in' }, authz.state)
  } catch (error) {
    if (error instanceof AuthorizationRedirect) return error.location
    if (error instanceof PageError) return '/login'
    throw error
  }
}

/**
 * Ways out of a sign-in that asks for more (SPEC, issue 34 "Never be stuck"): on /login/two-step
 * (a second factor after the password, or a step-up for an app that requires two) "Cancel" ends a
 * pending sign-in and goes back to the app (access_denied) or to /login; "Sign in as someone else"
 * — also the consent page's "Not you?" — ends the browser's session and goes to /login, keeping
 * where it was going. Both are forms with the CSRF token of the session (pending or not).
 */
export function signInExitRoutes(ctx: AppContext) {
  const secure = ctx.config.secureCookies
  const signedOut = [clearCookie(cookieNames(secure).session, secure)]

  return new Elysia({ name: 'sign-in-exits' })
    .post(
      '/login/two-step/cancel',
      async function cancelTwoStep({ request, body }) {
        const session = (await formBinding(ctx, request, body.csrf_token))?.session
        if (!session) throw forbidden()
        const to = await cancelled(ctx, safeReturnTo(body.return_to))
        // A sign-in waiting for its second factor ends; a signed-in session only declines the app.
        if (!session.pending) return seeOther(to)
        await deleteSession(ctx.store, session.token)
        return seeOther(to, signedOut)
      },
      { parse: parsePageForm, body: ExitForm },
    )
    .post(
      '/login/switch',
      async function signInAsSomeoneElse({ request, body }) {
        const session = (await formBinding(ctx, request, body.csrf_token))?.session
        if (!session) throw forbidden()
        await deleteSession(ctx.store, session.token)
        const returnTo = safeReturnTo(body.return_to)
        return seeOther(returnTo ? loginUrl(returnTo) : '/login', signedOut)
      },
      { parse: parsePageForm, body: ExitForm },
    )
}
