import { type ApiError, InvalidRequest, PageError, RequestTooLarge } from '../lib/errors'
import { MAX_BODY_BYTES, MAX_FORM_BYTES, errorResponse } from '../lib/http'
import { pageErrorResponse } from '../views/error-page'
import { AVATAR_FORM_MAX_BYTES, AVATAR_UPLOAD_PATH, avatarTooLarge } from '../accounts/avatar'

/** A reg-name, IPv4 address or bracketed IPv6 address, with an optional port (RFC 9110 §7.2). */
const HOST = /^(?:[A-Za-z0-9_~-][A-Za-z0-9._~-]{0,252}|\[[0-9A-Fa-f:.]{2,45}\])(?::(\d{1,5}))?$/

const SLASH = 47

function validHost(host: string): boolean {
  const match = HOST.exec(host)
  return match !== null && (match[1] === undefined || Number(match[1]) <= 65535)
}

/**
 * The path of a request URL (`http://host/path?query` → `/path`), whatever the host is. Bun
 * hands a request that came without a Host (HTTP/1.0, or an empty one) its bare target
 * (`/path?query`): that is its path too.
 */
export function pathOf(url: string): string {
  const start = url.charCodeAt(0) === SLASH ? 0 : url.indexOf('/', url.indexOf('//') + 2)
  if (start < 0) return '/'
  const q = url.indexOf('?', start)
  return q < 0 ? url.slice(start) : url.slice(start, q)
}

/** API paths answer errors as JSON; everything else is for people and answers pages. */
export function isApiPath(path: string): boolean {
  return path.startsWith('/api/') || path.startsWith('/.well-known/')
}

/** Paths that answer JSON to everyone, browsers too: the API, discovery, health and the API's description. */
const JSON_ONLY = new Set(['/healthz', '/openapi.json'])

/**
 * A person's browser asking for a page: not a JSON path, and `Accept` names `text/html` (a
 * navigation sends `text/html,application/xhtml+xml,…`; fetch and curl send `*\/*`). Such a
 * request meets an unknown page, a wrong method or a fault as an HTML page (SPEC "Every screen");
 * everyone else keeps the JSON error of SPEC "Errors".
 */
export function wantsPage(request: Request, path: string): boolean {
  if (isApiPath(path) || JSON_ONLY.has(path)) return false
  const accept = request.headers.get('accept')
  return accept !== null && /(?:^|,)\s*text\/html\s*(?:,|$|;(?!\s*q\s*=\s*0(?:\.0*)?\s*(?:,|$)))/i.test(accept)
}

/** The same refusal as JSON for the API or as a page for people. */
function refuse(path: string, api: ApiError, page: PageError): Response {
  return isApiPath(path) ? errorResponse(api) : pageErrorResponse(page)
}

/**
 * Runs before routing, for every request (SPEC "Hostile input"): a `Host` that is not a
 * syntactically valid host[:port] is 400, and a body declared larger than its route's limit
 * (1 MiB on the API, 64 KiB elsewhere) is 413 before anything reads it. Which route answers
 * never depends on Host: the app is built with `standardHostname: false`, so a short Host
 * cannot shift the path Elysia routes on.
 */
export function createRequestGuard() {
  // Nearly every request repeats the previous one's Host: check each new value once.
  let lastValidHost = ''
  /** `path`: the request's, when the caller has it (pathOf(request.url)). */
  return function guardRequest({ request }: { request: Request }, known?: string): Response | undefined {
    // A bare target as the URL (no Host): the server gives such requests ISSUER's origin before
    // they get here; anything else that arrives so would be routed on a shifted path: 400.
    if (request.url.charCodeAt(0) === SLASH)
      return refuse(
        pathOf(request.url),
        new InvalidRequest('the request has no Host header'),
        new PageError(400, 'error.noHost'),
      )
    const host = request.headers.get('host')
    if (host !== null && host !== lastValidHost) {
      if (!validHost(host))
        return refuse(
          pathOf(request.url),
          new InvalidRequest('the Host header is not a valid host[:port]'),
          new PageError(400, 'error.badHost'),
        )
      lastValidHost = host
    }
    if (request.method === 'GET') return undefined
    const declared = request.headers.get('content-length')
    if (declared === null) return undefined
    const path = known ?? pathOf(request.url)
    // The avatar upload is the one page form that carries a file (1 MiB of picture).
    const avatar = path === AVATAR_UPLOAD_PATH
    const limit = isApiPath(path) ? MAX_BODY_BYTES : avatar ? AVATAR_FORM_MAX_BYTES : MAX_FORM_BYTES
    if (Number(declared) <= limit) return undefined
    return refuse(
      path,
      new RequestTooLarge('request body is larger than 1 MiB'),
      avatar ? avatarTooLarge() : new PageError(413, 'error.requestTooLarge'),
    )
  }
}
