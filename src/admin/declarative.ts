import { readFileSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import { inviteUser } from '../accounts/email-links'
import { checkGroupName, deleteGroup, removeMember, setAllowedGroups } from '../accounts/groups'
import { checkFullName, normalizeEmail, setUserDisabled, updateProfile } from '../accounts/users'
import type { Config } from '../config'
import type { ClientLogo, IdTokenAlg, ResourceRecord, ResourceScopes, ScopeDescription, Store, UserListing } from '../db/store'
import { checkLaunchUrl, checkLogo, MAX_LOGO_BYTES } from '../oauth/client-logo'
import { sha256 } from '../lib/crypto'
import { CHOSEN_CLIENT_ID, ClientInputError, EVERY_CLIENT, ID_TOKEN_ALGS, checkBackchannelLogoutUri, checkGrantList, checkKeys, checkRedirectUri, createClient, listClients, type Client } from '../oauth/clients'
import { canonicalResource, createResource, keptDescription, scopeDescriptionProblem, scopeNameProblem } from '../oauth/resources'
import { checkRule, checkSiteHost, checkSiteName, checkSitePolicy, toSiteView } from '../authz/sites'
import { checkProvider, movedAway, movedMessage, reachWords, readSecretFile as readProviderSecret, sealKeyOf, toProviderView, unsealSecret } from '../providers/service'
import type { ProviderRecord, SiteRecord, SiteRule } from '../db/store'

/**
 * `latchkey apply FILE` / `latchkey export` (SPEC, operators): the database made to match a file
 * of clients, groups, users and resources — the keys of the CLI's JSON output. The whole file is
 * checked before anything changes (every error, with its path in the file); the plan lists each
 * change; applying it twice changes nothing the second time; `export` prints the same shape
 * without secrets, so export → apply is a no-op. Clients met through metadata documents or
 * registered dynamically are neither exported nor pruned. Without `--prune` nothing absent from
 * the file goes, inside an entry either: group members, redirect URIs and scopes the file does
 * not list stay (SPEC: apply then only adds and changes).
 */

export class ApplyError extends Error {
  constructor(readonly errors: string[]) {
    super(errors.join('\n'))
  }
}

interface DesiredClient {
  path: string
  clientId?: string
  name: string
  redirectUris: string[]
  postLogoutRedirectUris: string[]
  public: boolean
  skipConsent: boolean
  requireMfa: boolean
  idTokenAlg: IdTokenAlg
  allowedGroups: string[]
  introspects: string[]
  secret?: string
  /** OpenID Connect back-channel logout (null: none). */
  backchannelLogoutUri: string | null
  backchannelLogoutSessionRequired: boolean
  /** Where "Your apps" opens it (null: none). */
  launchUrl: string | null
  /** `logo_file`, read and checked; absent: the logo stays as it is (export cannot carry it). */
  logo?: ClientLogo
  /** Machines and devices (SPEC): undefined where the file does not say (an app keeps what it has; a new one gets the defaults). */
  grantTypes?: string[]
  allowedScopes?: string[]
  requirePar?: boolean
  keys?: { authMethod: 'private_key_jwt' | null; jwks: string | null; jwksUri: string | null }
}
interface DesiredGroup {
  name: string
  members: string[]
}
interface DesiredUser {
  email: string
  fullName: string
  admin: boolean
  /** Applied only when the file says it: a file that never mentions it re-enables nobody. */
  disabled?: boolean
}

export interface Plan {
  /** One line per change: `+ client grafana`, `~ user ada@example.com: admin`, `- group old`. */
  lines: string[]
  /** Makes the changes; returns what must be shown once (generated secrets, invitation links). */
  apply(): Promise<string[]>
}

const SECTIONS = ['clients', 'groups', 'users', 'resources', 'sites', 'providers'] as const
const CLIENT_KEYS = [
  'client_id',
  'name',
  'redirect_uris',
  'post_logout_redirect_uris',
  'public',
  'skip_consent',
  'require_mfa',
  'id_token_signed_response_alg',
  'allowed_groups',
  'introspects',
  'secret_file',
  'backchannel_logout_uri',
  'backchannel_logout_session_required',
  'grant_types',
  'allowed_scopes',
  'require_pushed_authorization_requests',
  'token_endpoint_auth_method',
  'jwks',
  'jwks_uri',
  'launch_url',
  'logo_file',
]
/** What `export` writes (the token endpoint's names, RFC 7591 §2): a secret method or none means "no keys". */
const AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none', 'private_key_jwt']
const RESOURCE_KEYS = ['uri', 'name', 'scopes', 'token_format', 'introspectors']
const SITE_KEYS = ['host', 'name', 'policy', 'allowed_groups', 'jwt', 'rules']
const RULE_KEYS = ['paths', 'methods', 'networks', 'clients', 'policy']
const PROVIDER_KEYS = ['id', 'name', 'kind', 'issuer', 'api_url', 'client_id', 'secret_file', 'scope', 'allow_create', 'allowed_domains', 'link_verified_email', 'trust_mfa']
const ruleKey = (r: SiteRule) => [r.paths, r.methods, r.networks, r.clients, r.policy]

/** JSON or YAML (Bun's parser), by the text. */
export function parseDocument(text: string, file: string): unknown {
  try {
    return text.trimStart().startsWith('{') ? JSON.parse(text) : Bun.YAML.parse(text)
  } catch (error) {
    throw new ApplyError([`${file}: not valid YAML or JSON (${(error as Error).message.split('\n')[0]})`])
  }
}

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i])

/** Checks the whole document and compares it with the database: the plan, or every error. */
export async function planApply(store: Store, config: Config, doc: unknown, opts: { prune: boolean; baseDir: string; now: number }): Promise<Plan> {
  const errors: string[] = []
  const err = (path: string, message: string) => void errors.push(`${path}: ${message}`)
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new ApplyError(['(top): the file must be a mapping of clients, groups, users, resources, sites and providers'])
  const top = doc as Record<string, unknown>
  for (const key of Object.keys(top)) if (!(SECTIONS as readonly string[]).includes(key)) err(key, `unknown section (${SECTIONS.join(', ')})`)
  const list = (key: string): unknown[] => {
    const v = top[key]
    if (v === undefined || v === null) return []
    if (!Array.isArray(v)) return err(key, 'must be a list'), []
    return v
  }
  const entry = (path: string, v: unknown, allowed?: string[]): Record<string, unknown> | undefined => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return err(path, 'must be a mapping'), undefined
    if (allowed) for (const k of Object.keys(v)) if (!allowed.includes(k)) err(`${path}.${k}`, 'unknown key')
    return v as Record<string, unknown>
  }
  const str = (path: string, v: unknown, required = true): string | undefined => {
    if (v === undefined && !required) return undefined
    if (typeof v !== 'string' || v.trim() === '') return err(path, 'must be a non-empty string'), undefined
    return v
  }
  const bool = (path: string, v: unknown): boolean => {
    if (v === undefined) return false
    if (typeof v !== 'boolean') return err(path, 'must be true or false'), false
    return v
  }
  const strings = (path: string, v: unknown): string[] => {
    if (v === undefined) return []
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) return err(path, 'must be a list of strings'), []
    return v as string[]
  }
  /** A required string checked by `check`: one error at most, either way. */
  const checked = <T>(path: string, v: unknown, check: (s: string) => T): T | undefined => {
    const s = str(path, v)
    return s === undefined ? undefined : attempt(path, () => check(s))
  }
  const attempt = <T>(path: string, fn: () => T): T | undefined => {
    try {
      return fn()
    } catch (error) {
      return err(path, (error as Error).message), undefined
    }
  }

  const [current, groups, users, resources, sites] = await Promise.all([
    listClients(store).then((all) => all.filter((c) => c.kind === 'operator')),
    store.groups.listGroups(),
    store.users.listUsers(),
    store.resources.listResources(),
    store.sites.listSites(),
  ])
  const usersByEmail = new Map(users.map((u) => [u.email, u]))

  // users
  const wantUsers: DesiredUser[] = []
  for (const [i, raw] of list('users').entries()) {
    const e = entry(`users[${i}]`, raw, ['email', 'full_name', 'admin', 'disabled'])
    if (!e) continue
    const email = checked(`users[${i}].email`, e.email, normalizeEmail)
    const fullName = checked(`users[${i}].full_name`, e.full_name, checkFullName)
    const admin = bool(`users[${i}].admin`, e.admin)
    const disabled = e.disabled === undefined ? undefined : bool(`users[${i}].disabled`, e.disabled)
    if (email && wantUsers.some((u) => u.email === email)) err(`users[${i}].email`, `${email} is listed twice`)
    if (email && fullName) wantUsers.push({ email, fullName, admin, disabled })
  }
  const knownUser = (ref: string) => wantUsers.some((u) => u.email === ref) || usersByEmail.has(ref) || users.some((u) => u.id === ref)

  // groups
  const wantGroups: DesiredGroup[] = []
  for (const [i, raw] of list('groups').entries()) {
    const e = entry(`groups[${i}]`, raw, ['name', 'members'])
    if (!e) continue
    const name = checked(`groups[${i}].name`, e.name, checkGroupName)
    const members: string[] = []
    for (const [j, m] of strings(`groups[${i}].members`, e.members).entries()) {
      const ref = attempt(`groups[${i}].members[${j}]`, () => (m.includes('@') ? normalizeEmail(m) : m))
      if (ref === undefined) continue
      if (!knownUser(ref)) err(`groups[${i}].members[${j}]`, `no user ${m} (in the database or in users)`)
      else members.push(ref)
    }
    if (name && wantGroups.some((g) => g.name === name)) err(`groups[${i}].name`, `${name} is listed twice`)
    if (name) wantGroups.push({ name, members: [...new Set(members)] })
  }
  const knownGroup = (name: string) => wantGroups.some((g) => g.name === name) || groups.some((g) => g.name === name)

  /**
   * grant_types, allowed_scopes, require_pushed_authorization_requests, token_endpoint_auth_method
   * with jwks (a mapping) or jwks_uri — checked as `client create` checks its options; the allowed
   * scopes against the resources once the file's are read.
   */
  const machineOptions = (path: string, e: Record<string, unknown>, isPublic: boolean, hasSecretFile: boolean): Pick<DesiredClient, 'grantTypes' | 'allowedScopes' | 'requirePar' | 'keys'> => {
    const out: Pick<DesiredClient, 'grantTypes' | 'allowedScopes' | 'requirePar' | 'keys'> = {}
    if (e.grant_types !== undefined || e.allowed_scopes !== undefined) {
      const given = e.grant_types === undefined ? undefined : strings(`${path}.grant_types`, e.grant_types)
      const grants = attempt(`${path}.grant_types`, () => checkGrantList({ public: isPublic, grantTypes: given ?? ['authorization_code'], allowedScopes: strings(`${path}.allowed_scopes`, e.allowed_scopes) }))
      // Refused grants still say whether the app redirects (no second error about its redirect URIs).
      out.grantTypes = grants && given ? grants.grantTypes : given
      if (grants) out.allowedScopes = grants.allowedScopes
    }
    if (e.require_pushed_authorization_requests !== undefined) out.requirePar = bool(`${path}.require_pushed_authorization_requests`, e.require_pushed_authorization_requests)
    const method = str(`${path}.token_endpoint_auth_method`, e.token_endpoint_auth_method, false)
    if (method === undefined && e.jwks === undefined && e.jwks_uri === undefined) return out
    if (method !== undefined && !AUTH_METHODS.includes(method)) return err(`${path}.token_endpoint_auth_method`, `must be one of ${AUTH_METHODS.join(', ')}`), out
    if (method === 'none' && !isPublic) err(`${path}.token_endpoint_auth_method`, 'none is for public clients')
    if (method?.startsWith('client_secret') && isPublic) err(`${path}.token_endpoint_auth_method`, 'a public client has no secret')
    if (method === 'private_key_jwt' && hasSecretFile) err(`${path}.secret_file`, 'a private_key_jwt client authenticates with its keys, not a secret')
    const jwks = e.jwks === undefined ? null : typeof e.jwks === 'object' && e.jwks !== null && !Array.isArray(e.jwks) ? JSON.stringify(e.jwks) : (err(`${path}.jwks`, 'must be a JWKS mapping ({keys: [...]})'), null)
    const jwksUri = e.jwks_uri === undefined ? null : (str(`${path}.jwks_uri`, e.jwks_uri) ?? null)
    out.keys = attempt(`${path}.token_endpoint_auth_method`, () => checkKeys({ public: isPublic, authMethod: method === 'private_key_jwt' ? method : null, jwks, jwksUri }))
    return out
  }

  // clients
  const wantClients: DesiredClient[] = []
  for (const [i, raw] of list('clients').entries()) {
    const path = `clients[${i}]`
    const e = entry(path, raw, CLIENT_KEYS)
    if (!e) continue
    const clientId = str(`${path}.client_id`, e.client_id, false)
    if (clientId !== undefined && !CHOSEN_CLIENT_ID.test(clientId) && !current.some((c) => c.id === clientId)) err(`${path}.client_id`, 'must be 1 to 64 of A-Z a-z 0-9 . _ -')
    const name = str(`${path}.name`, e.name)
    const redirectUris = strings(`${path}.redirect_uris`, e.redirect_uris)
    for (const [j, uri] of redirectUris.entries()) attempt(`${path}.redirect_uris[${j}]`, () => checkRedirectUri(uri))
    const postLogout = strings(`${path}.post_logout_redirect_uris`, e.post_logout_redirect_uris)
    for (const [j, uri] of postLogout.entries()) attempt(`${path}.post_logout_redirect_uris[${j}]`, () => checkRedirectUri(uri))
    const isPublic = bool(`${path}.public`, e.public)
    const alg = str(`${path}.id_token_signed_response_alg`, e.id_token_signed_response_alg, false) ?? 'RS256'
    if (!ID_TOKEN_ALGS.includes(alg as IdTokenAlg)) err(`${path}.id_token_signed_response_alg`, `must be one of ${ID_TOKEN_ALGS.join(', ')}`)
    const allowed = strings(`${path}.allowed_groups`, e.allowed_groups)
    for (const [j, g] of allowed.entries()) if (!knownGroup(g)) err(`${path}.allowed_groups[${j}]`, `no group ${g} (in the database or in groups)`)
    const introspects = [...new Set(strings(`${path}.introspects`, e.introspects))]
    if (introspects.includes(EVERY_CLIENT) && introspects.length > 1) err(`${path}.introspects`, `'*' (every client's tokens) stands alone, not beside client ids`)
    if (isPublic && introspects.length) err(`${path}.introspects`, 'a public client cannot introspect tokens')
    const backchannelUri = str(`${path}.backchannel_logout_uri`, e.backchannel_logout_uri, false)
    const backchannelLogoutUri = backchannelUri === undefined ? null : (attempt(`${path}.backchannel_logout_uri`, () => checkBackchannelLogoutUri(backchannelUri, 'operator')) ?? null)
    const backchannelLogoutSessionRequired = bool(`${path}.backchannel_logout_session_required`, e.backchannel_logout_session_required)
    if (backchannelLogoutSessionRequired && backchannelUri === undefined) err(`${path}.backchannel_logout_session_required`, 'needs backchannel_logout_uri')
    const launch = str(`${path}.launch_url`, e.launch_url, false)
    const launchUrl = launch === undefined ? null : (attempt(`${path}.launch_url`, () => checkLaunchUrl(launch)) ?? null)
    const logoFile = str(`${path}.logo_file`, e.logo_file, false)
    const logo = logoFile === undefined ? undefined : readLogoFile(resolve(opts.baseDir, logoFile), (m) => err(`${path}.logo_file`, m))
    let secret: string | undefined
    const secretFile = str(`${path}.secret_file`, e.secret_file, false)
    if (secretFile !== undefined) {
      if (isPublic) err(`${path}.secret_file`, 'a public client has no secret')
      else secret = readSecretFile(resolve(opts.baseDir, secretFile), (m) => err(`${path}.secret_file`, m))
    }
    const machine = machineOptions(path, e, isPublic, secretFile !== undefined)
    const redirecting = (machine.grantTypes ?? current.find((c) => (clientId !== undefined ? c.id === clientId : c.name === name))?.grantTypes ?? ['authorization_code']).includes('authorization_code')
    if (redirectUris.length === 0 && redirecting) err(`${path}.redirect_uris`, 'must list at least one redirect URI')
    if (clientId !== undefined && wantClients.some((c) => c.clientId === clientId)) err(`${path}.client_id`, `${clientId} is listed twice`)
    if (clientId === undefined && name !== undefined && current.filter((c) => c.name === name).length > 1)
      err(`${path}.client_id`, `several clients are named "${name}": give client_id`)
    if (name !== undefined)
      wantClients.push({ path, clientId, name, redirectUris: [...new Set(redirectUris)], postLogoutRedirectUris: [...new Set(postLogout)], public: isPublic, skipConsent: bool(`${path}.skip_consent`, e.skip_consent), requireMfa: bool(`${path}.require_mfa`, e.require_mfa), idTokenAlg: alg as IdTokenAlg, allowedGroups: [...new Set(allowed)].sort(), introspects, secret, backchannelLogoutUri, backchannelLogoutSessionRequired, launchUrl, logo, ...machine })
  }
  const knownClient = (id: string) => wantClients.some((c) => c.clientId === id) || current.some((c) => c.id === id)
  // Named clients must exist, in the database or in the file (any kind: a resource server may read a registered app's tokens).
  const everyId = new Set((await listClients(store)).map((c) => c.id))
  for (const [i, c] of wantClients.entries())
    for (const [j, id] of c.introspects.entries())
      if (id !== EVERY_CLIENT && !knownClient(id) && !everyId.has(id)) err(`${c.path}.introspects[${j}]`, `no client ${id}`)

  // resources
  const wantResources: ResourceRecord[] = []
  for (const [i, raw] of list('resources').entries()) {
    const path = `resources[${i}]`
    const e = entry(path, raw, RESOURCE_KEYS)
    if (!e) continue
    const uri = canonicalResource(str(`${path}.uri`, e.uri) ?? '')
    if (!uri) err(`${path}.uri`, 'must be an absolute http(s) URI without a fragment')
    const name = str(`${path}.name`, e.name)
    // Each scope checked before anything is written (a description may be per language: {en: …, de: …}).
    let scopes: ResourceScopes | undefined = {}
    if (typeof e.scopes !== 'object' || e.scopes === null || Array.isArray(e.scopes) || Object.keys(e.scopes).length === 0) {
      err(`${path}.scopes`, 'must be a mapping of scope names to descriptions')
      scopes = undefined
    } else
      for (const [scope, description] of Object.entries(e.scopes as Record<string, unknown>)) {
        const problem = scopeNameProblem(scope) ?? scopeDescriptionProblem(description)
        if (problem) err(`${path}.scopes.${scope}`, `(resource ${uri ?? e.uri}) ${problem}`)
        else if (scopes) scopes[scope] = keptDescription(description as ScopeDescription)
      }
    const tokenFormat = e.token_format ?? 'opaque'
    if (tokenFormat !== 'opaque' && tokenFormat !== 'jwt') err(`${path}.token_format`, 'must be opaque or jwt')
    const introspectors = strings(`${path}.introspectors`, e.introspectors)
    for (const [j, id] of introspectors.entries()) if (!knownClient(id)) err(`${path}.introspectors[${j}]`, `no client ${id}`)
    if (uri && wantResources.some((r) => r.uri === uri)) err(`${path}.uri`, `${uri} is listed twice`)
    if (uri && name && scopes)
      wantResources.push({ uri, name, scopes, tokenFormat: tokenFormat as 'opaque' | 'jwt', introspectors: [...new Set(introspectors)] })
  }
  // Allowed scopes are scopes of a resource, registered or in this file.
  const resourceScopes = new Set([...resources, ...wantResources].flatMap((r) => Object.keys(r.scopes)))
  for (const c of wantClients)
    for (const [j, scope] of (c.allowedScopes ?? []).entries()) if (!resourceScopes.has(scope)) err(`${c.path}.allowed_scopes[${j}]`, `${scope} is not a scope of a resource (in the database or in resources)`)
  // sites (forward-auth): a site's rules are one ordered list, so the file's list replaces it.
  const wantSites: SiteRecord[] = []
  for (const [i, raw] of list('sites').entries()) {
    const path = `sites[${i}]`
    const e = entry(path, raw, SITE_KEYS)
    if (!e) continue
    const host = checked(`${path}.host`, e.host, checkSiteHost)
    const name = checked(`${path}.name`, e.name, checkSiteName)
    const policy = e.policy === undefined ? 'one-factor' : checked(`${path}.policy`, e.policy, checkSitePolicy)
    const allowed = strings(`${path}.allowed_groups`, e.allowed_groups)
    for (const [j, g] of allowed.entries()) if (!knownGroup(g)) err(`${path}.allowed_groups[${j}]`, `no group ${g} (in the database or in groups)`)
    const rules: SiteRule[] = []
    const rawRules = e.rules === undefined ? [] : Array.isArray(e.rules) ? e.rules : (err(`${path}.rules`, 'must be a list'), [])
    for (const [j, r] of rawRules.entries()) {
      const re = entry(`${path}.rules[${j}]`, r, RULE_KEYS)
      if (!re) continue
      const rp = `${path}.rules[${j}]`
      const input = { paths: strings(`${rp}.paths`, re.paths), methods: strings(`${rp}.methods`, re.methods), networks: strings(`${rp}.networks`, re.networks), clients: strings(`${rp}.clients`, re.clients), policy: str(`${rp}.policy`, re.policy) }
      const rule = input.policy === undefined ? undefined : attempt(rp, () => checkRule(input))
      if (rule) rules.push(rule)
    }
    if (host && wantSites.some((x) => x.host === host)) err(`${path}.host`, `${host} is listed twice`)
    if (host && name && policy) wantSites.push({ host, name, policy, allowedGroups: [...new Set(allowed)].sort(), jwt: bool(`${path}.jwt`, e.jwt), rules })
  }
  // providers (SPEC "Sign in with another account"): by id (it is in the callback URL); the secret
  // only by secret_file — required for a new provider, and an existing one keeps its own without it.
  const wantProviders: Array<{ provider: ProviderRecord; secretGiven: boolean }> = []
  const providerIds = new Set<string>()
  const providers = top.providers !== undefined ? await store.providers.listProviders() : []
  const sealKey = top.providers !== undefined ? await sealKeyOf(store, opts.now) : undefined
  for (const [i, raw] of list('providers').entries()) {
    const path = `providers[${i}]`
    const e = entry(path, raw, PROVIDER_KEYS)
    if (!e) continue
    const id = str(`${path}.id`, e.id)
    const known = providers.find((x) => x.id === id)
    const secretFile = str(`${path}.secret_file`, e.secret_file, false)
    if (secretFile === undefined && id !== undefined && !known) err(`${path}.secret_file`, 'is required for a new provider')
    const secret = secretFile === undefined ? known && (await unsealSecret(sealKey!, known)) : attempt(`${path}.secret_file`, () => readProviderSecret(resolve(opts.baseDir, secretFile)))
    const optional = (key: string) => str(`${path}.${key}`, e[key], false)
    const input = {
      id,
      name: str(`${path}.name`, e.name),
      kind: optional('kind'),
      issuer: optional('issuer'),
      apiUrl: optional('api_url'),
      clientId: str(`${path}.client_id`, e.client_id),
      clientSecret: secret ?? undefined,
      scope: optional('scope'),
      allowCreate: bool(`${path}.allow_create`, e.allow_create),
      allowedDomains: strings(`${path}.allowed_domains`, e.allowed_domains),
      linkVerifiedEmail: bool(`${path}.link_verified_email`, e.link_verified_email),
      trustMfa: bool(`${path}.trust_mfa`, e.trust_mfa),
    }
    if (id !== undefined && providerIds.has(id)) err(`${path}.id`, `${id} is listed twice`)
    if (id !== undefined) providerIds.add(id)
    if (id === undefined || input.name === undefined || input.clientId === undefined || secret === undefined) continue
    try {
      const provider = await checkProvider(input, sealKey!, config.clientIdMetadataAllowHosts, opts.now)
      const moved = known && (await movedAway(store, known, provider))
      if (moved) err(`${path}.issuer`, moved)
      else wantProviders.push({ provider, secretGiven: secretFile !== undefined })
    } catch (error) {
      err(path, (error as Error).message)
    }
  }
  if (errors.length) throw new ApplyError(errors)
  /** Without --prune a list only grows: what is there stays, in its order, and the file's new entries follow. */
  const keeping = (now: readonly string[], wanted: string[]) => (opts.prune ? wanted : [...now, ...wanted.filter((x) => !now.includes(x))])

  // The plan, section by section (only the sections the file has).
  const clock = { now: () => opts.now }
  const lines: string[] = []
  const steps: Array<(out: string[]) => Promise<void>> = []
  const has = (key: string) => top[key] !== undefined

  for (const g of wantGroups)
    if (!groups.some((x) => x.name === g.name)) {
      lines.push(`+ group ${g.name}`)
      steps.push(() => store.groups.createGroup(g.name, opts.now))
    }

  for (const u of wantUsers) {
    const found = usersByEmail.get(u.email)
    if (!found) {
      lines.push(`+ user ${u.email} (invited${u.disabled ? ', disabled' : ''})`)
      steps.push(async (out) => {
        const { user: made, url } = await inviteUser(store, config, u, opts.now, false)
        if (u.admin) await store.users.setAdmin(made.id, true)
        if (u.disabled) await setUserDisabled({ store, clock }, made.id, true)
        usersByEmail.set(u.email, { ...made, admin: u.admin, disabled: u.disabled ?? false })
        out.push(`invitation for ${u.email}: ${url}`)
      })
      continue
    }
    const disable = u.disabled !== undefined && found.disabled !== u.disabled
    const changed = [found.fullName !== u.fullName && 'full_name', found.admin !== u.admin && 'admin', disable && 'disabled'].filter(Boolean)
    if (changed.length) {
      lines.push(`~ user ${u.email}: ${changed.join(', ')}`)
      steps.push(async () => {
        if (found.fullName !== u.fullName) await updateProfile({ store }, found.id, { fullName: u.fullName })
        if (found.admin !== u.admin) await store.users.setAdmin(found.id, u.admin)
        // As `user update --disabled`: sessions and tokens end at once, on every instance.
        if (disable) await setUserDisabled({ store, clock }, found.id, u.disabled!)
      })
    }
  }

  const userIdOf = (ref: string) => (usersByEmail.get(ref) as UserListing | undefined)?.id ?? ref
  for (const g of wantGroups) {
    const before = groups.find((x) => x.name === g.name)?.members ?? []
    const present = new Set(before.flatMap((m) => [m.email, m.id]))
    const wanted = new Set(g.members)
    const add = g.members.filter((m) => !present.has(m))
    const remove = opts.prune ? before.filter((m) => !wanted.has(m.email) && !wanted.has(m.id)) : []
    for (const m of add) {
      lines.push(`+ member ${m} of ${g.name}`)
      steps.push(async () => void (await store.groups.addMember(g.name, userIdOf(m))))
    }
    for (const m of remove) {
      lines.push(`- member ${m.email} of ${g.name}`)
      steps.push(async () => void (await removeMember({ store }, g.name, m.id)))
    }
  }

  const matched = new Set<string>()
  // Allowed scopes of a resource this file creates are set once it exists (resources come after clients: they name them).
  const registered = new Set(resources.flatMap((r) => Object.keys(r.scopes)))
  const late: typeof steps = []
  for (const c of wantClients) {
    const found = c.clientId !== undefined ? current.find((x) => x.id === c.clientId) : current.find((x) => x.name === c.name)
    if (!found) {
      lines.push(`+ client ${c.clientId ?? c.name}`)
      steps.push(async (out) => {
        const allowedScopes = c.allowedScopes ?? []
        const ready = allowedScopes.every((s) => registered.has(s))
        const keys = c.keys ?? { authMethod: null, jwks: null, jwksUri: null }
        const made = await createClient(
          store,
          {
            name: c.name,
            redirectUris: c.redirectUris,
            postLogoutRedirectUris: c.postLogoutRedirectUris,
            public: c.public,
            skipConsent: c.skipConsent,
            requireMfa: c.requireMfa,
            idTokenAlg: c.idTokenAlg,
            id: c.clientId,
            secret: c.secret,
            introspects: c.introspects,
            backchannelLogoutUri: c.backchannelLogoutUri ?? undefined,
            backchannelLogoutSessionRequired: c.backchannelLogoutSessionRequired,
            grantTypes: c.grantTypes,
            allowedScopes: ready ? allowedScopes : [],
            requirePar: c.requirePar,
            authMethod: keys.authMethod ?? undefined,
            jwks: keys.jwks ?? undefined,
            jwksUri: keys.jwksUri ?? undefined,
          },
          opts.now,
        )
        if (!ready) late.push(async () => void (await store.clients.updateClient(made.client.id, { ...recordOf(made.client), allowedScopes })))
        if (c.allowedGroups.length) await setAllowedGroups({ store }, made.client.id, c.allowedGroups)
        if (c.launchUrl !== null) await store.clients.setLaunchUrl(made.client.id, c.launchUrl)
        if (c.logo) await store.clients.setClientLogo(made.client.id, c.logo, opts.now)
        if (made.secret && !c.secret) out.push(`client ${made.client.id} (${c.name}): client_secret ${made.secret} — shown this once`)
        else out.push(`client ${made.client.id} (${c.name}) created`)
      })
      continue
    }
    matched.add(found.id)
    c.redirectUris = keeping(found.redirectUris, c.redirectUris)
    c.postLogoutRedirectUris = keeping(found.postLogoutRedirectUris, c.postLogoutRedirectUris)
    if (found.public !== c.public) throw new ApplyError([`${c.path}.public: ${found.id} is ${found.public ? 'public' : 'confidential'}; delete it to change that`])
    const allowedNow = await store.groups.allowedGroups(found.id)
    const storedHash = c.secret === undefined ? undefined : (await store.clients.findClient(found.id))?.secretHash
    // What the file does not say, the app keeps.
    const grantTypes = c.grantTypes ?? found.grantTypes
    const allowedScopes = c.allowedScopes ?? (grantTypes.includes('client_credentials') ? found.allowedScopes : [])
    const requirePar = c.requirePar ?? found.requirePar
    const keys = c.keys ?? { authMethod: found.authMethod, jwks: found.jwks, jwksUri: found.jwksUri }
    if (found.authMethod === 'private_key_jwt' && keys.authMethod === null && c.secret === undefined)
      throw new ApplyError([`${c.path}.secret_file: ${found.id} authenticates with private_key_jwt and has no secret; give secret_file to move it to a secret`])
    const attempted = attemptNow(`${c.path}.grant_types`, () => checkGrantList({ public: found.public, grantTypes, allowedScopes }))
    if (attempted) throw new ApplyError([attempted])
    const changed = [
      found.name !== c.name && 'name',
      !sameList(found.redirectUris, c.redirectUris) && 'redirect_uris',
      !sameList(found.postLogoutRedirectUris, c.postLogoutRedirectUris) && 'post_logout_redirect_uris',
      found.skipConsent !== c.skipConsent && 'skip_consent',
      found.requireMfa !== c.requireMfa && 'require_mfa',
      found.idTokenAlg !== c.idTokenAlg && 'id_token_signed_response_alg',
      !sameList(allowedNow, c.allowedGroups) && 'allowed_groups',
      !sameList(found.introspects, c.introspects) && 'introspects',
      (found.backchannelLogoutUri !== c.backchannelLogoutUri || found.backchannelLogoutSessionRequired !== c.backchannelLogoutSessionRequired) && 'backchannel_logout_uri',
      c.secret !== undefined && storedHash !== sha256(c.secret) && 'secret',
      found.launchUrl !== c.launchUrl && 'launch_url',
      c.logo !== undefined && c.logo.etag !== found.logoEtag && 'logo',
      !sameList(found.grantTypes, grantTypes) && 'grant_types',
      !sameList(found.allowedScopes, allowedScopes) && 'allowed_scopes',
      found.requirePar !== requirePar && 'require_pushed_authorization_requests',
      (found.authMethod !== keys.authMethod || found.jwks !== keys.jwks || found.jwksUri !== keys.jwksUri) && 'token_endpoint_auth_method',
    ].filter(Boolean)
    if (!changed.length) continue
    lines.push(`~ client ${found.id}: ${changed.join(', ')}`)
    steps.push(async () => {
      const ready = allowedScopes.every((s) => registered.has(s))
      const record = { name: c.name, redirectUris: c.redirectUris, postLogoutRedirectUris: c.postLogoutRedirectUris, skipConsent: c.skipConsent, requireMfa: c.requireMfa, idTokenAlg: c.idTokenAlg, grantTypes, requirePar, ...keys }
      await store.clients.updateClient(found.id, { ...record, allowedScopes: ready ? allowedScopes : found.allowedScopes.filter((s) => allowedScopes.includes(s)) })
      if (!ready) late.push(async () => void (await store.clients.updateClient(found.id, { ...record, allowedScopes })))
      if (changed.includes('allowed_groups')) await setAllowedGroups({ store }, found.id, c.allowedGroups)
      if (changed.includes('introspects')) await store.clients.setIntrospects(found.id, c.introspects)
      if (changed.includes('backchannel_logout_uri')) await store.clients.setBackchannelLogout(found.id, c.backchannelLogoutUri, c.backchannelLogoutSessionRequired)
      if (changed.includes('secret')) await store.clients.setClientSecret(found.id, sha256(c.secret!))
      if (changed.includes('launch_url')) await store.clients.setLaunchUrl(found.id, c.launchUrl)
      if (changed.includes('logo')) await store.clients.setClientLogo(found.id, c.logo!, opts.now)
    })
  }

  for (const want of wantResources) {
    const found = resources.find((x) => x.uri === want.uri)
    const r = found && !opts.prune ? { ...want, scopes: { ...found.scopes, ...want.scopes } } : want
    if (!found) {
      lines.push(`+ resource ${r.uri}`)
      steps.push(async () => {
        await createResource(store, { uri: r.uri, name: r.name, scopes: r.scopes, tokenFormat: r.tokenFormat, introspectors: r.introspectors }, opts.now)
      })
      continue
    }
    const same = found.name === r.name && JSON.stringify(found.scopes) === JSON.stringify(r.scopes) && found.tokenFormat === r.tokenFormat && sameList(found.introspectors, r.introspectors)
    if (!same) {
      lines.push(`~ resource ${r.uri}`)
      steps.push(async () => void (await store.resources.updateResource(r)))
    }
  }

  // Filled while the client steps run: after the resources' steps.
  steps.push(async (out) => {
    for (const step of late) await step(out)
  })

  for (const want of wantSites) {
    const found = sites.find((x) => x.host === want.host)
    if (!found) {
      lines.push(`+ site ${want.host}`)
      steps.push(async () => void (await store.sites.insertSite(want, opts.now)))
      continue
    }
    const changed = [
      found.name !== want.name && 'name',
      found.policy !== want.policy && 'policy',
      !sameList(found.allowedGroups, want.allowedGroups) && 'allowed_groups',
      found.jwt !== want.jwt && 'jwt',
      JSON.stringify(found.rules.map(ruleKey)) !== JSON.stringify(want.rules.map(ruleKey)) && 'rules',
    ].filter(Boolean)
    if (changed.length) {
      lines.push(`~ site ${want.host}: ${changed.join(', ')}`)
      steps.push(async () => void (await store.sites.replaceSite(want)))
    }
  }

  for (const { provider: want, secretGiven } of wantProviders) {
    const found = providers.find((x) => x.id === want.id)
    if (!found) {
      lines.push(`+ provider ${want.id}`)
      steps.push(async () => void (await store.providers.insertProvider(want, opts.now)))
      continue
    }
    const a = toProviderView(found)
    const b = toProviderView(want)
    const changed = (Object.keys(b) as Array<keyof typeof b>).filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k])) as string[]
    if (secretGiven && (await unsealSecret(sealKey!, found)) !== (await unsealSecret(sealKey!, want))) changed.push('secret')
    if (changed.length) {
      lines.push(`~ provider ${want.id}: ${changed.join(', ')}`)
      steps.push(async () => {
        // Planned on a read; an account connected since is counted by the write itself.
        const outcome = await store.providers.updateProvider(want)
        if (typeof outcome === 'object') throw new ApplyError([`providers: ${movedMessage(found, outcome.connected)}`])
        // Deleted since the plan was read: nothing was updated, and apply must not say it was.
        if (outcome === 'unknown') throw new ApplyError([`providers: ${want.id} no longer exists (deleted while this was applied)`])
      })
    }
  }

  if (opts.prune) {
    if (has('providers'))
      for (const x of providers.filter((x) => !wantProviders.some((w) => w.provider.id === x.id))) {
        // --prune is the consent (as for users and apps); the plan, and --dry-run before it, names who is left with only a password reset.
        const reach = await store.providers.providerReach(x.id)
        lines.push(`- provider ${x.id}${reach ? `: ${reachWords(reach)}` : ''}`)
        steps.push(async () => void (await store.providers.deleteProvider(x.id)))
      }
    if (has('sites'))
      for (const x of sites.filter((x) => !wantSites.some((w) => w.host === x.host))) {
        lines.push(`- site ${x.host}`)
        steps.push(async () => void (await store.sites.deleteSite(x.host)))
      }
    if (has('clients'))
      for (const c of current.filter((x) => !matched.has(x.id))) {
        lines.push(`- client ${c.id} (${c.name})`)
        steps.push(async () => void (await store.clients.deleteClient(c.id)))
      }
    if (has('resources'))
      for (const r of resources.filter((x) => !wantResources.some((w) => w.uri === x.uri))) {
        lines.push(`- resource ${r.uri}`)
        steps.push(async () => void (await store.resources.deleteResource(r.uri)))
      }
    if (has('groups')) {
      const doomed = groups.filter((x) => !wantGroups.some((w) => w.name === x.name))
      // An app still restricted to a group --prune would delete is refused, naming it: deleting the
      // group would open the app to everyone (SPEC, Groups).
      const kept = has('clients') ? [] : current.filter((x) => !matched.has(x.id))
      const restrictedBy = new Map<string, string[]>()
      for (const c of wantClients) for (const g of c.allowedGroups) restrictedBy.set(g, [...(restrictedBy.get(g) ?? []), c.clientId ?? c.name])
      for (const c of kept) for (const g of await store.groups.allowedGroups(c.id)) restrictedBy.set(g, [...(restrictedBy.get(g) ?? []), c.id])
      const refused = doomed.filter((g) => restrictedBy.has(g.name))
      if (refused.length)
        throw new ApplyError(refused.map((g) => `groups: ${g.name} is absent, but the allowed_groups of ${restrictedBy.get(g.name)!.join(', ')} name it; pruning it would open those apps to everyone`))
      for (const g of doomed) {
        lines.push(`- group ${g.name}`)
        steps.push(async () => void (await deleteGroup(store, g.name)))
      }
    }
    if (has('users'))
      for (const u of users.filter((x) => !wantUsers.some((w) => w.email === x.email))) {
        lines.push(`- user ${u.email}`)
        steps.push(async () => void (await store.users.deleteUser(u.id)))
      }
  }

  return {
    lines,
    async apply() {
      const out: string[] = []
      for (const step of steps) await step(out)
      return out
    },
  }
}

/** A client's stored options as `store.clients.updateClient` takes them. */
function recordOf(c: Client) {
  return { name: c.name, redirectUris: c.redirectUris, postLogoutRedirectUris: c.postLogoutRedirectUris, skipConsent: c.skipConsent, requireMfa: c.requireMfa, idTokenAlg: c.idTokenAlg, grantTypes: c.grantTypes, allowedScopes: c.allowedScopes, requirePar: c.requirePar, authMethod: c.authMethod, jwks: c.jwks, jwksUri: c.jwksUri }
}

/** The message of a check that fails, as `path: message`; undefined when it passes. */
function attemptNow(path: string, fn: () => unknown): string | undefined {
  try {
    fn()
    return undefined
  } catch (error) {
    return `${path}: ${(error as Error).message}`
  }
}

/** A client secret from a file only its owner can read (SPEC: missing or readable by others is refused). */
/** `logo_file`: PNG, WebP or SVG by its bytes, at most 256 KiB (the size checked before reading). */
function readLogoFile(path: string, fail: (message: string) => void): ClientLogo | undefined {
  try {
    const size = statSync(path).size
    if (size > MAX_LOGO_BYTES) return void fail(`${path} is ${size} bytes; at most 256 KiB`)
    return checkLogo(new Uint8Array(readFileSync(path)), path)
  } catch (error) {
    fail(error instanceof ClientInputError ? error.message : `cannot read ${path}`)
  }
}

function readSecretFile(path: string, fail: (message: string) => void): string | undefined {
  let mode: number
  try {
    mode = statSync(path).mode
  } catch {
    return fail(`${path} does not exist`), undefined
  }
  if (mode & 0o077) return fail(`${path} is readable by others (chmod 600 it)`), undefined
  const secret = readFileSync(path, 'utf8').trim()
  if (secret.length < 16) return fail(`${path} must hold a secret of at least 16 characters`), undefined
  return secret
}

/** The database in the file's shape, without secrets (and without self-registered clients). */
export async function exportState(store: Store): Promise<Record<string, unknown>> {
  const [clients, groups, users, resources, sites, providers] = await Promise.all([
    listClients(store),
    store.groups.listGroups(),
    store.users.listUsers(),
    store.resources.listResources(),
    store.sites.listSites(),
    store.providers.listProviders(),
  ])
  const operators = clients.filter((c: Client) => c.kind === 'operator')
  return {
    clients: await Promise.all(
      operators.map(async (c) => ({
        client_id: c.id,
        name: c.name,
        redirect_uris: c.redirectUris,
        post_logout_redirect_uris: c.postLogoutRedirectUris,
        public: c.public,
        skip_consent: c.skipConsent,
        require_mfa: c.requireMfa,
        id_token_signed_response_alg: c.idTokenAlg,
        allowed_groups: await store.groups.allowedGroups(c.id),
        introspects: c.introspects,
        ...(c.backchannelLogoutUri === null ? {} : { backchannel_logout_uri: c.backchannelLogoutUri, backchannel_logout_session_required: c.backchannelLogoutSessionRequired }),
        // The logo is not exported (its bytes are no file path); apply keeps a logo its file does not name.
        ...(c.launchUrl === null ? {} : { launch_url: c.launchUrl }),
        grant_types: c.grantTypes,
        allowed_scopes: c.allowedScopes,
        require_pushed_authorization_requests: c.requirePar,
        token_endpoint_auth_method: c.authMethod ?? (c.public ? 'none' : 'client_secret_basic'),
        // Public keys: nothing secret (a jwks_uri is fetched again where the file is applied).
        ...(c.jwks === null ? {} : { jwks: JSON.parse(c.jwks) }),
        ...(c.jwksUri === null ? {} : { jwks_uri: c.jwksUri }),
      })),
    ),
    groups: groups.map((g) => ({ name: g.name, members: g.members.map((m) => m.email) })),
    users: users.map((u) => ({ email: u.email, full_name: u.fullName, admin: u.admin, disabled: u.disabled })),
    resources: resources.map((r) => ({ uri: r.uri, name: r.name, scopes: r.scopes, token_format: r.tokenFormat, introspectors: r.introspectors })),
    sites: sites.map(toSiteView),
    // Never a secret: a provider's comes back through secret_file.
    providers: providers.map(toProviderView),
  }
}
