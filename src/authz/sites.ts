/** Sites and their rules: the one place they are checked, for the CLI (and later /admin and apply). */
import { UniqueViolation, type SitePolicy, type SiteRecord, type SiteRule, type Store } from '../db/store'
import { InputError } from '../lib/errors'
import { hasInvisible } from '../lib/text'
import { parseTrustedProxies } from '../web/client-address'
import { checkGroupName } from '../accounts/groups'
import { canonicalSiteHost } from './hosts'
import { compilePathPattern } from './path-pattern'

export class SiteInputError extends InputError {}

export const POLICIES: readonly SitePolicy[] = ['one-factor', 'two-factor', 'bypass', 'deny']

export interface SiteView {
  host: string
  name: string
  policy: SitePolicy
  allowed_groups: string[]
  jwt: boolean
  rules: Array<{ paths: string[]; methods: string[]; networks: string[]; clients: string[]; policy: SitePolicy }>
}

export const toSiteView = (s: SiteRecord): SiteView => ({ host: s.host, name: s.name, policy: s.policy, allowed_groups: s.allowedGroups, jwt: s.jwt, rules: s.rules.map((r) => ({ ...r })) })

export function checkSiteHost(raw: string): string {
  const host = canonicalSiteHost(raw)
  if (!host) throw new SiteInputError(`host "${raw}" must be a DNS name without port (photos.example.com), or *.example.com for its subdomains`, { key: 'admin.input.siteHost', params: { host: raw } })
  return host
}

function checkPolicy(raw: string | undefined, fallback: SitePolicy): SitePolicy {
  if (raw === undefined) return fallback
  if (!(POLICIES as readonly string[]).includes(raw)) throw new SiteInputError(`--policy must be one of ${POLICIES.join(', ')}, got "${raw}"`)
  return raw as SitePolicy
}

export function checkSiteName(raw: string): string {
  const name = raw.trim().normalize('NFC')
  if (!name || name.length > 200 || hasInvisible(name)) throw new SiteInputError('--name must be 1 to 200 characters, without control or invisible characters', { key: 'admin.input.name' })
  return name
}

export const checkSitePolicy = (raw: string | undefined) => checkPolicy(raw, 'one-factor')

export async function createSite(store: Store, input: { host: string; name: string; policy?: string; allowedGroups?: string[]; jwt?: boolean }, now: number): Promise<SiteRecord> {
  const host = checkSiteHost(input.host)
  const name = checkSiteName(input.name)
  const allowedGroups = [...new Set((input.allowedGroups ?? []).map(checkGroupName))].sort()
  if (allowedGroups.length > 0) {
    const known = new Set((await store.groups.listGroups()).map((g) => g.name))
    const unknown = allowedGroups.find((g) => !known.has(g))
    if (unknown) throw new SiteInputError(`no group named "${unknown}"`, { key: 'admin.input.noGroup', params: { name: unknown } })
  }
  const site: SiteRecord = { host, name, policy: checkPolicy(input.policy, 'one-factor'), allowedGroups, jwt: input.jwt ?? false, rules: [] }
  try {
    await store.sites.insertSite(site, now)
  } catch (error) {
    if (error instanceof UniqueViolation) throw new SiteInputError(`a site for "${host}" exists already`, { key: 'admin.input.siteExists', params: { host } })
    throw error
  }
  return site
}

const METHOD = /^[A-Z]{1,20}$/
const CLIENT_ID = /^[\x21-\x7e]{1,200}$/

/** Checks a rule: each path a regular expression RE2 reads (path-pattern.ts), methods upper-case tokens, networks CIDR blocks. */
export function checkRule(input: { paths?: string[]; methods?: string[]; networks?: string[]; clients?: string[]; policy?: string }): SiteRule {
  const paths = input.paths ?? []
  for (const p of paths) {
    if (p.length > 1000 || hasInvisible(p)) throw new SiteInputError(`--path "${p}": at most 1000 characters, no control characters`, { key: 'admin.input.pathLength', params: { path: p } })
    const pattern = compilePathPattern(p)
    if (pattern === 'syntax') throw new SiteInputError(`--path "${p}" is not a regular expression`, { key: 'admin.input.pathRegex', params: { path: p } })
    if (pattern === 'unsupported')
      throw new SiteInputError(`--path "${p}" is JavaScript syntax that RE2 does not read (a look-around, a back-reference, a \\u escape, a repetition count over 1000): paths are matched in linear time, with RE2's syntax, as Authelia's are`, {
        key: 'admin.input.pathRe2',
        params: { path: p },
      })
  }
  const methods = (input.methods ?? []).map((m) => m.toUpperCase())
  const bad = methods.find((m) => !METHOD.test(m))
  if (bad) throw new SiteInputError(`--method "${bad}" is not an HTTP method`, { key: 'admin.input.method', params: { method: bad } })
  const networks = input.networks ?? []
  for (const net of networks) {
    try {
      parseTrustedProxies(net)
    } catch {
      throw new SiteInputError(`--network "${net}" is not an IP address or CIDR block`, { key: 'admin.input.network', params: { network: net } })
    }
    if (net.includes(',')) throw new SiteInputError(`--network "${net}": one block per --network`, { key: 'admin.input.networkComma', params: { network: net } })
  }
  const clients = input.clients ?? []
  const badClient = clients.find((c) => !CLIENT_ID.test(c))
  if (badClient !== undefined) throw new SiteInputError(`--client "${badClient}" is not a client id`, { key: 'admin.input.ruleClient', params: { id: badClient } })
  if (input.policy === undefined) throw new SiteInputError('--policy is required (one-factor, two-factor, bypass, deny)')
  return { paths, methods: [...new Set(methods)], networks, clients, policy: checkPolicy(input.policy, 'deny') }
}

export async function addSiteRule(store: Store, rawHost: string, input: Parameters<typeof checkRule>[0]): Promise<SiteRule> {
  const host = checkSiteHost(rawHost)
  const rule = checkRule(input)
  if (!(await store.sites.addRule(host, rule))) throw new SiteInputError(`no site for "${rawHost}"`, { key: 'admin.input.noSite', params: { host: rawHost } })
  return rule
}
