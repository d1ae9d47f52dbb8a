import type { ValidationError } from 'elysia'
import { readSession } from './accounts/web'
import { siteOriginOf } from './authz'
import type { AppContext } from './context'
import { DatabaseUnavailable } from './db/store'
import { ApiError, InvalidRequest, MethodNotAllowed, NotFound, PageError, ServerError, TemporarilyUnavailable } from './lib/errors'
import { errorResponse } from './lib/http'
import { requestIdOf } from './lib/log'
import { redact } from './lib/redact'
import { AuthorizationRedirect } from './oauth/authorize/request'
import { errorPageResponse, errorPageSaying, notFoundPage, pageErrorResponse } from './views/error-page'
import { CATALOGS } from './i18n/catalog'
import type { Speech } from './i18n'
import { speechOf } from './i18n/request'
import type { MessageKey } from './i18n/types'
import { seeOther } from './views/page'
import { isApiPath, wantsPage } from './web/request-guard'

/** "grant_type is required" rather than a TypeBox dump. */
function describeValidation(error: ValidationError): string {
  const first = error.valueError
  const name = first?.path?.replace(/^\//, '').replace(/\//g, '.')
  if (!name) return 'request is malformed'
  return first?.value === undefined ? `${name} is required` : `${name} is invalid`
}

/** The title of an API refusal's page, by status; its detail stays the API's English description (RFC 6749). */
const PAGE_TITLES: Record<number, MessageKey> = {
  400: 'error.status.400',
  401: 'error.status.401',
  403: 'error.status.403',
  405: 'error.status.405',
  409: 'error.status.409',
  413: 'error.status.413',
  429: 'error.status.429',
}

/**
 * An API refusal met by a person's browser, as a page with the same status and headers (Allow,
 * Retry-After…). Every 404 is the same page, so /admin refused to a stranger (src/admin/web.ts)
 * reads exactly like a path no route serves.
 */
function apiErrorPage(error: ApiError, speech: Speech): Response {
  const headers = Object.keys(error.headers).length ? error.headers : undefined
  if (error instanceof NotFound) return notFoundPage(headers, speech)
  const detail = error.description.charAt(0).toUpperCase() + error.description.slice(1) + '.'
  const title = CATALOGS[speech.locale][PAGE_TITLES[error.status] ?? 'error.status.500'].text(undefined)
  return errorPageResponse(error.status, title, detail, headers, speech)
}

/**
 * The one place that decides what an error becomes (node-oidc-provider's err_out): RFC error
 * JSON for the API and for programs, a page for people, a redirect only for verified authorization errors, and
 * for anything unexpected a bare `server_error` — the detail goes to the log with a request id.
 */
export function errorAnswer(
  ctx: AppContext,
  allowedMethods: (path: string) => string[],
  { code, error, request, path }: { code: string | number; error: unknown; request: Request; path: string },
): Response | Promise<Response> {
  const cause = code === 'PARSE' && (error as Error).cause instanceof Error ? ((error as Error).cause as Error) : error
  const isApi = isApiPath(path)
  // A browser navigating to a page path gets pages for what the API answers as JSON (SPEC "Every screen").
  const isPerson = wantsPage(request, path)
  // In the request's language: a signed-in user's choice (SPEC "Brand and language"), else the
  // cookie, Accept-Language… The session is looked up only when the browser sends its cookie
  // (readSession answers at once without one); one unknown, expired or unreadable falls to the
  // next rule. Its language menu comes back to the start page: an error page echoes no path (a
  // link cannot put words in it).
  const speech = async (): Promise<Speech> => {
    // A page under a protected site's /.latchkey/ is on the site's origin: its cookie, its menu.
    const site = path.startsWith('/.latchkey/') ? siteOriginOf(ctx, request) : undefined
    if (site) return { ...speechOf(ctx.config, request, { site: site.proto }), here: '/' }
    const session = await readSession(ctx, request).catch(() => undefined)
    return { ...speechOf(ctx.config, request, { user: session?.user }), here: '/' }
  }

  if (cause instanceof AuthorizationRedirect) return seeOther(cause.location)
  if (cause instanceof ApiError) return isPerson ? speech().then((s) => apiErrorPage(cause, s)) : errorResponse(cause)
  if (cause instanceof PageError) return speech().then((s) => pageErrorResponse(cause, s))
  if (code === 'VALIDATION' || code === 'PARSE') {
    const description = code === 'VALIDATION' ? describeValidation(error as ValidationError) : 'request body is malformed'
    return isApi ? errorResponse(new InvalidRequest(description)) : speech().then((s) => apiErrorPage(new InvalidRequest(description), s))
  }
  if (cause instanceof DatabaseUnavailable) {
    const retry = { 'retry-after': '1' }
    // No session lookup: the database is what failed.
    return isApi
      ? errorResponse(new TemporarilyUnavailable('the database is unavailable; try again shortly', retry))
      : errorPageSaying(503, 'error.unavailable', { ...speechOf(ctx.config, request), here: '/' }, undefined, retry)
  }
  if (code === 'NOT_FOUND') {
    // /admin answers strangers as if it were not there: no 405 naming its methods either.
    const allowed = path === '/admin' || path.startsWith('/admin/') ? [] : allowedMethods(path)
    const refusal =
      allowed.length > 0
        ? new MethodNotAllowed(`${request.method} is not allowed here`, { allow: allowed.join(', ') })
        : new NotFound(`no route for ${request.method} ${path}`)
    return isPerson ? speech().then((s) => apiErrorPage(refusal, s)) : errorResponse(refusal)
  }
  const e = cause as { name?: string; code?: unknown; message?: string }
  const requestId = requestIdOf(request)
  ctx.log.error('unhandled error', {
    request_id: requestId,
    error_type: e?.name ?? typeof cause,
    error_code: typeof e?.code === 'string' ? e.code : undefined,
    error_message: redact(String(e?.message ?? '')),
  })
  const fault = new ServerError(`an unexpected error occurred; it was logged with request id ${requestId}`)
  return isApi ? errorResponse(fault) : speech().then((s) => errorPageSaying(500, 'error.unexpected', s, { requestId }))
}
