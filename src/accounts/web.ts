import { formActionSource } from '../views/page'
import type { AppContext } from '../context'
import { findClient, redirectUriMatches } from '../oauth/clients'
import { randomToken } from '../lib/crypto'
import { siteFormAction } from '../authz/start'
import { cookie, parseCookies } from '../lib/cookies'
import { cookieNames, csrfTokenFor, csrfValid, findSession, type Session } from './sessions'

/** The raw session cookie of a browser request, if it sent one. */
export function sessionCookieOf(ctx: AppContext, request: Request): string | undefined {
  return parseCookies(request.headers.get('cookie'))[cookieNames(ctx.config.secureCookies).session]
}

/** The signed-in session of a browser request, if any (a sign-in still waiting for its second factor is not one). */
export async function readSession(ctx: AppContext, request: Request): Promise<Session | undefined> {
  const session = await readAnySession(ctx, request)
  return session?.pending ? undefined : session
}

/** The browser's session, signed in or waiting for its second factor (/login/two-step). */
export async function readAnySession(ctx: AppContext, request: Request): Promise<Session | undefined> {
  const token = sessionCookieOf(ctx, request)
  if (!token) return undefined
  const now = ctx.clock.now()
  const session = await findSession(ctx.store, token, now, ctx.config.sessionIdleTtl * 1000)
  if (session) ctx.sessionActivity.touch(session, now)
  return session
}

/**
 * The secret a form's CSRF token is bound to: the session when signed in, otherwise the
 * anonymous CSRF cookie. Rendering a form may need to set that cookie first.
 */
export function formCsrf(ctx: AppContext, request: Request, session: Session | undefined) {
  if (session) return { token: csrfTokenFor(ctx.csrfKey, session.token), cookies: [] as string[] }
  const name = cookieNames(ctx.config.secureCookies).csrf
  const existing = parseCookies(request.headers.get('cookie'))[name]
  const secret = existing && /^[A-Za-z0-9_-]{43}$/.test(existing) ? existing : randomToken()
  const cookies = existing === secret ? [] : [cookie(name, secret, { secure: ctx.config.secureCookies })]
  return { token: csrfTokenFor(ctx.csrfKey, secret), cookies }
}

/** The secret this browser's forms are bound to: its session, or its anonymous CSRF cookie. */
export function browserSecret(ctx: AppContext, request: Request, session: Session | undefined): string | undefined {
  return session ? session.token : parseCookies(request.headers.get('cookie'))[cookieNames(ctx.config.secureCookies).csrf]
}

/** Whether a submitted form carries the CSRF token of the session (or anonymous cookie) it was rendered for. */
export function csrfAccepted(ctx: AppContext, request: Request, session: Session | undefined, submitted: unknown): boolean {
  return csrfValid(ctx.csrfKey, browserSecret(ctx, request, session), submitted)
}

/**
 * The secret a submitted form was rendered for, when its CSRF token is right: the browser's
 * session (signed in, or waiting for its second factor) or else its anonymous cookie. Passkey
 * ceremonies bind their challenge to it.
 */
export async function formBinding(ctx: AppContext, request: Request, submitted: unknown): Promise<{ secret: string; session?: Session } | undefined> {
  const session = await readAnySession(ctx, request)
  if (session && csrfValid(ctx.csrfKey, session.token, submitted)) return { secret: session.token, session }
  const anonymous = browserSecret(ctx, request, undefined)
  return anonymous && csrfValid(ctx.csrfKey, anonymous, submitted) ? { secret: anonymous } : undefined
}

/**
 * Only same-origin paths: "/x?y" yes; "//evil", "/\\evil", "https://evil", control characters
 * no. What comes back is the URL's own ASCII form (non-ASCII percent-encoded), so it can always
 * go into a Location header.
 */
export function safeReturnTo(raw: unknown): string | undefined {
  if (typeof raw !== 'string' || raw.length > 4096) return undefined
  if (!raw.startsWith('/') || raw.startsWith('//') || raw.includes('\\')) return undefined
  if (/[\u0000-\u001f\u007f]/.test(raw)) return undefined
  // Resolve against a dummy origin: anything that escapes it is refused.
  const url = new URL(raw, 'http://latchkey.invalid')
  return url.origin === 'http://latchkey.invalid' ? url.pathname + url.search : undefined
}

/** The app a sign-in is for, when it was reached from an authorization request. */
/**
 * The app a sign-in (or sign-up) returns to, when `return_to` is an authorization request: its
 * name for the page, and — when the request's redirect_uri is one the app registered — that
 * URI's CSP form-action source. A returning user's sign-in POST ends at the app's callback
 * (303 to /oauth/authorize, 303 to the app), and Chromium applies form-action to that last hop.
 */
export async function returningApp(ctx: AppContext, returnTo: string | undefined): Promise<{ name?: string; formAction: string[] }> {
  if (returnTo?.startsWith('/authz/start?')) return { formAction: await siteFormAction(ctx, returnTo) }
  if (!returnTo?.startsWith('/oauth/authorize?')) return { formAction: [] }
  const params = new URLSearchParams(returnTo.slice(returnTo.indexOf('?') + 1))
  const clientId = params.get('client_id')
  const client = clientId ? await findClient(ctx.store, clientId) : undefined
  if (!client) return { formAction: [] }
  const redirectUri = params.get('redirect_uri')
  const verified = redirectUri !== null && redirectUriMatches(client, redirectUri)
  return { name: client.name, formAction: verified ? [formActionSource(redirectUri)] : [] }
}

export function loginUrl(returnTo: string): string {
  return `/login?return_to=${encodeURIComponent(returnTo)}`
}
