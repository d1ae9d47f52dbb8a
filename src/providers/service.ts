/**
 * Upstream providers as the operator manages them (SPEC "Sign in with another account"): the
 * rules a provider's settings obey, and its client secret — sealed under the server's seal key,
 * because Latchkey must send it to the provider (a hash could not be sent). It is never printed,
 * logged or exported.
 */
import { readFileSync, statSync } from 'node:fs'
import { isIP } from 'node:net'
import type { ProviderKind, ProviderReach, ProviderRecord, Store } from '../db/store'
import { UniqueViolation, sameOrigin } from '../db/store'
import { randomToken } from '../lib/crypto'
import { InputError } from '../lib/errors'
import { isPublicAddress } from '../lib/public-address'
import { sealKeyFrom, seal, unseal, type SealKey } from '../lib/seal'

export class ProviderInputError extends InputError {}

export const PROVIDER_KINDS: readonly ProviderKind[] = ['oidc', 'google', 'github']
const GOOGLE_ISSUER = 'https://accounts.google.com'
const GITHUB = 'https://github.com'
const GITHUB_API = 'https://api.github.com'
const ID = /^[a-z0-9][a-z0-9-]{0,39}$/
const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/

export interface ProviderInput {
  id?: string
  name?: string
  kind?: string
  issuer?: string
  apiUrl?: string
  clientId?: string
  /** The secret itself (read from a file by the caller: readSecretFile). */
  clientSecret?: string
  scope?: string
  allowCreate?: boolean
  allowedDomains?: string[]
  linkVerifiedEmail?: boolean
  trustMfa?: boolean
}

/** What `provider list --json`, `/admin` and `export` show: never the secret. */
export interface ProviderView {
  id: string
  name: string
  kind: ProviderKind
  issuer: string
  api_url?: string
  client_id: string
  scope: string
  allow_create: boolean
  allowed_domains: string[]
  link_verified_email: boolean
  trust_mfa: boolean
}

export function toProviderView(p: ProviderRecord): ProviderView {
  return {
    id: p.id,
    name: p.name,
    kind: p.kind,
    issuer: p.issuer,
    ...(p.apiUrl ? { api_url: p.apiUrl } : {}),
    client_id: p.clientId,
    scope: p.scope,
    allow_create: p.allowCreate,
    allowed_domains: p.allowedDomains,
    link_verified_email: p.linkVerifiedEmail,
    trust_mfa: p.trustMfa,
  }
}

/** The callback registered at the provider: ISSUER/login/provider/ID/callback (SPEC). */
export const callbackUrl = (issuer: string, id: string) => `${issuer}/login/provider/${id}/callback`

/** A secret from a file only its owner can read (SPEC: a file readable by others is refused). */
export function readSecretFile(path: string): string {
  let mode: number
  try {
    mode = statSync(path).mode
  } catch {
    throw new ProviderInputError(`${path} does not exist`)
  }
  if (mode & 0o077) throw new ProviderInputError(`${path} is readable by others (chmod 600 it)`)
  const secret = readFileSync(path, 'utf8').trim()
  if (secret.length === 0 || secret.length > 1000 || /[\s\x00-\x1f]/.test(secret)) throw new ProviderInputError(`${path} must hold the client secret on one line`)
  return secret
}

/**
 * An issuer (or GitHub Enterprise's API URL): https:// on a public address; plain http, loopback
 * and private addresses only for hosts in CLIENT_ID_METADATA_ALLOW_HOSTS. A name is checked again
 * on every address it resolves to whenever it is fetched (src/lib/safe-fetch.ts).
 */
export function checkIssuer(raw: string, allowHosts: readonly string[], what = 'issuer'): string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new ProviderInputError(`${what} "${raw}" is not an absolute URL`)
  }
  if (raw.length > 500 || url.username || url.password || url.search || url.hash || raw.includes('#') || raw.includes('?')) {
    throw new ProviderInputError(`${what} must be an URL of at most 500 characters without credentials, query or fragment`)
  }
  const allowed = allowHosts.includes(url.host.toLowerCase()) || allowHosts.includes(url.hostname.toLowerCase())
  if (url.protocol !== 'https:' && !(allowed && url.protocol === 'http:')) throw new ProviderInputError(`${what} must be https:// (plain http only for a host in CLIENT_ID_METADATA_ALLOW_HOSTS)`)
  const literal = url.hostname.replace(/^\[|\]$/g, '')
  if (!allowed && (url.hostname === 'localhost' || url.hostname.endsWith('.localhost') || (isIP(literal) && !isPublicAddress(literal)))) {
    throw new ProviderInputError(`${what} must be on a public address (or its host in CLIENT_ID_METADATA_ALLOW_HOSTS)`)
  }
  return url.href.replace(/\/$/, '')
}

function checkName(raw: string): string {
  const name = raw.trim()
  if (name.length === 0 || name.length > 60 || /[\x00-\x1f\x7f]/.test(name)) throw new ProviderInputError('name must be 1–60 characters without control characters')
  return name
}

/** The id in the callback URL: given, or made from the name ("Acme SSO" → acme-sso). */
function checkId(raw: string | undefined, name: string): string {
  const id = raw ?? name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40)
  if (!ID.test(id)) throw new ProviderInputError(`id "${id}" must be 1–40 lower-case letters, digits and dashes (give one with --id)`)
  return id
}

function checkDomains(raw: readonly string[]): string[] {
  return [...new Set(raw.map((d) => d.trim().toLowerCase()))].map((d) => {
    if (!DOMAIN.test(d)) throw new ProviderInputError(`allowed domain "${d}" is not a domain name`)
    return d
  })
}

function checkScope(raw: string, kind: ProviderKind): string {
  const scopes = raw.split(' ').filter(Boolean)
  if (scopes.length === 0 || raw.length > 500 || scopes.some((s) => !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(s))) throw new ProviderInputError('scope must be space-separated scope names (RFC 6749 §3.3)')
  // An OpenID Connect sign-in is an id_token: without `openid` there would be none to check.
  if (kind !== 'github' && !scopes.includes('openid')) throw new ProviderInputError('scope must include openid')
  return scopes.join(' ')
}

function checkKind(raw: string | undefined): ProviderKind {
  const kind = (raw ?? 'oidc') as ProviderKind
  if (!PROVIDER_KINDS.includes(kind)) throw new ProviderInputError(`kind must be one of ${PROVIDER_KINDS.join(', ')}`)
  return kind
}

/** Issuer and API URL by kind: Google's issuer is fixed; GitHub's pages are on the API's host (Enterprise: https://HOST/api/v3 → https://HOST). */
function endpoints(kind: ProviderKind, input: ProviderInput, allowHosts: readonly string[]): { issuer: string; apiUrl: string | null } {
  if (kind === 'github') {
    if (input.issuer) throw new ProviderInputError('a github provider takes --api-url (GitHub Enterprise), not --issuer')
    if (!input.apiUrl) return { issuer: GITHUB, apiUrl: GITHUB_API }
    const apiUrl = checkIssuer(input.apiUrl, allowHosts, 'api URL')
    return { issuer: new URL(apiUrl).origin, apiUrl }
  }
  if (input.apiUrl) throw new ProviderInputError('--api-url is for github providers only')
  if (kind === 'google') return { issuer: checkIssuer(input.issuer ?? GOOGLE_ISSUER, allowHosts), apiUrl: null }
  if (!input.issuer) throw new ProviderInputError('--issuer is required')
  return { issuer: checkIssuer(input.issuer, allowHosts), apiUrl: null }
}

/** The server's seal key, read (or made, once) from the database: the CLI seals with the same key the server unseals with. */
export async function sealKeyOf(store: Store, now: number): Promise<SealKey> {
  return sealKeyFrom(await store.serverSecret('seal', randomToken, now))
}

/** Sealed to the provider's id: a sealed secret copied to another provider's row does not open. */
export const sealSecret = (key: SealKey, id: string, secret: string) => seal(key, secret, `provider:${id}`)
export const unsealSecret = (key: SealKey, p: ProviderRecord) => unseal(key, p.clientSecretSealed, `provider:${p.id}`)

/** A whole provider from input (create, and apply's full description). */
export async function checkProvider(input: ProviderInput, key: SealKey, allowHosts: readonly string[], now: number): Promise<ProviderRecord> {
  const name = checkName(input.name ?? '')
  const id = checkId(input.id, name)
  const kind = checkKind(input.kind)
  const { issuer, apiUrl } = endpoints(kind, input, allowHosts)
  const clientId = (input.clientId ?? '').trim()
  if (!clientId || clientId.length > 500 || /[\s\x00-\x1f]/.test(clientId)) throw new ProviderInputError('--client-id is required (at most 500 characters, no spaces)')
  if (!input.clientSecret) throw new ProviderInputError('--client-secret-file is required')
  return {
    id,
    name,
    kind,
    issuer,
    apiUrl,
    clientId,
    clientSecretSealed: await sealSecret(key, id, input.clientSecret),
    scope: checkScope(input.scope ?? (kind === 'github' ? 'read:user user:email' : 'openid email profile'), kind),
    allowCreate: input.allowCreate ?? false,
    allowedDomains: checkDomains(input.allowedDomains ?? []),
    linkVerifiedEmail: input.linkVerifiedEmail ?? false,
    trustMfa: input.trustMfa ?? false,
    updatedAt: now,
  }
}

export async function createProvider(store: Store, key: SealKey, input: ProviderInput, allowHosts: readonly string[], now: number): Promise<ProviderRecord> {
  const provider = await checkProvider(input, key, allowHosts, now)
  try {
    await store.providers.insertProvider(provider, now)
  } catch (error) {
    if (error instanceof UniqueViolation) throw new ProviderInputError(`a provider with id "${provider.id}" exists (give another with --id)`)
    throw error
  }
  return provider
}

/** Why a provider with `connected` accounts may not move from `old`'s origin (movedAway). */
export function movedMessage(old: ProviderRecord, connected: number): string {
  const accounts = connected === 1 ? '1 account is' : `${connected} accounts are`
  return `${accounts} connected through ${old.id} at ${old.apiUrl ?? old.issuer}; a subject is unique only at its issuer (OpenID Connect Core §2), so another issuer's could sign in to it: create a new provider instead`
}

/**
 * What deleting a provider does to people, in the CLI's words (English, as the CLI speaks; /admin
 * says it from the catalog): "3 people are connected through it; 1 of them has no password or
 * passkey and will have to reset their password by email to sign in again".
 */
export function reachWords(reach: ProviderReach): string {
  if (reach.connected === 0) return 'nobody is connected through it'
  const people = reach.connected === 1 ? '1 person is' : `${reach.connected} people are`
  if (reach.stranded === 0) return `${people} connected through it; each has a password, a passkey or another connected account`
  const have = reach.stranded === 1 ? 'has' : 'have'
  return `${people} connected through it; ${reach.stranded} of them ${have} no password or passkey and will have to reset their password by email to sign in again`
}

/**
 * Why `next` may not replace `old`, or undefined: an identity is the provider and its subject, and
 * a subject is unique only at its issuer (OpenID Connect Core §2) — with accounts connected, another
 * issuer, GitHub API or kind would let that issuer's subject 1234 sign in to whoever had 1234 here.
 * A read, for `apply`'s plan: the write decides again, in its own transaction (ProviderStore.updateProvider).
 */
export async function movedAway(store: Store, old: ProviderRecord, next: ProviderRecord): Promise<string | undefined> {
  if (sameOrigin(old, next)) return undefined
  const connected = await store.providers.countIdentities(old.id)
  return connected === 0 ? undefined : movedMessage(old, connected)
}

/** Changes what `input` names; the rest stays. Undefined for an unknown id. */
export async function updateProvider(store: Store, key: SealKey, id: string, input: ProviderInput, allowHosts: readonly string[], now: number): Promise<ProviderRecord | undefined> {
  const old = await store.providers.findProvider(id)
  if (!old) return undefined
  const kind = (input.kind ?? old.kind) as ProviderKind
  const keepsEndpoints = input.issuer === undefined && input.apiUrl === undefined && kind === old.kind
  const merged: ProviderInput = {
    id,
    name: input.name ?? old.name,
    kind,
    issuer: keepsEndpoints ? (kind === 'github' ? undefined : old.issuer) : input.issuer,
    apiUrl: keepsEndpoints ? (old.apiUrl ?? undefined) : input.apiUrl,
    clientId: input.clientId ?? old.clientId,
    clientSecret: input.clientSecret ?? (await unsealSecret(key, old)) ?? undefined,
    scope: input.scope ?? (kind === old.kind ? old.scope : undefined),
    allowCreate: input.allowCreate ?? old.allowCreate,
    allowedDomains: input.allowedDomains ?? old.allowedDomains,
    linkVerifiedEmail: input.linkVerifiedEmail ?? old.linkVerifiedEmail,
    trustMfa: input.trustMfa ?? old.trustMfa,
  }
  if (merged.clientSecret === undefined) throw new ProviderInputError('the stored secret no longer opens (the seal key changed): give --client-secret-file')
  const provider = await checkProvider(merged, key, allowHosts, now)
  // The move's check and the write in one transaction (two instances, or a sign-in linking at once).
  const outcome = await store.providers.updateProvider(provider)
  if (outcome === 'unknown') return undefined
  if (outcome !== 'updated') throw new ProviderInputError(movedMessage(old, outcome.connected))
  return provider
}
