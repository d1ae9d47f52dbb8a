import type { AppContext } from '../context'
import { findClient } from '../oauth/clients'
import { randomToken } from '../lib/crypto'
import { cookie, parseCookies } from '../lib/cookies'
import { CSRF_COOKIE, SESSION_COOKIE, csrfTokenFor, findSession, type Session } from './sessions'

/** The signed-in session of a browser request, if any. */
export function readSession(ctx: AppContext, request: Request): Session | undefined {
  const token = parseCookies(request.headers.get('cookie'))[SESSION_COOKIE]
  return token ? findSession(ctx.db, token, ctx.clock.now()) : undefined
}

/**
 * The secret a form's CSRF token is bound to: the session when signed in, otherwise the
 * anonymous `lk_csrf` cookie. Rendering a form may need to set that cookie first.
 */
export function formCsrf(ctx: AppContext, request: Request, session = readSession(ctx, request)) {
  if (session) return { token: csrfTokenFor(session.token), cookies: [] as string[] }
  const existing = parseCookies(request.headers.get('cookie'))[CSRF_COOKIE]
  const secret = existing && /^[A-Za-z0-9_-]{43}$/.test(existing) ? existing : randomToken()
  const cookies = existing === secret ? [] : [cookie(CSRF_COOKIE, secret, { secure: ctx.config.secureCookies })]
  return { token: csrfTokenFor(secret), cookies }
}

/** The secret a submitted form must have been rendered for. */
export function submittedCsrfSecret(ctx: AppContext, request: Request, session = readSession(ctx, request)) {
  return session ? session.token : parseCookies(request.headers.get('cookie'))[CSRF_COOKIE]
}

/** Only same-origin paths: "/x?y" yes; "//evil", "/\\evil", "https://evil", control characters no. */
export function safeReturnTo(raw: unknown): string | undefined {
  if (typeof raw !== 'string' || raw.length > 4096) return undefined
  if (!raw.startsWith('/') || raw.startsWith('//') || raw.includes('\\')) return undefined
  if (/[\u0000-\u001f\u007f]/.test(raw)) return undefined
  // Resolve against a dummy origin: anything that escapes it is refused.
  const url = new URL(raw, 'http://latchkey.invalid')
  return url.origin === 'http://latchkey.invalid' ? raw : undefined
}

/** The app a sign-in is for, when it was reached from an authorization request. */
export function appNameFor(ctx: AppContext, returnTo: string | undefined): string | undefined {
  if (!returnTo?.startsWith('/oauth/authorize?')) return undefined
  const clientId = new URLSearchParams(returnTo.slice(returnTo.indexOf('?') + 1)).get('client_id')
  return clientId ? findClient(ctx.db, clientId)?.name : undefined
}

export function loginUrl(returnTo: string): string {
  return `/login?return_to=${encodeURIComponent(returnTo)}`
}
