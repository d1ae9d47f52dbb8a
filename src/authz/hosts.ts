/** Site hosts: exact names, or `*.example.com` for every subdomain of example.com (never example.com itself). */

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/

/** A DNS name without port, lower case (what a site may name after an optional `*.`). */
export function isHostname(host: string): boolean {
  return host.length > 0 && host.length <= 253 && host.split('.').every((label) => LABEL.test(label))
}

/** A site's host as stored (lower case), or undefined when it is neither a name nor `*.` and a name. */
export function canonicalSiteHost(raw: string): string | undefined {
  const host = raw.trim().toLowerCase()
  return isHostname(host.startsWith('*.') ? host.slice(2) : host) ? host : undefined
}

/** The site hosts that could cover `host`, best first: itself, then `*.` and each parent, nearest first. */
export function candidateHosts(host: string): string[] {
  const out = [host]
  for (let dot = host.indexOf('.'); dot >= 0; dot = host.indexOf('.', dot + 1)) out.push('*' + host.slice(dot))
  return out
}

/**
 * The `Host` (or X-Forwarded-Host) of a request split into a name and a port: lower case, the
 * port digits only. Undefined for anything else (userinfo, paths, IPv6 literals, several hosts).
 */
export function parseHostHeader(raw: string | null): { readonly host: string; readonly port: string } | undefined {
  if (raw === null) return undefined
  // Nearly every check names a host seen before: each value is parsed once (bounded: proxies forward what clients send).
  const known = parsedHosts.get(raw)
  if (known !== undefined) return known ?? undefined
  const parsed = parseHost(raw)
  // Only what could be a host and port is kept: a 16 KiB value is parsed (and refused) each time,
  // not held (4,096 of them once held 138 MiB).
  if (raw.length > HOST_HEADER_KEPT) return parsed
  if (parsedHosts.size >= 4096) parsedHosts.clear()
  parsedHosts.set(raw, parsed ?? null)
  return parsed
}

/** A name (253) with a port (6), and room for spaces around them. */
const HOST_HEADER_KEPT = 300
const parsedHosts = new Map<string, { readonly host: string; readonly port: string } | null>()

/** How many Host values are held parsed (tests). */
export function parsedHostsHeld(): number {
  return parsedHosts.size
}

function parseHost(raw: string): { readonly host: string; readonly port: string } | undefined {
  const m = /^([A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(raw.trim())
  if (!m) return undefined
  const host = m[1]!.toLowerCase().replace(/\.$/, '')
  if (!isHostname(host)) return undefined
  const port = m[2] ?? ''
  if (port !== '' && (Number(port) < 1 || Number(port) > 65535)) return undefined
  return { host, port }
}
