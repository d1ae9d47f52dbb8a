/**
 * The forward-auth decision (SPEC "Protecting apps that speak no OAuth"): a pure function of the
 * site, the request and who is asking — no I/O, so every case is a unit test.
 */
import type { SitePolicy, SiteRecord, SiteRule } from '../db/store'
import { addressIn, parseTrustedProxies, type TrustedProxies } from '../web/client-address'
import { pathPatternOf } from './path-pattern'

/** The original request, as the proxy forwarded it; `path` already normalised (path.ts). */
export interface AuthzRequest {
  method: string
  path: string
  /** The client address (X-Forwarded-For, read through TRUSTED_PROXIES). */
  address: string
}

/** Who is asking: a signed-in person (site session or their bearer token), a machine (client_credentials), or nobody. */
export type Identity = { kind: 'user'; groups: readonly string[]; twoFactor: boolean } | { kind: 'client'; clientId: string } | undefined

/** allow; deny (403); sign-in (nobody: go and sign in); step-up (a second factor is due). */
export type Decision = 'allow' | 'deny' | 'sign-in' | 'step-up'

/** The site of a host: the exact one, else the nearest wildcard (`*.example.com` never covers example.com). */
export function siteFor(host: string, sites: readonly SiteRecord[]): SiteRecord | undefined {
  const exact = sites.find((s) => s.host === host)
  if (exact) return exact
  let best: SiteRecord | undefined
  for (const site of sites) {
    if (!site.host.startsWith('*.') || !host.endsWith(site.host.slice(1))) continue
    if (!best || site.host.length > best.host.length) best = site
  }
  return best
}

export function decide(site: SiteRecord, request: AuthzRequest, identity: Identity): Decision {
  const rule = site.rules.find((r) => ruleMatches(r, request, identity))
  return judge(rule?.policy ?? site.policy, site, identity, rule !== undefined && rule.clients.length > 0)
}

/**
 * A policy applied to who is asking. The site's allowed groups bind people; a machine has no
 * groups, so where a site names groups (or asks for two factors) it passes only through a rule
 * that names its client.
 */
function judge(policy: SitePolicy, site: SiteRecord, identity: Identity, clientNamed: boolean): Decision {
  if (policy === 'bypass') return 'allow'
  if (policy === 'deny') return 'deny'
  if (!identity) return 'sign-in'
  if (identity.kind === 'client') return clientNamed || (policy === 'one-factor' && site.allowedGroups.length === 0) ? 'allow' : 'deny'
  if (site.allowedGroups.length > 0 && !site.allowedGroups.some((g) => identity.groups.includes(g))) return 'deny'
  if (policy === 'two-factor' && !identity.twoFactor) return 'step-up'
  return 'allow'
}

function ruleMatches(rule: SiteRule, request: AuthzRequest, identity: Identity): boolean {
  if (rule.methods.length > 0 && !rule.methods.includes(request.method)) return false
  if (rule.clients.length > 0 && !(identity?.kind === 'client' && rule.clients.includes(identity.clientId))) return false
  if (rule.networks.length > 0 && !addressIn(request.address, networksOf(rule))) return false
  if (rule.paths.length > 0 && !rule.paths.some((p) => pathPatternOf(p).test(request.path))) return false
  return true
}

// Compiled once per block list (bounded: they come from the operator's rules).
const networks = new WeakMap<SiteRule, TrustedProxies>()

function networksOf(rule: SiteRule): TrustedProxies {
  let blocks = networks.get(rule)
  if (!blocks) networks.set(rule, (blocks = parseTrustedProxies(rule.networks.join(','))))
  return blocks
}
