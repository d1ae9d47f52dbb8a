import { InvalidRequest } from '../../lib/errors'
import { mediaType, parseFormText, parseJsonText, readBodyText } from '../../lib/http'

/**
 * The token, revocation and introspection endpoints take JSON (the seed) and form bodies (RFC
 * 6749, what client libraries send). A parameter sent without a value is treated as omitted
 * (RFC 6749 §3.2): Dovecot, for one, sends `client_id=&client_secret=` beside HTTP Basic.
 */
export async function parseTokenBody({ request }: { request: Request }): Promise<Record<string, unknown>> {
  return readBefore.get(request) ?? readTokenBody(request)
}

/**
 * Bodies the token endpoint's fast path (./fast-path.ts) read before handing the request on to the
 * router: a body is read once, so the route's parser takes these parameters as read.
 */
const readBefore = new WeakMap<Request, Record<string, unknown>>()

export function keepParsed(request: Request, params: Record<string, unknown>): void {
  readBefore.set(request, params)
}

/** The body's parameters, or the ApiError that refuses it (its Content-Type, size, encoding or syntax); `type`: its media type, when known. */
export async function readTokenBody(request: Request, type = mediaType(request)): Promise<Record<string, unknown>> {
  if (type !== 'application/json' && type !== 'application/x-www-form-urlencoded')
    throw new InvalidRequest('Content-Type must be application/x-www-form-urlencoded or application/json')
  const text = await readBodyText(request)
  if (type === 'application/x-www-form-urlencoded') return parseFormText(text, true)
  const value = parseJsonText(text)
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InvalidRequest('request body must be a JSON object')
  return withoutEmpty(value as Record<string, unknown>)
}

function withoutEmpty(params: Record<string, unknown>): Record<string, unknown> {
  for (const key of Object.keys(params)) if (params[key] === '') delete params[key]
  return params
}
