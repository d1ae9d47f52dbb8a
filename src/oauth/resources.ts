import { isWhole, UniqueViolation, type ResourceRecord, type Store } from '../db/store'
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
  scopes: Record<string, string>
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

/** Checks and stores a resource; throws ResourceInputError with a message for the operator. */
export async function createResource(
  store: Store,
  input: { uri: string; name: string; scopes: string[]; tokenFormat?: string; introspectors?: string[] },
  now: number,
): Promise<ResourceRecord> {
  const uri = canonicalResource(input.uri)
  if (!uri) throw new ResourceInputError(`--uri must be an absolute http(s) URI without a fragment, got "${input.uri}"`, { key: 'admin.input.resourceUri', params: { uri: input.uri } })
  const name = input.name.trim().normalize('NFC')
  if (!name || name.length > 200 || hasInvisible(name)) throw new ResourceInputError('--name must be 1 to 200 characters, without control or invisible characters', { key: 'admin.input.name' })
  if (input.scopes.length === 0) throw new ResourceInputError('at least one --scope NAME=DESCRIPTION is required', { key: 'admin.input.scopesNone' })
  const scopes: Record<string, string> = {}
  for (const spec of input.scopes) {
    const eq = spec.indexOf('=')
    const scope = eq < 0 ? spec : spec.slice(0, eq)
    const description = eq < 0 ? '' : spec.slice(eq + 1).trim()
    if (!SCOPE_TOKEN.test(scope)) throw new ResourceInputError(`--scope "${spec}": a scope name is 1 to 128 printable characters without spaces, quotes or backslashes`, { key: 'admin.input.scopeName', params: { scope: spec } })
    if ((SUPPORTED_SCOPES as readonly string[]).includes(scope)) throw new ResourceInputError(`--scope "${scope}" is one of Latchkey's own scopes`, { key: 'admin.input.scopeOwn', params: { scope } })
    if (!description || description.length > 200 || hasInvisible(description)) throw new ResourceInputError(`--scope "${scope}" needs a description (NAME=DESCRIPTION, at most 200 characters) for the consent page`, { key: 'admin.input.scopeDescription', params: { scope } })
    if (scopes[scope] !== undefined) throw new ResourceInputError(`--scope "${scope}" is given twice`, { key: 'admin.input.scopeTwice', params: { scope } })
    scopes[scope] = description
  }
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

  constructor(
    private readonly store: Store,
    private readonly issuer: string,
  ) {
    // Deleted tokens and changed users change no resource.
    store.changes.onChange((change) => {
      if (isWhole(change)) {
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
    const found = await this.store.resources.findResource(uri)
    // Not cached: a deleted site stops being a resource at once, on every instance.
    if (!found) return siteResource(this.store, uri)
    if (found && trusted && this.store.changes.check()) {
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
