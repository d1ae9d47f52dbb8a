/**
 * The original request, as the reverse proxy forwards it to the check (SPEC): Traefik, Caddy,
 * HAProxy and Envoy in X-Forwarded-Method/-Proto/-Host/-Uri, nginx's auth_request in
 * X-Original-URL and X-Original-Method. A missing or malformed header is 400, never an allow.
 */
import { InvalidRequest } from '../lib/errors'
import { parseHostHeader } from './hosts'
import { normaliseTarget, type RequestTarget } from './path'

export interface SiteUrl {
  proto: 'http' | 'https'
  /** Lower case, no port. */
  host: string
  /** `https://photos.example.com` (a default port left out): the site's resource URI and JWT audience. */
  origin: string
  /** The original URL, its target as sent. */
  url: string
  /** Normalised; undefined when it cannot be done unambiguously (then denied). */
  target: RequestTarget | undefined
}

export interface ForwardedRequest extends SiteUrl {
  method: string
}

const METHOD = /^[A-Z]{1,20}$/
/** What a request target may hold at all (visible ASCII, starting with `/`); finer checks are path.ts's. */
const TARGET = /^\/[\x21-\x7e]{0,8191}$/

function siteUrl(proto: string, rawHost: string | null, rawTarget: string): SiteUrl | undefined {
  if (proto !== 'http' && proto !== 'https') return undefined
  const host = parseHostHeader(rawHost)
  if (!host || !TARGET.test(rawTarget)) return undefined
  const port = host.port === '' || host.port === (proto === 'https' ? '443' : '80') ? '' : `:${host.port}`
  const origin = `${proto}://${host.host}${port}`
  return { proto, host: host.host, origin, url: origin + rawTarget, target: normaliseTarget(rawTarget) }
}

/** An absolute http(s) URL, read without resolving anything (`rd`, X-Original-URL): undefined when malformed. */
export function parseSiteUrl(raw: string | null): SiteUrl | undefined {
  const m = raw === null ? null : /^(https?):\/\/([^/?#\\@]+)(\/[^#]*|\?[^#]*)?$/i.exec(raw)
  if (!m) return undefined
  const rest = m[3] ?? '/'
  return siteUrl(m[1]!.toLowerCase(), m[2]!, rest.startsWith('?') ? '/' + rest : rest)
}

function method(raw: string | null, fallback?: string): string {
  const value = raw ?? fallback
  if (value === undefined || !METHOD.test(value)) throw new InvalidRequest(raw === null ? 'the forwarded method is missing' : 'the forwarded method is malformed')
  return value
}

/** Traefik forwardAuth, Caddy forward_auth, HAProxy, Envoy. */
export function fromForwardAuth(headers: Headers): ForwardedRequest {
  const proto = headers.get('x-forwarded-proto')
  const host = headers.get('x-forwarded-host')
  const uri = headers.get('x-forwarded-uri')
  const m = method(headers.get('x-forwarded-method'))
  if (proto === null || host === null || uri === null) throw new InvalidRequest('X-Forwarded-Method, X-Forwarded-Proto, X-Forwarded-Host and X-Forwarded-Uri are required')
  const url = siteUrl(proto.toLowerCase(), host, uri)
  if (!url) throw new InvalidRequest('X-Forwarded-Proto, X-Forwarded-Host or X-Forwarded-Uri is malformed')
  return { ...url, method: m }
}

/** nginx auth_request: X-Original-URL (required) and X-Original-Method (GET when absent). */
export function fromAuthRequest(headers: Headers): ForwardedRequest {
  const raw = headers.get('x-original-url')
  if (raw === null) throw new InvalidRequest('X-Original-URL is required')
  const url = parseSiteUrl(raw)
  if (!url) throw new InvalidRequest('X-Original-URL is malformed')
  return { ...url, method: method(headers.get('x-original-method'), 'GET') }
}
