import { isWhole, UniqueViolation, type ResourceRecord, type ResourceScopes, type ScopeDescription, type Store } from '../db/store'
import { isLocale, LOCALES } from '../i18n/locales'
import { hasInvisible } from '../lib/text'
import { isClientId } from './clients'
import { SUPPORTED_SCOPES } from './scopes'
import { InputError } from '../lib/errors'
import { siteFor } from '../authz/decide'
import { candidateHosts } from '../authz/hosts'

export class ResourceInputError extends InputError {}

export interface ResourceView {
  uri: string
  name: string
  /** Each scope's description as it was given: a text, or `{en: …, de: …}` (apply). */
  scopes: ResourceScopes
  token_format: 'opaque' | 'jwt'
  introspectors: string[]
}

export const toResourceView = (r: ResourceRecord): ResourceView => ({ uri: r.uri, name: r.name, scopes: r.scopes, token_format: r.tokenFormat, introspectors: r.introspectors })

/**
 * A resource indicator as Latchkey keeps it (RFC 8707 §2: an absolute URI without a fragment):
 * without a trailing slash, so `https://mcp.example.com/` and `https://mcp.example.com` name one
 * resource. Undefined when it cannot be one.
 */
export function canonicalResource(raw: string): string | undefined {
  if (raw.length > 2000 || hasInvisible(raw) || raw.includes('#')) return undefined
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return undefined
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined
  return url.href.replace(/\/+$/, '')
}

/** RFC 6749 §3.3 scope-token characters; and not one of Latchkey's own scopes. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]{1,128}$/

/** What is wrong with a resource scope's name, for the operator; undefined when it is fine. */
export function scopeNameProblem(scope: string): string | undefined {
  if (!SCOPE_TOKEN.test(scope)) return 'a scope name is 1 to 128 printable characters without spaces, quotes or backslashes'
  if ((SUPPORTED_SCOPES as readonly string[]).includes(scope)) return "it is one of Latchkey's own scopes"
  return undefined
}

const textProblem = (text: unknown): string | undefined =>
  typeof text !== 'string' || !text.trim() || text.trim().length > 200 || hasInvisible(text.trim()) ? 'a description is 1 to 200 characters, without control or invisible characters' : undefined

/**
 * What is wrong with a scope's description as `apply` gives it: one text, or a mapping of
 * Latchkey's languages to texts (SPEC "Brand and language"). Such a mapping must have `en`:
 * a reader whose language it lacks gets the English, as every other page falls back to English,
 * and the CLI and `/admin`'s English pages read it. Undefined when it is fine.
 */
export function scopeDescriptionProblem(value: unknown): string | undefined {
  if (typeof value === 'string') return textProblem(value)
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'must be a description, or a mapping of languages to descriptions ({en: …, de: …})'
  for (const [locale, text] of Object.entries(value)) {
    if (!isLocale(locale)) return `"${locale}" is not a language Latchkey speaks (${LOCALES.join(', ')})`
    const problem = textProblem(text)
    if (problem) return `${locale}: ${problem}`
  }
  if (!Object.hasOwn(value, 'en')) return 'needs an en description: the words for readers of the other languages'
  return undefined
}

/** A checked description as it is kept: its texts trimmed, the languages in the order given. */
export function keptDescription(value: ScopeDescription): ScopeDescription {
  if (typeof value === 'string') return value.trim()
  return Object.fromEntries(Object.entries(value).map(([locale, text]) => [locale, text.trim()]))
}

/**
 * The scopes of `resource create`'s `--scope NAME=DESCRIPTION…` (and /admin's lines), or of
 * `apply`'s mapping (whose descriptions may be per language); throws ResourceInputError.
 */
function resourceScopes(given: string[] | ResourceScopes): ResourceScopes {
  const scopes: ResourceScopes = {}
  if (!Array.isArray(given)) {
    for (const [scope, description] of Object.entries(given)) {
      const problem = scopeNameProblem(scope) ?? scopeDescriptionProblem(description)
      if (problem) throw new ResourceInputError(`scope "${scope}": ${problem}`)
      scopes[scope] = keptDescription(description)
    }
    return scopes
  }
  for (const spec of given) {
    const eq = spec.indexOf('=')
    const scope = eq < 0 ? spec : spec.slice(0, eq)
    const description = eq < 0 ? '' : spec.slice(eq + 1).trim()
    if (!SCOPE_TOKEN.test(scope)) throw new ResourceInputError(`--scope "${spec}": a scope name is 1 to 128 printable characters without spaces, quotes or backslashes`, { key: 'admin.input.scopeName', params: { scope: spec } })
    if ((SUPPORTED_SCOPES as readonly string[]).includes(scope)) throw new ResourceInputError(`--scope "${scope}" is one of Latchkey's own scopes`, { key: 'admin.input.scopeOwn', params: { scope } })
    if (!description || description.length > 200 || hasInvisible(description)) throw new ResourceInputError(`--scope "${scope}" needs a description (NAME=DESCRIPTION, at most 200 characters) for the consent page`, { key: 'admin.input.scopeDescription', params: { scope } })
    if (scopes[scope] !== undefined) throw new ResourceInputError(`--scope "${scope}" is given twice`, { key: 'admin.input.scopeTwice', params: { scope } })
    scopes[scope] = description
  }
  return scopes
}

/** Checks and stores a resource; throws ResourceInputError with a message for the operator. */
export async function createResource(
  store: Store,
  input: { uri: string; name: string; scopes: string[] | ResourceScopes; tokenFormat?: string; introspectors?: string[] },
  now: number,
): Promise<ResourceRecord> {
  const uri = canonicalResource(input.uri)
  if (!uri) throw new ResourceInputError(`--uri must be an absolute http(s) URI without a fragment, got "${input.uri}"`, { key: 'admin.input.resourceUri', params: { uri: input.uri } })
  const name = input.name.trim().normalize('NFC')
  if (!name || name.length > 200 || hasInvisible(name)) throw new ResourceInputError('--name must be 1 to 200 characters, without control or invisible characters', { key: 'admin.input.name' })
  if ((Array.isArray(input.scopes) ? input.scopes.length : Object.keys(input.scopes).length) === 0) throw new ResourceInputError('at least one --scope NAME=DESCRIPTION is required', { key: 'admin.input.scopesNone' })
  const scopes = resourceScopes(input.scopes)
  const tokenFormat = input.tokenFormat ?? 'opaque'
  if (tokenFormat !== 'opaque' && tokenFormat !== 'jwt') throw new ResourceInputError(`--token-format must be opaque or jwt, got "${tokenFormat}"`)
  const introspectors = [...new Set(input.introspectors ?? [])]
  for (const id of introspectors) {
    const client = isClientId(id) ? await store.clients.findClient(id) : undefined
    if (!client) throw new ResourceInputError(`--introspector "${id}" is not a registered client`, { key: 'admin.input.noClient', params: { id } })
    if (client.secretHash === null) throw new ResourceInputError(`--introspector "${id}" is a public client; introspection needs a confidential one`, { key: 'admin.input.introspectorPublic', params: { id } })
  }
  const resource: ResourceRecord = { uri, name, scopes, tokenFormat, introspectors }
  try {
    await store.resources.insertResource(resource, now)
  } catch (error) {
    if (error instanceof UniqueViolation) throw new ResourceInputError(`a resource with the URI "${uri}" exists already`, { key: 'admin.input.resourceExists', params: { uri } })
    throw error
  }
  return resource
}

/**
 * SPEC (forward-auth, "Machines"): every site is a resource whose URI is its origin
 * (`https://photos.example.com`, no path), with Latchkey's identity scopes only, so an app or a
 * machine can hold a token the site's check accepts.
 */
async function siteResource(store: Store, uri: string): Promise<ResourceRecord | undefined> {
  const m = /^https?:\/\/([a-z0-9.-]+)(?::\d+)?$/.exec(uri)
  if (!m) return undefined
  const site = siteFor(m[1]!, await store.sites.findSites(candidateHosts(m[1]!)))
  return site && { uri, name: site.name, scopes: {}, tokenFormat: 'opaque', introspectors: [] }
}

/** The registered resource a `resource` parameter names, with or without a trailing slash. */
export async function findResource(store: Store, raw: string): Promise<ResourceRecord | undefined> {
  const uri = canonicalResource(raw)
  return uri ? store.resources.findResource(uri) : undefined
}

/** The audience a `resource` parameter asks for: Latchkey's own API (null), a registered resource, or none (invalid_target). */
export type Audience = { resource: ResourceRecord | null } | undefined

/**
 * Registered resources as the authorize, token and introspection endpoints read them: cached
 * while the change feed is alive (a resource changed or deleted anywhere — the feed reports it
 * as a change naming nothing — empties it), bounded, and never caching an unknown URI.
 */
export class ResourceDirectory {
  private readonly known = new Map<string, ResourceRecord>()
  /** Moves on with every change that may touch a resource: a read that ran across one is not kept. */
  private generation = 0

  constructor(
    private readonly store: Store,
    private readonly issuer: string,
  ) {
    // Deleted tokens and changed users change no resource.
    store.changes.onChange((change) => {
      if (isWhole(change)) {
        this.generation++
        this.known.clear()
        this.all = undefined
      }
    })
  }

  /** What a `resource` parameter names: `ISSUER/api` (RFC 9728's name for the settings API) is Latchkey's own. */
  async audience(raw: string): Promise<Audience> {
    const uri = canonicalResource(raw)
    if (!uri) return undefined
    if (uri === `${this.issuer}/api`) return { resource: null }
    const resource = await this.byUri(uri)
    return resource && { resource }
  }

  async byUri(uri: string): Promise<ResourceRecord | undefined> {
    const trusted = this.store.changes.check()
    const cached = trusted ? this.known.get(uri) : undefined
    if (cached) return cached
    const generation = this.generation
    const found = await this.store.resources.findResource(uri)
    // Not cached: a deleted site stops being a resource at once, on every instance.
    if (!found) return siteResource(this.store, uri)
    // check() first: it delivers what another process committed meanwhile (SQLite's data_version), moving the generation on.
    if (trusted && this.store.changes.check() && generation === this.generation) {
      if (this.known.size >= 1000) this.known.clear()
      this.known.set(uri, found)
    }
    return found
  }

  private all: Promise<ResourceRecord[]> | undefined

  /**
   * Every registered resource (a client_credentials request without `resource` finds its
   * audience by the scopes asked): kept while the change feed is alive, read again after any change.
   */
  list(): Promise<ResourceRecord[]> {
    if (this.all && this.store.changes.check()) return this.all
    const read = this.store.resources.listResources()
    if (this.store.changes.check()) this.all = read
    read.catch(() => (this.all = undefined))
    return read
  }

}
