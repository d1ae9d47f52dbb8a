/**
 * The client address of a request, for rate limits and the access log (SPEC `TRUSTED_PROXIES`):
 * the socket's peer, unless that peer is a trusted proxy — then the right-most address in
 * X-Forwarded-For that is not itself a trusted proxy (the left-most entries are whatever the
 * client chose to send, so they are never believed).
 */

/** An IPv4 or IPv6 address as 16 bytes (IPv4 as ::ffff:a.b.c.d). */
type Ip = Uint8Array

interface Cidr {
  ip: Ip
  bits: number
}

export type TrustedProxies = readonly Cidr[]

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/

function parseIpv4(text: string, out: Ip, at: number): boolean {
  const m = IPV4.exec(text)
  if (!m) return false
  for (let i = 0; i < 4; i++) {
    const n = Number(m[i + 1])
    if (n > 255 || (m[i + 1]!.length > 1 && m[i + 1]![0] === '0')) return false
    out[at + i] = n
  }
  return true
}

function parseIpv6(text: string): Ip | undefined {
  const out = new Uint8Array(16)
  const halves = text.split('::')
  if (halves.length > 2) return undefined
  const groups = (part: string) => (part === '' ? [] : part.split(':'))
  const head = groups(halves[0]!)
  const tail = halves.length === 2 ? groups(halves[1]!) : []
  const words: number[] = []
  const read = (list: string[], last: boolean): boolean => {
    for (let i = 0; i < list.length; i++) {
      const g = list[i]!
      if (last && i === list.length - 1 && g.includes('.')) {
        const v4 = new Uint8Array(4)
        if (!parseIpv4(g, v4, 0)) return false
        words.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!)
        continue
      }
      if (!/^[0-9A-Fa-f]{1,4}$/.test(g)) return false
      words.push(parseInt(g, 16))
    }
    return true
  }
  if (!read(head, halves.length === 1)) return undefined
  const headWords = words.length
  if (!read(tail, true)) return undefined
  const missing = 8 - words.length
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined
  const all = [...words.slice(0, headWords), ...new Array(halves.length === 2 ? missing : 0).fill(0), ...words.slice(headWords)]
  all.forEach((w, i) => {
    out[i * 2] = w >> 8
    out[i * 2 + 1] = w & 0xff
  })
  return out
}

/**
 * Parses an address as proxies write it: plain, `[v6]`, `[v6]:port`, `v4:port`, or with a zone.
 * Peers and forwarded hops repeat (a proxy asks for every request): each text is parsed once
 * (bounded), and the bytes returned are shared — never written to.
 */
export function parseIp(raw: string): Ip | undefined {
  const known = parsedIps.get(raw)
  if (known !== undefined) return known ?? undefined
  const ip = parseIpText(raw)
  if (parsedIps.size >= 4096) parsedIps.clear()
  parsedIps.set(raw, ip ?? null)
  return ip
}

const parsedIps = new Map<string, Ip | null>()

function parseIpText(raw: string): Ip | undefined {
  let text = raw.trim()
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text)
  if (bracketed) text = bracketed[1]!
  else if (/^[\d.]+:\d+$/.test(text)) text = text.slice(0, text.indexOf(':'))
  text = text.replace(/%.*$/, '')
  const v4 = new Uint8Array(16)
  if (parseIpv4(text, v4, 12)) {
    v4[10] = v4[11] = 0xff
    return v4
  }
  return text.includes(':') ? parseIpv6(text) : undefined
}

function isMappedV4(ip: Ip): boolean {
  for (let i = 0; i < 10; i++) if (ip[i] !== 0) return false
  return ip[10] === 0xff && ip[11] === 0xff
}

/** The usual text form: dotted IPv4 for IPv4 (mapped or not), compressed hex for IPv6. */
export function formatIp(ip: Ip): string {
  if (isMappedV4(ip)) return `${ip[12]}.${ip[13]}.${ip[14]}.${ip[15]}`
  const words = Array.from({ length: 8 }, (_, i) => ((ip[i * 2]! << 8) | ip[i * 2 + 1]!).toString(16))
  // compress the longest run of zero words (RFC 5952 §4.2)
  let best = -1
  let bestLen = 1
  for (let i = 0; i < 8; ) {
    let j = i
    while (j < 8 && words[j] === '0') j++
    if (j - i > bestLen) [best, bestLen] = [i, j - i]
    i = j === i ? i + 1 : j
  }
  if (best < 0) return words.join(':')
  return `${words.slice(0, best).join(':')}::${words.slice(best + bestLen).join(':')}`
}

/** `TRUSTED_PROXIES`: comma-separated addresses and CIDR blocks; throws naming a bad entry. */
export function parseTrustedProxies(raw: string): TrustedProxies {
  const out: Cidr[] = []
  for (const entry of raw.split(',').map((s) => s.trim()).filter(Boolean)) {
    const [address, prefix] = entry.split('/') as [string, string | undefined]
    const ip = parseIp(address)
    const max = ip && isMappedV4(ip) && !address.includes(':') ? 32 : 128
    const bits = prefix === undefined ? max : /^\d{1,3}$/.test(prefix) ? Number(prefix) : NaN
    if (!ip || !(bits >= 0 && bits <= max)) throw new Error(`"${entry}" is not an IP address or CIDR block`)
    out.push({ ip, bits: max === 32 ? bits + 96 : bits })
  }
  return out
}

function inBlock(ip: Ip, block: Cidr): boolean {
  const whole = block.bits >> 3
  for (let i = 0; i < whole; i++) if (ip[i] !== block.ip[i]) return false
  const rest = block.bits & 7
  if (rest === 0) return true
  const mask = (0xff << (8 - rest)) & 0xff
  return (ip[whole]! & mask) === (block.ip[whole]! & mask)
}

function trusted(ip: Ip, proxies: TrustedProxies): boolean {
  return proxies.some((block) => inBlock(ip, block))
}

/** Whether an address lies in one of these blocks (forward-auth: the endpoints' callers, a rule's networks). */
export function addressIn(address: string | undefined, blocks: TrustedProxies): boolean {
  const ip = address === undefined ? undefined : parseIp(address)
  return ip !== undefined && trusted(ip, blocks)
}

/**
 * What the address is recorded as when the server could not learn it (no socket peer): kept as
 * is in logs, the database and JSON; pages and mails say so in words (`isKnownAddress`).
 */
export const UNKNOWN_ADDRESS = 'unknown'

/** Whether a recorded address is one (not missing, not `UNKNOWN_ADDRESS`), to show it or say it is not known. */
export const isKnownAddress = (address: string | null | undefined): address is string => !!address && address !== UNKNOWN_ADDRESS

/** The client address: the peer, or (behind trusted proxies) the nearest untrusted forwarded hop. */
export function resolveClientAddress(peer: string | undefined, forwardedFor: string | null, proxies: TrustedProxies): string {
  const peerText = peer ?? UNKNOWN_ADDRESS
  if (proxies.length === 0 || !forwardedFor) return peerText
  // A proxy sends the same peer and X-Forwarded-For again and again (a forward-auth check for every
  // request to every protected app): the last answer is kept, the hops not split and formatted again.
  if (peer === resolvedPeer && forwardedFor === resolvedFor && proxies === resolvedProxies) return resolvedClient
  resolvedClient = resolveForwarded(peer, forwardedFor, proxies)
  resolvedPeer = peer
  resolvedFor = forwardedFor
  resolvedProxies = proxies
  return resolvedClient
}

let resolvedPeer: string | undefined
let resolvedFor: string | null = null
let resolvedProxies: TrustedProxies | undefined
let resolvedClient = ''

function resolveForwarded(peer: string | undefined, forwardedFor: string, proxies: TrustedProxies): string {
  const peerText = peer ?? 'unknown'
  const peerIp = peer === undefined ? undefined : parseIp(peer)
  if (!peerIp || !trusted(peerIp, proxies)) return peerText
  let nearest = formatIp(peerIp)
  const hops = forwardedFor.split(',')
  for (let i = hops.length - 1; i >= 0; i--) {
    const ip = parseIp(hops[i]!)
    if (!ip) return nearest
    nearest = formatIp(ip)
    if (!trusted(ip, proxies)) return nearest
  }
  return nearest
}

/** What a per-address limit counts: an IPv4 address, or an IPv6 /64 (one subscriber's network). */
export function rateLimitKey(address: string): string {
  const ip = parseIp(address)
  if (!ip || isMappedV4(ip)) return address
  const net = new Uint8Array(16)
  net.set(ip.subarray(0, 8))
  return formatIp(net) + '/64'
}

/** Peer addresses of in-process requests (tests); a served request asks the server instead. */
export const peerAddresses = new WeakMap<Request, string>()

let serverPeer: ((request: Request) => string | undefined) | undefined

/** The server tells how to find a request's socket address; asked only when an address is needed. */
export function setPeerResolver(resolve: (request: Request) => string | undefined): void {
  serverPeer = resolve
}

/** The last request the server was asked the peer of, and its answer. */
let askedRequest: Request | undefined
let askedPeer: string | undefined

/**
 * The socket peer of a request (a proxy, when one is in front). Asked of the server once per
 * request (Bun's requestIP makes an object each time, ~1 µs): the last answer is kept for the
 * access log's line, which follows a request answered without a promise at once (one slot, not a
 * WeakMap entry per request: a check is made for every request to every protected app).
 */
export function peerAddressOf(request: Request): string | undefined {
  if (request === askedRequest) return askedPeer
  const known = peerAddresses.get(request)
  if (known !== undefined || !serverPeer) return known
  askedPeer = serverPeer(request)
  askedRequest = request
  return askedPeer
}

/** The client address of a request: for the access log and the sign-in limits. */
export function clientAddressOf(request: Request, proxies: TrustedProxies): string {
  return clientAddressFrom(peerAddressOf(request), request, proxies)
}

/** The same, when the socket's peer address is known already (the server, for its access log). */
export function clientAddressFrom(peer: string | undefined, request: Request, proxies: TrustedProxies): string {
  if (proxies.length === 0) return peer ?? UNKNOWN_ADDRESS
  return resolveClientAddress(peer, request.headers.get('x-forwarded-for'), proxies)
}
