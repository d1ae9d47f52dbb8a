import { ApiError, InvalidRequest, RequestTooLarge } from './errors'

/** SPEC "Hostile input": no body is read past its limit — 1 MiB on `/api/*`, 64 KiB on page forms. */
export const MAX_BODY_BYTES = 1_048_576
export const MAX_FORM_BYTES = 65_536
/** JSON nested deeper than this is refused before any parsing or validation. */
export const MAX_JSON_DEPTH = 64

/** `/api/*` is called from browsers of any origin with a Bearer header, never with cookies. */
export const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'ETag, WWW-Authenticate',
} as const

/** Every response says what it is and forbids sniffing (SPEC "Hostile input"). */
export const NOSNIFF = { 'x-content-type-options': 'nosniff' } as const

export const CORS_PREFLIGHT_HEADERS = {
  ...CORS_HEADERS,
  ...NOSNIFF,
  'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS',
  'access-control-allow-headers': 'Authorization, Content-Type, If-Match, If-None-Match, Last-Event-ID',
  'access-control-max-age': '86400',
} as const

const JSON_TYPE = 'application/json'

// One Headers instance shared by every API answer: Response copies it natively, about three
// times faster than building headers from an object on each request.
const API_HEADERS = new Headers({ 'content-type': JSON_TYPE, 'cache-control': 'no-store', ...CORS_HEADERS, ...NOSNIFF })

/** The API headers plus fixed extras, built once for a route that always sends them. */
export function apiHeaders(extra: Record<string, string>): Headers {
  const headers = new Headers(API_HEADERS)
  for (const name in extra) headers.set(name, extra[name]!)
  return headers
}

/** A JSON answer of the API, from an already serialized body. */
export function jsonText(body: string, status = 200, extra?: Record<string, string> | Headers): Response {
  if (!extra) return new Response(body, { status, headers: API_HEADERS })
  if (extra instanceof Headers) return new Response(body, { status, headers: extra })
  const headers = new Headers(API_HEADERS)
  for (const name in extra) headers.set(name, extra[name]!)
  return new Response(body, { status, headers })
}

export function json(body: unknown, status = 200, extra?: Record<string, string> | Headers): Response {
  return jsonText(JSON.stringify(body), status, extra)
}

export function errorResponse(error: ApiError): Response {
  const extra = Object.keys(error.headers).length ? error.headers : undefined
  return json({ error: error.error, error_description: error.description }, error.status, extra)
}

/** Media type without parameters, lower-cased: `application/json; charset=utf-8` → `application/json`. */
export function mediaType(request: Request): string {
  const type = request.headers.get('content-type')
  if (type === null) return ''
  // What clients nearly always send, as it is: nothing to cut or lower-case (a device poll's every 5 s).
  if (type === FORM_TYPE || type === JSON_TYPE) return type
  return type.split(';', 1)[0]!.trim().toLowerCase()
}

const FORM_TYPE = 'application/x-www-form-urlencoded'

const utf8 = new TextDecoder('utf-8', { fatal: true })

/** What a route answers for a body past its limit: JSON for the API, a page for forms. */
export interface BodyLimit {
  bytes: number
  tooLarge: () => Error
}

export const API_BODY_LIMIT: BodyLimit = {
  bytes: MAX_BODY_BYTES,
  tooLarge: () => new RequestTooLarge('request body is larger than 1 MiB'),
}

/** A body without Content-Length (chunked): read until it ends or passes the limit, then stop. */
async function readCapped(body: ReadableStream<Uint8Array> | null, limit: BodyLimit): Promise<Uint8Array> {
  const chunks: Uint8Array[] = []
  let size = 0
  if (body) {
    for await (const chunk of body) {
      size += chunk.byteLength
      if (size > limit.bytes) throw limit.tooLarge() // leaving the loop cancels the stream
      chunks.push(chunk)
    }
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
}

/**
 * The body's bytes, refused past the limit as readBodyText refuses them (the avatar upload's
 * multipart body). Not an async function: readBodyText awaits what this returns, and each async
 * layer a device poll's body went through cost it ~0.5 µs (issue 38 "Speed").
 */
export function readBodyBytes(request: Request, limit: BodyLimit): Promise<Uint8Array> {
  const declared = request.headers.get('content-length')
  if (declared === null) return readCapped(request.body, limit)
  // HTTP framing holds the body to its declared length, so the fast path is safe.
  if (!(Number(declared) <= limit.bytes)) return Promise.reject(limit.tooLarge())
  return request.bytes()
}

/**
 * Reads the body as text, refusing more than the limit: at once when Content-Length says so,
 * otherwise as soon as the stream passes it — a chunked body is never read further.
 */
export async function readBodyText(request: Request, limit: BodyLimit = API_BODY_LIMIT): Promise<string> {
  return textOf(await readBodyBytes(request, limit))
}

/** A body's bytes as text: refused unless they are UTF-8. */
export function textOf(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes)
  } catch {
    throw new InvalidRequest('request body is not valid UTF-8')
  }
}

/**
 * Whether JSON text nests arrays and objects deeper than `max`: one linear pass over the text,
 * skipping strings, before JSON.parse or any validator walks it (deep nesting made Elysia's
 * development-mode validation quadratic and JSON.parse overflow the stack).
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      // a string: skip to its closing quote, past escaped characters
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i)
        if (d === 0x5c) i++
        else if (d === 0x22) break
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true
    } else if (c === 0x5d || c === 0x7d) {
      depth--
    }
  }
  return false
}

export function parseJsonText(text: string): unknown {
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) throw new InvalidRequest(`JSON nests deeper than ${MAX_JSON_DEPTH} levels`)
  try {
    return JSON.parse(text)
  } catch {
    throw new InvalidRequest('request body is not valid JSON')
  }
}

/**
 * RFC 6749 §3.2: parameters must not be repeated; a repeated one is invalid_request (the first
 * repeated). `withoutEmpty`: a parameter sent without a value is left out, as omitted (RFC 6749
 * §3.2) — and still counts as sent when it comes again.
 *
 * Parsed as URLSearchParams parses (the WHATWG application/x-www-form-urlencoded parser), by
 * hand: a device's poll is parsed every 5 s per device, and URLSearchParams with a callback per
 * parameter cost it ~1.1 µs against ~0.45 (issue 38 "Speed"). A name or value whose escapes
 * decodeURIComponent refuses (a malformed `%`, bytes that are not UTF-8), and which the WHATWG
 * parser keeps or replaces leniently, sends the whole body to URLSearchParams itself.
 */
export function parseFormText(text: string, withoutEmpty = false): Record<string, string> {
  const form = new FormParameters(withoutEmpty)
  const end = text.length
  // URLSearchParams drops one leading "?" from a string it is given.
  let start = text.charCodeAt(0) === QUESTION ? 1 : 0
  // The first "=" at or after `start` (past the end when there is none): each is looked for once,
  // so a body of a million names without "=" is read in one pass, not one pass per name.
  let eq = -1
  while (start <= end) {
    let stop = text.indexOf('&', start)
    if (stop < 0) stop = end
    if (stop > start) {
      if (eq < start) {
        eq = text.indexOf('=', start)
        if (eq < 0) eq = end + 1
      }
      const split = eq < stop
      const name = formDecoded(text.slice(start, split ? eq : stop))
      const value = split ? formDecoded(text.slice(eq + 1, stop)) : ''
      if (name === undefined || value === undefined) return parseFormLeniently(text, withoutEmpty)
      form.add(name, value)
    }
    start = stop + 1
  }
  return form.values
}

const QUESTION = 63

/**
 * The parameters of a form as they are added, in linear time: a repeated one (RFC 6749 §3.2)
 * throws invalid_request, empty ones are left out if asked (and still count as sent), and a
 * parameter named `__proto__` is kept as any other, not taken for the object's prototype.
 */
class FormParameters {
  readonly values: Record<string, string> = {}
  private empty: Set<string> | undefined

  constructor(private readonly withoutEmpty: boolean) {}

  add(name: string, value: string): void {
    if (Object.hasOwn(this.values, name) || this.empty?.has(name)) throw new InvalidRequest(`parameter "${name}" is repeated`)
    if (value === '' && this.withoutEmpty) (this.empty ??= new Set()).add(name)
    else setField(this.values, name, value)
  }
}

/** `fields[name] = value`, a name `__proto__` included: an own field like any other, never the object's prototype. */
export function setField<T>(fields: Record<string, T>, name: string, value: T): void {
  if (name === '__proto__') Object.defineProperty(fields, name, { value, enumerable: true, writable: true, configurable: true })
  else fields[name] = value
}

/** `+` as a space, then percent-escapes decoded; undefined where decodeURIComponent refuses them. */
function formDecoded(part: string): string | undefined {
  if (part.includes('+')) part = part.replaceAll('+', ' ')
  if (!part.includes('%')) return part
  try {
    return decodeURIComponent(part)
  } catch {
    return undefined
  }
}

/** parseFormText through URLSearchParams: malformed escapes kept, bytes that are not UTF-8 replaced, as the WHATWG parser does. */
function parseFormLeniently(text: string, withoutEmpty: boolean): Record<string, string> {
  const form = new FormParameters(withoutEmpty)
  let repeated: unknown
  new URLSearchParams(text).forEach((value, name) => {
    if (repeated !== undefined) return
    try {
      form.add(name, value)
    } catch (error) {
      repeated = error
    }
  })
  if (repeated !== undefined) throw repeated
  return form.values
}

/** Reads a JSON object body: the only shape `/api/settings` accepts. */
export async function readJsonObject(request: Request): Promise<Record<string, unknown>> {
  const type = mediaType(request)
  if (type !== JSON_TYPE) throw new InvalidRequest('Content-Type must be application/json')
  const value = parseJsonText(await readBodyText(request))
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InvalidRequest('request body must be a JSON object')
  return value as Record<string, unknown>
}
