import { InvalidRequest } from '../../lib/errors'
import { mediaType, parseFormText, parseJsonText, readBodyText } from '../../lib/http'

/** The token endpoint takes JSON (the seed) and form bodies (RFC 6749, what client libraries send). */
export async function parseTokenBody({ request }: { request: Request }): Promise<Record<string, unknown>> {
  const type = mediaType(request)
  if (type !== 'application/json' && type !== 'application/x-www-form-urlencoded')
    throw new InvalidRequest('Content-Type must be application/x-www-form-urlencoded or application/json')
  const text = await readBodyText(request)
  if (type === 'application/x-www-form-urlencoded') return parseFormText(text)
  const value = parseJsonText(text)
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InvalidRequest('request body must be a JSON object')
  return value as Record<string, unknown>
}
