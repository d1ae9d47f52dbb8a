/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import { Elysia, t } from 'elysia'
import { cookieNames, deleteSession } from '../accounts/sessions'
import { forbidden } from '../accounts/sign-in'
import { csrfAccepted, formCsrf, readSession } from '../accounts/web'
import type { AppContext } from '../context'
import { clearCookie } from '../lib/cookies'
import { findClient } from '../oauth/clients'
import { CsrfField, Hidden, Layout } from '../views/layout'
import { raw, t as msg, th } from '../i18n'
import { speechOf } from '../i18n/request'
import { formActionSource, htmlPage, seeOther } from '../views/page'
import { parsePageForm } from '../web/forms'
import { verifyJwt } from './jwt'

const field = t.Optional(t.String())
const LogoutParams = t.Object({
  id_token_hint: field,
  post_logout_redirect_uri: field,
  state: field,
  client_id: field,
  // RP-Initiated Logout 1.0 §2: the languages the app would like the page in.
  ui_locales: field,
  csrf_token: field,
})
type LogoutParams = typeof LogoutParams.static

/**
 * Where RP-initiated logout may send the browser back to (RP-Initiated Logout 1.0 §2–3): only a
 * post_logout_redirect_uri registered, exactly, for the client that a verified id_token_hint
 * (or, without a hint, client_id) names. A hint that does not verify, or names another client
 * than client_id, allows no redirect. The hint may have expired: it only says who asks.
 */
async function allowedReturn(ctx: AppContext, params: LogoutParams): Promise<string | undefined> {
  const uri = params.post_logout_redirect_uri
  if (!uri) return undefined
  let clientId = params.client_id
  if (params.id_token_hint) {
    const verified = await verifyJwt(params.id_token_hint, await ctx.signingKeys.verifier())
    const aud = verified?.payload.aud
    const audience = typeof aud === 'string' ? aud : Array.isArray(aud) && aud.length === 1 ? aud[0] : undefined
    if (!verified || verified.payload.iss !== ctx.config.issuer || typeof audience !== 'string') return undefined
    if (clientId !== undefined && clientId !== audience) return undefined
    clientId = audience
  }
  const client = clientId ? await findClient(ctx.store, clientId) : undefined
  return client?.postLogoutRedirectUris.includes(uri) ? uri : undefined
}

function back(uri: string, state: string | undefined): string {
  const url = new URL(uri)
  if (state !== undefined) url.searchParams.append('state', state)
  return url.href
}

function SignedOutPage() {
  return (
    <Layout title={msg('signOut.doneTitle')}>
      <h1>{th('signOut.done')}</h1>
      <p class="muted">{th('signOut.close')}</p>
    </Layout>
  )
}

function ConfirmPage(props: { params: LogoutParams; csrf: string; email: string }) {
  const hidden = (['id_token_hint', 'post_logout_redirect_uri', 'state', 'client_id', 'ui_locales'] as const).filter((k) => props.params[k] !== undefined)
  return (
    <Layout title={msg('signOut.title')}>
      <h1>{th('signOut.confirm')}</h1>
      <p class="muted">{th('signOut.appAsks', { email: raw(<strong safe>{props.email}</strong>) })}</p>
      <form method="post" action="/oauth/logout">
        <CsrfField token={props.csrf} />
        {hidden.map((k) => (
          <Hidden name={k} value={props.params[k]!} />
        ))}
        <div class="actions">
          <button type="submit">{th('signOut.submit')}</button>
        </div>
      </form>
    </Layout>
  )
}

/** OpenID Connect RP-Initiated Logout 1.0: a confirmation page, then the session ends. */
export function endSessionRoutes(ctx: AppContext) {
  const secure = ctx.config.secureCookies
  return new Elysia({ name: 'oidc-end-session' })
    .get(
      '/oauth/logout',
      async function confirmLogout({ request, query }) {
        const session = await readSession(ctx, request)
        const allowed = await allowedReturn(ctx, query)
        if (!session) return allowed ? seeOther(back(allowed, query.state)) : htmlPage(() => <SignedOutPage />, { speech: speechOf(ctx.config, request, { uiLocales: query.ui_locales }) })
        const csrf = formCsrf(ctx, request, session)
        // Chromium applies form-action to the redirect after the POST: allow the verified return.
        return htmlPage(() => <ConfirmPage params={query} csrf={csrf.token} email={session.user.email} />, {
          formAction: allowed ? [formActionSource(allowed)] : [],
          speech: speechOf(ctx.config, request, { user: session.user, uiLocales: query.ui_locales }),
        })
      },
      { query: LogoutParams, detail: { tags: ['OpenID Connect'], summary: 'RP-initiated logout: asks the signed-in user to confirm' } },
    )
    .post(
      '/oauth/logout',
      async function logout({ request, body }) {
        const session = await readSession(ctx, request)
        if (!csrfAccepted(ctx, request, session, body.csrf_token)) throw forbidden()
        if (session) await deleteSession(ctx.store, session.token)
        const cleared = [clearCookie(cookieNames(secure).session, secure)]
        const allowed = await allowedReturn(ctx, body)
        if (allowed) return seeOther(back(allowed, body.state), cleared)
        return htmlPage(() => <SignedOutPage />, { cookies: cleared, speech: speechOf(ctx.config, request, { user: session?.user, uiLocales: body.ui_locales }) })
      },
      { parse: parsePageForm, body: LogoutParams, detail: { hide: true } },
    )
}
