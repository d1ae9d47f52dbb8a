/**
 * Addresses a server-side fetch must never reach (SPEC "Client ID Metadata Documents"): this host,
 * private networks, link-local (cloud metadata at 169.254.169.254 among them), carrier-grade NAT
 * (Alibaba's metadata at 100.100.100.200), documentation, multicast and reserved ranges — and
 * every IPv6 spelling that carries an IPv4 address, whatever that address is, since the host
 * (or a NAT64 gateway, a 6to4 or Teredo relay) may turn it into one of the others.
 */
const BLOCKED_V4: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
]

/**
 * IPv6: only global unicast (2000::/3, RFC 4291 §2.4) is public, which by itself leaves out ::/96
 * (IPv4-compatible, :: and ::1 among them), ::ffff:0:0/96 (mapped), ::ffff:0:0:0/96 (translated,
 * RFC 2765), 64:ff9b::/96 and 64:ff9b:1::/48 (NAT64, RFC 6052/8215), 100::/64 (discard), fc00::/7
 * (unique local), fe80::/10 and fec0::/10 (link/site-local) and ff00::/8 (multicast). Inside
 * 2000::/3 these are not public either (IANA special-purpose registry):
 */
const BLOCKED_V6_GLOBAL: ReadonlyArray<readonly [string, number]> = [
  ['2001::', 23], // IETF protocol assignments: Teredo 2001::/32 (embeds an IPv4 address), benchmarking, ORCHID
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4 (embeds an IPv4 address)
  ['3fff::', 20], // documentation (RFC 9637)
]

/** Four bytes of a dotted quad (decimal, no leading zeros beyond "0"), or undefined. */
function parseIpv4(text: string): number[] | undefined {
  const parts = text.split('.')
  if (parts.length !== 4) return undefined
  const bytes = parts.map((p) => (/^(0|[1-9]\d{0,2})$/.test(p) ? Number(p) : 256))
  return bytes.every((b) => b <= 255) ? bytes : undefined
}

/**
 * Sixteen bytes of an IPv6 address in any of its spellings (RFC 4291 §2.2, RFC 4007 §11): upper or
 * lower case, `::` anywhere once, a dotted quad as its last 32 bits, a zone id (`%eth0`), brackets.
 */
export function parseIpv6(text: string): number[] | undefined {
  let s = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text
  const zone = s.indexOf('%')
  if (zone !== -1) {
    if (zone === s.length - 1) return undefined
    s = s.slice(0, zone)
  }
  s = s.toLowerCase()
  const halves = s.split('::')
  if (halves.length > 2) return undefined
  const groups = (half: string): number[] | undefined => {
    if (half === '') return []
    const out: number[] = []
    const parts = half.split(':')
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!
      if (i === parts.length - 1 && part.includes('.')) {
        const v4 = parseIpv4(part)
        if (!v4) return undefined
        out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!)
      } else if (/^[0-9a-f]{1,4}$/.test(part)) out.push(parseInt(part, 16))
      else return undefined
    }
    return out
  }
  const head = groups(halves[0]!)
  const tail = halves.length === 2 ? groups(halves[1]!) : []
  if (!head || !tail) return undefined
  // A dotted quad may only end the address.
  if (halves.length === 2 && halves[0]!.includes('.')) return undefined
  let words: number[]
  if (halves.length === 2) {
    if (head.length + tail.length > 7) return undefined
    words = [...head, ...Array<number>(8 - head.length - tail.length).fill(0), ...tail]
  } else {
    if (head.length !== 8) return undefined
    words = head
  }
  return words.flatMap((w) => [w >> 8, w & 255])
}

function inPrefix(bytes: readonly number[], net: readonly number[], prefix: number): boolean {
  for (let bit = 0; bit < prefix; bit += 8) {
    const take = Math.min(8, prefix - bit)
    const mask = (0xff << (8 - take)) & 0xff
    if ((bytes[bit / 8]! & mask) !== (net[bit / 8]! & mask)) return false
  }
  return true
}

const v4Nets = BLOCKED_V4.map(([net, prefix]) => [parseIpv4(net)!, prefix] as const)
const v6Nets = BLOCKED_V6_GLOBAL.map(([net, prefix]) => [parseIpv6(net)!, prefix] as const)

/** Whether `address` (an IP literal; IPv6 in any spelling, with or without brackets or zone) is a public unicast address. */
export function isPublicAddress(address: string): boolean {
  const v4 = parseIpv4(address)
  if (v4) return !v4Nets.some(([net, prefix]) => inPrefix(v4, net, prefix))
  const v6 = parseIpv6(address)
  if (!v6) return false
  if ((v6[0]! & 0xe0) !== 0x20) return false
  return !v6Nets.some(([net, prefix]) => inPrefix(v6, net, prefix))
}
