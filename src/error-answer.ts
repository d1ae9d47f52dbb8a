import type { ValidationError } from 'elysia'
import type { AppContext } from './context'
import { DatabaseUnavailable } from './db/store'
import { ApiError, InvalidRequest, MethodNotAllowed, NotFound, PageError, ServerError, TemporarilyUnavailable } from './lib/errors'
import { errorResponse } from './lib/http'
import { requestIdOf } from './lib/log'
import { redact } from './lib/redact'
import { AuthorizationRedirect } from './oauth/authorize/request'
import { errorPageResponse, notFoundPage } from './views/error-page'
import { seeOther } from './views/page'
import { isApiPath, wantsPage } from './web/request-guard'

/** "grant_type is required" rather than a TypeBox dump. */
function describeValidation(error: ValidationError): string {
  const first = error.valueError
  const name = first?.path?.replace(/^\//, '').replace(/\//g, '.')
  if (!name) return 'request is malformed'
  return first?.value === undefined ? `${name} is required` : `${name} is invalid`
}

const PAGE_TITLES: Record<number, string> = { 400: 'Bad request', 401: 'Not signed in', 403: 'Not allowed', 405: 'Method not allowed', 409: 'Conflict', 413: 'Request too large', 429: 'Too many requests' }

/**
 * An API refusal met by a person's browser, as a page with the same status and headers (Allow,
 * Retry-After…). Every 404 is the same page, so /admin refused to a stranger (src/admin/web.ts)
 * reads exactly like a path no route serves.
 */
function apiErrorPage(error: ApiError): Response {
  const headers = Object.keys(error.headers).length ? error.headers : undefined
  if (error instanceof NotFound) return notFoundPage(headers)
  const detail = error.description.charAt(0).toUpperCase() + error.description.slice(1) + '.'
  return errorPageResponse(error.status, PAGE_TITLES[error.status] ?? 'Something went wrong', detail, headers)
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
): Response {
  const cause = code === 'PARSE' && (error as Error).cause instanceof Error ? ((error as Error).cause as Error) : error
  const isApi = isApiPath(path)
  const page = errorPageResponse
  // A browser navigating to a page path gets pages for what the API answers as JSON (SPEC "Every screen").
  const isPerson = wantsPage(request, path)

  if (cause instanceof AuthorizationRedirect) return seeOther(cause.location)
  if (cause instanceof ApiError) return isPerson ? apiErrorPage(cause) : errorResponse(cause)
  if (cause instanceof PageError) return page(cause.status, cause.title, cause.detail)
  if (code === 'VALIDATION' || code === 'PARSE') {
    const description = code === 'VALIDATION' ? describeValidation(error as ValidationError) : 'request body is malformed'
    return isApi ? errorResponse(new InvalidRequest(description)) : page(400, 'Bad request', description)
  }
  if (cause instanceof DatabaseUnavailable) {
    const retry = { 'retry-after': '1' }
    return isApi
      ? errorResponse(new TemporarilyUnavailable('the database is unavailable; try again shortly', retry))
      : page(503, 'Temporarily unavailable', 'The service cannot reach its database right now. Try again in a moment.', retry)
  }
  if (code === 'NOT_FOUND') {
    // /admin answers strangers as if it were not there: no 405 naming its methods either.
    const allowed = path === '/admin' || path.startsWith('/admin/') ? [] : allowedMethods(path)
    const refusal =
      allowed.length > 0
        ? new MethodNotAllowed(`${request.method} is not allowed here`, { allow: allowed.join(', ') })
        : new NotFound(`no route for ${request.method} ${path}`)
    return isPerson ? apiErrorPage(refusal) : errorResponse(refusal)
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
  return isApi ? errorResponse(fault) : page(500, 'Something went wrong', `An unexpected error occurred; it was logged with request id ${requestId}.`)
}
