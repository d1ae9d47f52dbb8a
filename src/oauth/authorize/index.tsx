/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import { Elysia, t } from 'elysia'
import { csrfAccepted, formCsrf, loginUrl, readSession } from '../../accounts/web'
import type { AppContext } from '../../context'
import { PageError } from '../../lib/errors'
import { htmlPage, seeOther } from '../../views/page'
import { parsePageForm } from '../../web/forms'
import { issueCode } from '../codes'
import { includesAll } from '../scopes'
import { ConsentPage } from './consent-page'
import {
  type AuthorizationRequest,
  callbackUrl,
  formActionSource,
  paramsFromSearch,
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
})

export function authorizeRoutes(ctx: AppContext) {
  /** Issues the code (remembering consent when the user just gave it) and sends the browser back. */
  async function approve(request: AuthorizationRequest, userId: string, remember: boolean): Promise<Response> {
    const grant = {
      clientId: request.client.id,
      userId,
      redirectUri: request.redirectUri,
      scope: request.scopes.join(' '),
      codeChallenge: request.codeChallenge ?? null,
    }
    const code = await issueCode(ctx.store, grant, ctx.clock.now(), ctx.config.codeTtl, remember ? request.scopes : undefined)
    return seeOther(callbackUrl(ctx, request.redirectUri, { code }, request.state))
  }

  return new Elysia({ name: 'oauth-authorize' })
    .get('/oauth/authorize', async function authorize({ request }) {
      const url = new URL(request.url)
      const authz = await validateAuthorizationRequest(ctx, paramsFromSearch(url.searchParams))
      const session = await readSession(ctx, request)
      if (!session) return seeOther(loginUrl(url.pathname + url.search))
      const remembered = includesAll(await ctx.store.grantedScope(session.user.id, authz.client.id), authz.scopes)
      if (remembered) return approve(authz, session.user.id, false)
      // A first-party app skips the page, but its access is still recorded, so the user sees
      // it on /account and can revoke it there.
      if (authz.client.skipConsent) return approve(authz, session.user.id, true)
      const csrf = formCsrf(ctx, request, session)
      return htmlPage(<ConsentPage request={authz} user={session.user} csrf={csrf.token} />, {
        formAction: [formActionSource(authz.redirectUri)],
      })
    }, {
      detail: {
        tags: ['OAuth'],
        summary: 'Authorization endpoint: sign-in and consent pages, then a 303 to redirect_uri with code (or error), state and iss',
        parameters: ['client_id', 'redirect_uri', 'scope', 'state', 'response_type', 'code_challenge', 'code_challenge_method'].map((name) => ({
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
          throw new PageError(403, 'Request refused', 'This consent form has expired or did not come from this site. Start again from the application.')
        const authz = await validateAuthorizationRequest(ctx, body)
        if (body.decision === 'allow') return approve(authz, session.user.id, true)
        const error = body.decision === 'deny' ? 'access_denied' : 'invalid_request'
        const description = body.decision === 'deny' ? 'the user denied access' : 'decision must be allow or deny'
        return seeOther(callbackUrl(ctx, authz.redirectUri, { error, error_description: description }, authz.state))
      },
      { parse: parsePageForm, body: ConsentForm, detail: { hide: true } },
    )
}
