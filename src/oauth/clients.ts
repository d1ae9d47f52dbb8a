import { UniqueViolation, type ClientKind, type ClientRecord, type IdTokenAlg, type Store } from '../db/store'
import { constantTimeEqual, randomToken, sha256 } from '../lib/crypto'
import { hasInvisible } from '../lib/text'
import { InputError } from '../lib/errors'
import { isPublicAddress } from '../lib/public-address'
import { isIP } from 'node:net'
import { clientLogoPath } from '../views/app-logo'

export interface Client {
  id: string
  name: string
  redirectUris: string[]
  postLogoutRedirectUris: string[]
  public: boolean
  skipConsent: boolean
  /** Authorizing needs two factors (`--require-mfa`). */
  requireMfa: boolean
  /** Registered by the operator, met through its metadata document (the id is that URL), or registered dynamically. */
  kind: ClientKind
  /** How its ID tokens are signed (`--id-token-alg`; OpenID Connect id_token_signed_response_alg). */
  idTokenAlg: IdTokenAlg
  /** A resource server's right to introspect these clients' access tokens, or ['*'] every client's (`--introspect`). */
  introspects: string[]
  /** OpenID Connect Back-Channel Logout 1.0 (`--backchannel-logout-uri`); null: none. */
  backchannelLogoutUri: string | null
  backchannelLogoutSessionRequired: boolean
  /** The grants it may use (`--grant`; RFC 7591 grant_types). */
  grantTypes: string[]
  /** The resource scopes its client_credentials tokens may carry (`--allowed-scope`). */
  allowedScopes: string[]
  /** Its authorization requests must be pushed first (RFC 9126 §5, `--require-par`). */
  requirePar: boolean
  /** 'private_key_jwt' (RFC 7523, `--auth-method`): it signs assertions with a key of its JWKS; null: its secret, or none. */
  authMethod: 'private_key_jwt' | null
  /** Its JWKS (JSON text, `--jwks-file`) or where it is published (`--jwks-uri`). */
  jwks: string | null
  jwksUri: string | null
  /** Where "Your apps" on /account opens it (`--launch-url`). */
  launchUrl: string | null
  /** Its logo's version (`--logo-file`, src/oauth/client-logo.ts); null: no logo. */
  logoEtag: string | null
}

export interface ClientView {
  client_id: string
  name: string
  redirect_uris: string[]
  post_logout_redirect_uris: string[]
  public: boolean
  skip_consent: boolean
  require_mfa: boolean
  id_token_signed_response_alg: IdTokenAlg
  introspects: string[]
  /** Only for an app that has one (so the other apps' views keep their shape). */
  backchannel_logout_uri?: string
  backchannel_logout_session_required?: boolean
  grant_types: string[]
  allowed_scopes: string[]
  require_pushed_authorization_requests: boolean
  token_endpoint_auth_method: string
  jwks_uri: string | null
  /** Only for an app that has one. */
  launch_url?: string
  /** Where its logo is served (ISSUER-relative), only for an app that has one: `apply` takes a file (`logo_file`). */
  logo_url?: string
}

export class ClientInputError extends InputError {}
/** A JWKS the form cannot take, said in one message (the CLI's names the exact fault). */
const JWKS_INVALID = { key: 'admin.input.jwksInvalid' } as const

const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'file:', 'vbscript:', 'blob:'])

/** RFC 6749 §3.1.2: an absolute URI without a fragment; no script-bearing schemes. */
export function checkRedirectUri(raw: string): string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new ClientInputError(`redirect URI "${raw}" is not an absolute URL`, { key: 'admin.input.redirectAbsolute', params: { uri: raw } })
  }
  if (hasInvisible(raw) || raw.length > 2000) throw new ClientInputError(`redirect URI must be at most 2000 characters, without control characters`, { key: 'admin.input.redirectLength' })
  if (url.hash || raw.includes('#')) throw new ClientInputError(`redirect URI "${raw}" must not have a fragment`, { key: 'admin.input.redirectFragment', params: { uri: raw } })
  if (FORBIDDEN_SCHEMES.has(url.protocol)) throw new ClientInputError(`redirect URI "${raw}" uses a forbidden scheme`, { key: 'admin.input.redirectScheme', params: { uri: raw } })
  return raw
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost'])

/**
 * Whether `presented` is one of the client's redirect URIs: string-equal (RFC 6749 §3.1.2.3), or —
 * for a public client's loopback URI registered without a port — the same URI on any port (RFC
 * 8252 §7.3: native apps and MCP clients listen on a port the system picks at run time).
 */
export function redirectUriMatches(client: Pick<Client, 'redirectUris' | 'public'>, presented: string): boolean {
  if (client.redirectUris.includes(presented)) return true
  if (!client.public || !presented.startsWith('http://')) return false
  let url: URL
  try {
    url = new URL(presented)
  } catch {
    return false
  }
  if (!LOOPBACK_HOSTS.has(url.hostname) || !url.port) return false
  url.port = ''
  // Without its port it must be a registered loopback URI that has none: same host, path and query.
  return client.redirectUris.some((registered) => {
    if (!registered.startsWith('http://')) return false
    const r = new URL(registered)
    return LOOPBACK_HOSTS.has(r.hostname) && !r.port && r.href === url.href
  })
}

/** RFC 9700 §2.1: redirect URIs should use TLS, except loopback ones used during development. */
export function insecureRedirectUris(uris: readonly string[]): string[] {
  return uris.filter((raw) => {
    const url = new URL(raw)
    return url.protocol === 'http:' && !['localhost', '127.0.0.1', '[::1]'].includes(url.hostname)
  })
}

export function toView(client: Client): ClientView {
  return {
    client_id: client.id,
    name: client.name,
    redirect_uris: client.redirectUris,
    post_logout_redirect_uris: client.postLogoutRedirectUris,
    public: client.public,
    skip_consent: client.skipConsent,
    require_mfa: client.requireMfa,
    id_token_signed_response_alg: client.idTokenAlg,
    introspects: client.introspects,
    ...(client.backchannelLogoutUri === null ? {} : { backchannel_logout_uri: client.backchannelLogoutUri, backchannel_logout_session_required: client.backchannelLogoutSessionRequired }),
    grant_types: client.grantTypes,
    allowed_scopes: client.allowedScopes,
    require_pushed_authorization_requests: client.requirePar,
    token_endpoint_auth_method: client.authMethod ?? (client.public ? 'none' : 'client_secret_basic'),
    jwks_uri: client.jwksUri,
    ...(client.launchUrl === null ? {} : { launch_url: client.launchUrl }),
    ...(client.logoEtag === null ? {} : { logo_url: clientLogoPath(client.id, client.logoEtag) }),
  }
}

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost'])
/** RFC 6761 §6.3: localhost and every name under it are loopback (with or without the root's dot), whatever DNS says. */
const isLocalhostName = (hostname: string) => /(^|\.)localhost\.?$/.test(hostname)

/**
 * A back-channel logout URI (Back-Channel Logout §2.2: absolute, no fragment). An operator's may be
 * any https:// URL or a loopback http:// one; one from dynamic registration must be https:// (plain
 * http only on CLIENT_ID_METADATA_ALLOW_HOSTS) on a public address — the metadata fetcher's rules,
 * checked again on every address it resolves to when a logout token is sent.
 */
export function checkBackchannelLogoutUri(raw: string, registeredBy: 'operator' | 'dynamic', allowHosts: readonly string[] = []): string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new ClientInputError(`back-channel logout URI "${raw}" is not an absolute URL`)
  }
  if (hasInvisible(raw) || raw.length > 2000) throw new ClientInputError('back-channel logout URI must be at most 2000 characters, without control characters')
  if (url.hash || raw.includes('#')) throw new ClientInputError(`back-channel logout URI "${raw}" must not have a fragment`)
  if (url.username || url.password) throw new ClientInputError('back-channel logout URI must not carry credentials')
  if (registeredBy === 'operator') {
    if (url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname))) return url.href
    throw new ClientInputError(`back-channel logout URI "${raw}" must be https:// (or http:// on a loopback address)`)
  }
  const allowed = allowHosts.includes(url.host.toLowerCase()) || allowHosts.includes(url.hostname.toLowerCase())
  if (url.protocol !== 'https:' && !(allowed && url.protocol === 'http:')) throw new ClientInputError('backchannel_logout_uri must be an https:// URL')
  const literal = url.hostname.replace(/^\[|\]$/g, '')
  if (!allowed && (isLocalhostName(url.hostname) || (isIP(literal) && !isPublicAddress(literal)))) throw new ClientInputError('backchannel_logout_uri must be on a public address')
  return url.href
}

/** Sets or (with null) removes an app's back-channel logout URI, checked as its registration requires; false for an unknown app. */
export async function setBackchannelLogout(store: Store, id: string, input: { uri: string | null; sessionRequired?: boolean }, registeredBy: 'operator' | 'dynamic' = 'operator', allowHosts: readonly string[] = []): Promise<boolean> {
  const uri = input.uri === null || input.uri === '' ? null : checkBackchannelLogoutUri(input.uri, registeredBy, allowHosts)
  return store.clients.setBackchannelLogout(id, uri, uri !== null && (input.sessionRequired ?? false))
}

/** What discovery lists as id_token_signing_alg_values_supported: RS256 first, the default. */
export const ID_TOKEN_ALGS: readonly IdTokenAlg[] = ['RS256', 'ES256', 'EdDSA']

/** `--id-token-alg`: one of the algorithms Latchkey signs ID tokens with (RS256 when not given). */
export function checkIdTokenAlg(raw: string | undefined): IdTokenAlg {
  if (raw === undefined) return 'RS256'
  if (!(ID_TOKEN_ALGS as readonly string[]).includes(raw)) throw new ClientInputError(`the ID-token algorithm must be one of ${ID_TOKEN_ALGS.join(', ')}, got "${raw}"`)
  return raw as IdTokenAlg
}

export function toClient(row: ClientRecord): Client {
  return {
    id: row.id,
    name: row.name,
    redirectUris: row.redirectUris,
    postLogoutRedirectUris: row.postLogoutRedirectUris,
    public: isPublic(row),
    skipConsent: row.skipConsent,
    requireMfa: row.requireMfa,
    kind: row.kind,
    idTokenAlg: row.idTokenAlg,
    introspects: row.introspects,
    backchannelLogoutUri: row.backchannelLogoutUri ?? null,
    backchannelLogoutSessionRequired: row.backchannelLogoutSessionRequired ?? false,
    grantTypes: row.grantTypes,
    allowedScopes: row.allowedScopes,
    requirePar: row.requirePar,
    authMethod: row.authMethod,
    jwks: row.jwks,
    jwksUri: row.jwksUri,
    launchUrl: row.launchUrl ?? null,
    logoEtag: row.logoEtag ?? null,
  }
}

/** `--introspect '*'`: every client's tokens. */
export const EVERY_CLIENT = '*'

/**
 * `--introspect`: the clients whose access tokens a resource server (a mail server, a web-server
 * module) may introspect with credentials of its own — existing clients' ids, or '*' alone for
 * every client's. Without repeats; an unknown id is refused (a typo would fail silently later),
 * and so is any for a public client: introspecting needs a secret (RFC 7662 §2.1).
 */
export async function checkIntrospects(store: Store, ids: readonly string[], isPublic = false): Promise<string[]> {
  // `--introspect ''` (alone) takes the right away.
  const wanted = [...new Set(ids.filter((id) => id !== ''))]
  checkIntrospector(isPublic, wanted)
  if (wanted.includes(EVERY_CLIENT)) {
    if (wanted.length > 1) throw new ClientInputError(`--introspect '*' (every client's tokens) stands alone, not beside client ids`, { key: 'admin.input.introspectAll' })
    return [EVERY_CLIENT]
  }
  for (const id of wanted) if (!(await findClient(store, id))) throw new ClientInputError(`--introspect: no client with id "${id}"`, { key: 'admin.input.noClient', params: { id } })
  return wanted
}

function checkIntrospector(isPublic: boolean, introspects: readonly string[]): void {
  if (isPublic && introspects.length) throw new ClientInputError('a public client cannot introspect tokens (it has no secret to authenticate with)', { key: 'admin.input.publicIntrospects' })
}

/** Gives a resource server the right to introspect these clients' tokens (as checkIntrospects returns them); false for an unknown client. */
export async function setIntrospects(store: Store, client: Client, introspects: readonly string[]): Promise<boolean> {
  checkIntrospector(client.public, introspects)
  return store.clients.setIntrospects(client.id, introspects)
}

/** The grants an app may be allowed (`--grant`): the first is the default, the only one that redirects. */
export const GRANT_TYPES = ['authorization_code', 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code'] as const
export const CLIENT_CREDENTIALS = 'client_credentials'
export const DEVICE_CODE = 'urn:ietf:params:oauth:grant-type:device_code'
const REDIRECTING = 'authorization_code'

/**
 * `--grant` and `--allowed-scope`: known grants without repeats (at least one); client_credentials
 * only for a confidential client (RFC 6749 §4.4: it authenticates) and its allowed scopes only
 * registered resources' scopes (a client's own token has no user: Latchkey's scopes mean nothing to it).
 */
export async function checkGrants(store: Store, input: { public: boolean; grantTypes: readonly string[]; allowedScopes: readonly string[] }): Promise<{ grantTypes: string[]; allowedScopes: string[] }> {
  const { grantTypes, allowedScopes } = checkGrantList(input)
  if (allowedScopes.length) {
    const resourceScopes = new Set((await store.resources.listResources()).flatMap((r) => Object.keys(r.scopes)))
    for (const scope of allowedScopes) if (!resourceScopes.has(scope)) throw new ClientInputError(`--allowed-scope "${scope}" is not a scope of a registered resource`, { key: 'admin.input.allowedScope', params: { scope } })
  }
  return { grantTypes, allowedScopes }
}

/** checkGrants without the resources: the grants, and which may have allowed scopes (`apply` checks the scopes against the file's resources too). */
export function checkGrantList(input: { public: boolean; grantTypes: readonly string[]; allowedScopes: readonly string[] }): { grantTypes: string[]; allowedScopes: string[] } {
  const grantTypes = [...new Set(input.grantTypes)]
  if (grantTypes.length === 0) throw new ClientInputError('an app needs at least one --grant', { key: 'admin.input.noGrant' })
  for (const grant of grantTypes)
    if (!(GRANT_TYPES as readonly string[]).includes(grant)) throw new ClientInputError(`--grant must be one of ${GRANT_TYPES.join(', ')}, got "${grant}"`)
  const allowedScopes = [...new Set(input.allowedScopes.filter((s) => s !== ''))]
  if (grantTypes.includes(CLIENT_CREDENTIALS) && input.public) throw new ClientInputError('a public client cannot use client_credentials (it has no secret to authenticate with)', { key: 'admin.input.publicClientCredentials' })
  if (allowedScopes.length && !grantTypes.includes(CLIENT_CREDENTIALS)) throw new ClientInputError('--allowed-scope is for apps with --grant client_credentials', { key: 'admin.input.allowedScopesNeedClientCredentials' })
  return { grantTypes, allowedScopes }
}

/**
 * `--auth-method private_key_jwt` with `--jwks-file` (its contents) or `--jwks-uri` (RFC 7523):
 * exactly one of them, public keys only, each with a kid (the assertion names it); never for a
 * public client. Without it, no keys.
 */
export function checkKeys(input: { public: boolean; authMethod?: string | null; jwks?: string | null; jwksUri?: string | null }): { authMethod: 'private_key_jwt' | null; jwks: string | null; jwksUri: string | null } {
  const method = input.authMethod ?? null
  if (method !== null && method !== 'private_key_jwt' && method !== 'client_secret') throw new ClientInputError(`--auth-method must be client_secret or private_key_jwt, got "${method}"`)
  if (method !== 'private_key_jwt') {
    if (input.jwks || input.jwksUri) throw new ClientInputError('--jwks-file and --jwks-uri are for --auth-method private_key_jwt', { key: 'admin.input.keysOnlyForKeyed' })
    return { authMethod: null, jwks: null, jwksUri: null }
  }
  if (input.public) throw new ClientInputError('a public client cannot use private_key_jwt', { key: 'admin.input.publicKeys' })
  if (!input.jwks === !input.jwksUri) throw new ClientInputError('--auth-method private_key_jwt needs one of --jwks-file or --jwks-uri', { key: 'admin.input.keysNeeded' })
  if (input.jwksUri) {
    let url: URL | undefined
    try {
      url = new URL(input.jwksUri)
    } catch {}
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.hash) throw new ClientInputError(`--jwks-uri must be an https URL, got "${input.jwksUri}"`, { key: 'admin.input.jwksUri', params: { uri: input.jwksUri } })
    return { authMethod: method, jwks: null, jwksUri: url.href }
  }
  return { authMethod: method, jwks: checkJwks(input.jwks!), jwksUri: null }
}

/** A JWKS of public keys (RFC 7517), each with a kid; as compact JSON text. */
export function checkJwks(text: string): string {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw new ClientInputError('the JWKS is not JSON', JWKS_INVALID)
  }
  const keys = (parsed as { keys?: unknown })?.keys
  if (!Array.isArray(keys) || keys.length === 0 || keys.length > 20) throw new ClientInputError('the JWKS must be {"keys": [...]} with 1 to 20 keys', JWKS_INVALID)
  for (const key of keys as Array<Record<string, unknown>>) {
    if (typeof key !== 'object' || key === null || typeof key.kid !== 'string' || !key.kid) throw new ClientInputError('every key of the JWKS needs a kid', JWKS_INVALID)
    if (!['RSA', 'EC', 'OKP'].includes(key.kty as string)) throw new ClientInputError(`key "${key.kid}": kty must be RSA, EC or OKP`, JWKS_INVALID)
    if ('d' in key || 'p' in key || 'k' in key) throw new ClientInputError(`key "${key.kid}" is a private or secret key; give the public keys only`, { key: 'admin.input.jwksPrivate', params: { kid: key.kid } })
  }
  return JSON.stringify({ keys })
}

/** A client's name and redirect URIs as given: checked, trimmed, without repeats. Only a redirecting grant needs a redirect URI. */
export function checkClientOptions(input: { name: string; redirectUris: string[]; postLogoutRedirectUris?: string[]; grantTypes?: readonly string[] }) {
  const name = input.name.trim().normalize('NFC')
  if (!name || name.length > 200) throw new ClientInputError('name must be 1 to 200 characters', { key: 'admin.input.name' })
  if (hasInvisible(name)) throw new ClientInputError('name contains control or invisible characters', { key: 'admin.input.name' })
  if (input.redirectUris.length === 0 && (input.grantTypes ?? [REDIRECTING]).includes(REDIRECTING)) throw new ClientInputError('at least one --redirect-uri is required', { key: 'admin.input.redirectNone' })
  const redirectUris = [...new Set(input.redirectUris.map(checkRedirectUri))]
  const postLogoutRedirectUris = [...new Set((input.postLogoutRedirectUris ?? []).map(checkRedirectUri))]
  return { name, redirectUris, postLogoutRedirectUris }
}

/** Replaces an app's name, redirect URIs and options, checked as at creation; false for an unknown app. */
export async function updateClient(
  store: Store,
  id: string,
  input: {
    name: string
    redirectUris: string[]
    postLogoutRedirectUris: string[]
    skipConsent: boolean
    requireMfa: boolean
    idTokenAlg?: string
    public: boolean
    grantTypes: string[]
    allowedScopes: string[]
    requirePar: boolean
    authMethod: string | null
    jwks: string | null
    jwksUri: string | null
  },
): Promise<boolean> {
  const grants = await checkGrants(store, input)
  const keys = checkKeys(input)
  return store.clients.updateClient(id, { ...checkClientOptions({ ...input, ...grants }), skipConsent: input.skipConsent, requireMfa: input.requireMfa, idTokenAlg: checkIdTokenAlg(input.idTokenAlg), ...grants, requirePar: input.requirePar, ...keys })
}

export async function createClient(
  store: Store,
  input: {
    name: string
    redirectUris: string[]
    postLogoutRedirectUris?: string[]
    public: boolean
    skipConsent: boolean
    requireMfa?: boolean
    id?: string
    secret?: string
    idTokenAlg?: string
    introspects?: string[]
    backchannelLogoutUri?: string
    backchannelLogoutSessionRequired?: boolean
    grantTypes?: string[]
    allowedScopes?: string[]
    requirePar?: boolean
    authMethod?: string
    jwks?: string
    jwksUri?: string
  },
  now: number,
): Promise<{ client: Client; secret: string | null }> {
  const { grantTypes, allowedScopes } = await checkGrants(store, { public: input.public, grantTypes: input.grantTypes ?? [REDIRECTING], allowedScopes: input.allowedScopes ?? [] })
  const requirePar = input.requirePar ?? false
  const keys = checkKeys(input)
  const { name, redirectUris, postLogoutRedirectUris } = checkClientOptions({ ...input, grantTypes })
  const introspects = input.introspects ?? []
  checkIntrospector(input.public, introspects)
  if (input.id !== undefined && !CHOSEN_CLIENT_ID.test(input.id)) throw new ClientInputError(`client_id "${input.id}" must be 1 to 64 of A-Z a-z 0-9 . _ -`)
  const id = input.id ?? Buffer.from(crypto.getRandomValues(new Uint8Array(12))).toString('hex')
  // A private_key_jwt client has keys instead of a secret.
  const secret = input.public || keys.authMethod ? null : (input.secret ?? randomToken('lk_cs_'))
  const requireMfa = input.requireMfa ?? false
  const idTokenAlg = checkIdTokenAlg(input.idTokenAlg)
  const backchannelLogoutUri = input.backchannelLogoutUri === undefined ? null : checkBackchannelLogoutUri(input.backchannelLogoutUri, 'operator')
  const backchannelLogoutSessionRequired = backchannelLogoutUri !== null && (input.backchannelLogoutSessionRequired ?? false)
  const backchannel = { backchannelLogoutUri, backchannelLogoutSessionRequired }
  const record = { id, name, secretHash: secret && sha256(secret), redirectUris, postLogoutRedirectUris, skipConsent: input.skipConsent, requireMfa, idTokenAlg, introspects, grantTypes, allowedScopes, requirePar, ...keys, ...backchannel }
  try {
    await store.clients.insertClient({ ...record, kind: 'operator', metadataExpiresAt: null, registrationTokenHash: null }, now)
  } catch (error) {
    if (error instanceof UniqueViolation) throw new ClientInputError(`a client with the id "${id}" exists already`)
    throw error
  }
  return { client: { id, name, redirectUris, postLogoutRedirectUris, public: input.public, skipConsent: input.skipConsent, requireMfa, kind: 'operator', idTokenAlg, introspects, grantTypes, allowedScopes, requirePar, ...keys, ...backchannel, launchUrl: null, logoEtag: null }, secret }
}

export async function listClients(store: Store): Promise<Client[]> {
  return (await store.clients.listClients()).map(toClient)
}

/** A client id an operator chooses (`latchkey apply`): plain, so it needs no escaping anywhere. */
export const CHOSEN_CLIENT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

/**
 * Client ids are hex (generated), chosen (`latchkey apply`: letters, digits, `. _ -`), or the https URL of a client ID metadata document (printable ASCII, as a
 * parsed URL spells it); anything else (a NUL byte, kilobytes of text) is no client and is not
 * looked up.
 */
const CLIENT_ID = /^(?:[A-Za-z0-9._-]{1,64}|https?:\/\/[\x21-\x7e]{1,2000})$/

export function isClientId(id: string): boolean {
  return CLIENT_ID.test(id)
}

export async function findClient(store: Store, id: string): Promise<Client | undefined> {
  if (!CLIENT_ID.test(id)) return undefined
  const row = await store.clients.findClient(id)
  return row && toClient(row)
}

/** A public client: no secret, no keys (RFC 6749 §2.1); it authenticates with method "none". */
export function isPublic(row: ClientRecord): boolean {
  return row.secretHash === null && row.authMethod === null
}

/** The client's row, if this instance holds it in memory and may trust it now (no read); undefined: ask findClient. */
export function peekClient(store: Store, id: string): ClientRecord | undefined {
  return CLIENT_ID.test(id) ? store.clients.peekClient(id) : undefined
}

/** Deletes the client; its codes, tokens, consents and settings go with it (ON DELETE CASCADE). */
export function deleteClient(store: Store, id: string): Promise<boolean> {
  return store.clients.deleteClient(id)
}

/** Issues a new secret; the old one stops working at once. Public clients have none to rotate. */
export async function rotateSecret(store: Store, id: string): Promise<string | undefined> {
  const secret = randomToken('lk_cs_')
  return (await store.clients.setClientSecret(id, sha256(secret))) ? secret : undefined
}

/** Returns the client when `secret` is its secret (constant-time over the hashes). */
export async function verifyClientSecret(store: Store, id: string, secret: string): Promise<Client | undefined> {
  if (!CLIENT_ID.test(id)) return undefined
  const row = await store.clients.findClient(id)
  if (!row || row.secretHash === null) return undefined
  return constantTimeEqual(sha256(secret), row.secretHash) ? toClient(row) : undefined
}
