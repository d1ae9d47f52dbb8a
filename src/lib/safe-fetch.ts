import { lookup as dnsLookup } from 'node:dns'
import http from 'node:http'
import https from 'node:https'
import { isIP } from 'node:net'
import { isPublicAddress } from './public-address'

/** Why a document could not be fetched: a sentence for the operator's log, never for the page (it names addresses, ports, errnos). */
export class FetchRefused extends Error {}

export interface SafeFetchPolicy {
  /** Hosts (`host` or `host:port`, lower case) that may be plain http and on any address. */
  allowHosts: readonly string[]
  /** Extra trusted CA certificates (PEM), for tests; the binary reads NODE_EXTRA_CA_CERTS. */
  ca?: string
  /** The resolver (node:dns by default): tests give hosts that resolve to private addresses. */
  lookup?: typeof dnsLookup
  timeoutMs?: number
  maxBytes?: number
}

export interface Fetched {
  body: string
  cacheControl: string | null
  /** Set with `extra.anyStatus` (else always 200, or 2xx for a POST). */
  status: number
  contentType: string | null
}

/** A relying party's requests (an upstream provider's token endpoint, its userinfo, GitHub's API). */
export interface FetchExtra {
  /** Sent as they are (Authorization, Accept): they replace the defaults of the same name. */
  headers?: Record<string, string>
  /** Answer any non-redirect status (an OAuth error body is JSON the caller reads). */
  anyStatus?: boolean
}

/**
 * A GET for a document named by someone else (a client ID metadata document): only https, no
 * redirects, 5 s in all, 64 KiB at most, and only public addresses — checked on every address
 * the name resolves to and again on the address the socket connected to, so a name that
 * re-resolves to a private address between the two (DNS rebinding) is still refused. An allowed
 * host may be plain http and private (tests, intranets).
 */
export function safeFetch(url: URL, policy: SafeFetchPolicy, post?: { type: string; body: string }, extra: FetchExtra = {}): Promise<Fetched> {
  const allowed = policy.allowHosts.includes(url.host.toLowerCase()) || policy.allowHosts.includes(url.hostname.toLowerCase())
  if (url.protocol !== 'https:' && !(allowed && url.protocol === 'http:')) return Promise.reject(new FetchRefused('only https:// URLs are fetched'))
  if (url.username || url.password) return Promise.reject(new FetchRefused('the URL must not carry credentials'))
  const literal = url.hostname.replace(/^\[|\]$/g, '')
  if (isIP(literal) && !allowed && !isPublicAddress(literal)) return Promise.reject(new FetchRefused(`${url.hostname} is not a public address`))
  const maxBytes = policy.maxBytes ?? 65_536
  const resolve = policy.lookup ?? dnsLookup
  return new Promise<Fetched>((fulfil, reject) => {
    let settled = false
    const fail = (reason: string) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      request.destroy()
      reject(new FetchRefused(reason))
    }
    const lookup = (hostname: string, options: object, callback: (error: Error | null, address: string | { address: string; family: number }[], family?: number) => void) =>
      resolve(hostname, { ...options, all: true }, (error, addresses) => {
        if (error) return callback(error, [])
        const list = addresses as { address: string; family: number }[]
        if (!allowed && !list.every((a) => isPublicAddress(a.address))) {
          callback(new FetchRefused(`${hostname} resolves to an address that is not public`), [])
          return
        }
        callback(null, list)
      })
    // `post`: a form POST under the same rules (a back-channel logout to a dynamically registered app); any 2xx answers it.
    const options = {
      method: post ? 'POST' : 'GET',
      headers: {
        ...(post ? { 'content-type': post.type, 'content-length': String(Buffer.byteLength(post.body)), 'user-agent': 'Latchkey' } : { accept: 'application/json', 'user-agent': 'Latchkey' }),
        ...extra.headers,
      },
      lookup,
      // A fresh connection each time: a pooled socket would skip the resolver's checks (and
      // could have been opened under another policy).
      agent: false,
      ...(policy.ca ? { ca: policy.ca } : {}),
    }
    const request = (url.protocol === 'https:' ? https : http).request(url, options, (response) => {
      const status = response.statusCode ?? 0
      if (status >= 300 && status < 400) return fail(`answered ${status}: redirects are not followed`)
      if (!extra.anyStatus && (post ? status < 200 || status > 299 : status !== 200)) return fail(`answered ${status}`)
      const declared = Number(response.headers['content-length'] ?? 0)
      if (declared > maxBytes) return fail(`is larger than ${maxBytes} bytes`)
      const chunks: Buffer[] = []
      let size = 0
      response.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size > maxBytes) return fail(`is larger than ${maxBytes} bytes`)
        chunks.push(chunk)
      })
      response.on('end', () => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        const cacheControl = response.headers['cache-control']
        const contentType = response.headers['content-type']
        fulfil({ body: Buffer.concat(chunks).toString('utf8'), cacheControl: typeof cacheControl === 'string' ? cacheControl : null, status, contentType: contentType ?? null })
      })
      response.on('error', (error) => fail(error.message))
    })
    // The address actually connected to, whatever the resolver said before.
    request.on('socket', (socket) => {
      socket.once('connect', () => {
        if (!allowed && !isPublicAddress(socket.remoteAddress ?? '')) fail(`connected to ${socket.remoteAddress}, which is not a public address`)
      })
    })
    request.on('error', (error) => fail(error instanceof FetchRefused ? error.message : `could not be fetched (${error.message})`))
    const timer = setTimeout(() => fail(`did not answer within ${(policy.timeoutMs ?? 5000) / 1000} s`), policy.timeoutMs ?? 5000)
    request.end(post?.body)
  })
}
