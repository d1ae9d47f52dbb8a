import type { Config } from '../config'
import type { ClientRecord, Store } from '../db/store'
import type { Clock } from '../lib/clock'
import { PageError } from '../lib/errors'
import type { Logger } from '../lib/log'
import type { SafeFetchPolicy } from '../lib/safe-fetch'
import { hasInvisible } from '../lib/text'
import { ClientInputError, checkRedirectUri, findClient, insecureRedirectUris, toClient, type Client } from './clients'

/** A document is trusted at most this long, whatever its Cache-Control says (SPEC). */
const MAX_AGE_MS = 24 * 3600_000
/** Without a Cache-Control max-age, a document is fetched again after this long. */
const DEFAULT_AGE_MS = 5 * 60_000
/** Fetches per host per minute, per instance: a burst of new clients from one host waits. */
const FETCHES_PER_HOST = 10
/** Fetches per minute in all, per instance: hosts are cheap (wildcard DNS), this bounds them together. */
const FETCHES_PER_MINUTE = 120
const MAX_REDIRECT_URIS = 20
/** What the page says of any document that was refused or could not be fetched: the same words, whatever the cause. */
export const METADATA_REFUSED = "The application's metadata document could not be fetched or is not valid."

/** How long a fetched document may be used: its Cache-Control's max-age, at most a day; no-store or no-cache, not at all. */
export function freshFor(cacheControl: string | null): number {
  if (!cacheControl) return DEFAULT_AGE_MS
  const directives = cacheControl.toLowerCase().split(',').map((d) => d.trim())
  if (directives.some((d) => d === 'no-store' || d === 'no-cache')) return 0
  const maxAge = directives.map((d) => /^max-age=(\d{1,10})$/.exec(d)).find(Boolean)
  return maxAge ? Math.min(Number(maxAge[1]) * 1000, MAX_AGE_MS) : DEFAULT_AGE_MS
}

/** Whether a client_id names a metadata document: an http(s) URL, as its canonical spelling, with a path. */
export function isMetadataUrl(clientId: string): boolean {
  if (!/^https?:\/\//.test(clientId)) return false
  try {
    const url = new URL(clientId)
    return url.href === clientId && url.pathname !== '/' && !url.hash && !url.username && !url.password
  } catch {
    return false
  }
}

/**
 * Checks a fetched document (draft-ietf-oauth-client-id-metadata-document): a JSON object whose
 * client_id is its own URL, with https or loopback redirect URIs and token_endpoint_auth_method
 * "none" (Latchkey holds no key for such a client). Throws ClientInputError saying what is wrong.
 */
export function readMetadataDocument(url: string, body: string): { name: string; redirectUris: string[] } {
  let doc: unknown
  try {
    doc = JSON.parse(body)
  } catch {
    throw new ClientInputError('is not valid JSON')
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new ClientInputError('is not a JSON object')
  const d = doc as Record<string, unknown>
  if (d.client_id !== url) throw new ClientInputError('names another client_id than its own URL')
  if (d.token_endpoint_auth_method !== 'none') throw new ClientInputError('must set token_endpoint_auth_method to "none"')
  const uris = d.redirect_uris
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > MAX_REDIRECT_URIS || !uris.every((u) => typeof u === 'string'))
    throw new ClientInputError(`must list 1 to ${MAX_REDIRECT_URIS} redirect_uris`)
  const redirectUris = [...new Set(uris.map(checkRedirectUri))]
  for (const uri of redirectUris) if (!/^https?:/.test(uri)) throw new ClientInputError(`has a redirect URI that is neither https nor loopback http: ${uri}`)
  const insecure = insecureRedirectUris(redirectUris)
  if (insecure.length) throw new ClientInputError(`has a plain-http redirect URI that is not loopback: ${insecure[0]}`)
  const rawName = typeof d.client_name === 'string' ? d.client_name.trim().normalize('NFC') : ''
  const name = rawName && rawName.length <= 200 && !hasInvisible(rawName) ? rawName : new URL(url).host
  return { name, redirectUris }
}

/**
 * Clients that identify themselves by the URL of their metadata document. The store's row is the
 * cache, shared by every instance, fresh until its document's Cache-Control says; a stale or new
 * one is fetched, one fetch per URL at a time (coalesced), at most FETCHES_PER_HOST per host and
 * FETCHES_PER_MINUTE in all per minute. The purge deletes the rows of documents nobody used. A document that fails is not stored: the authorize request gets the 400 page, its reason only in the log.
 */
export class MetadataClients {
  private readonly fetching = new Map<string, Promise<Client>>()
  private readonly perHost = new Map<string, { start: number; count: number }>()
  private all = { start: 0, count: 0 }

  constructor(
    private readonly deps: { store: Store; config: Config; clock: Clock; log: Logger },
    private readonly policy: SafeFetchPolicy = { allowHosts: deps.config.clientIdMetadataAllowHosts },
  ) {}

  /**
   * The lookup and the fetch are one step shared by every request for the URL meanwhile: a request
   * whose own lookup missed could otherwise start a second fetch just after the first one stored
   * its row (seen: 2 fetches for 100 parallel requests).
   */
  resolve(url: string): Promise<Client> {
    let pending = this.fetching.get(url)
    if (!pending) {
      pending = this.lookUp(url).finally(() => this.fetching.delete(url))
      this.fetching.set(url, pending)
    }
    return pending
  }

  private async lookUp(url: string): Promise<Client> {
    const row = await this.deps.store.clients.findClient(url)
    if (row && row.kind === 'metadata' && row.metadataExpiresAt !== null && row.metadataExpiresAt > this.deps.clock.now()) return toClient(row)
    return this.fetchClient(url)
  }

  private async fetchClient(url: string): Promise<Client> {
    const parsed = new URL(url)
    this.takeFetch(parsed.host)
    const now = this.deps.clock.now()
    let document: { name: string; redirectUris: string[] }
    let cacheControl: string | null
    // The fetcher (node:http, node:https, node:dns) is loaded with the first document, not at start.
    const { FetchRefused, safeFetch } = await import('../lib/safe-fetch')
    try {
      const fetched = await safeFetch(parsed, this.policy)
      cacheControl = fetched.cacheControl
      document = readMetadataDocument(url, fetched.body)
    } catch (error) {
      if (!(error instanceof FetchRefused || error instanceof ClientInputError)) throw error
      // The reason (an address, a port, an errno, a timeout) only in the log: shown to whoever
      // asked, it would let anyone probe which ports answer behind this server (SPEC).
      this.deps.log.warn('client metadata document refused', { url, reason: error.message })
      throw new PageError(400, 'error.metadataRefused')
    }
    const record: ClientRecord = {
      id: url,
      name: document.name,
      secretHash: null,
      redirectUris: document.redirectUris,
      postLogoutRedirectUris: [],
      skipConsent: false,
      requireMfa: false,
      kind: 'metadata',
      idTokenAlg: 'RS256',
      metadataExpiresAt: now + freshFor(cacheControl),
      registrationTokenHash: null,
      introspects: [],
      grantTypes: ['authorization_code'],
      allowedScopes: [],
      requirePar: false,
      authMethod: null,
      jwks: null,
      jwksUri: null,
    }
    await this.deps.store.clients.saveMetadataClient(record, now)
    return toClient(record)
  }

  private takeFetch(host: string): void {
    const now = this.deps.clock.now()
    let window = this.perHost.get(host)
    if (!window || now - window.start >= 60_000) {
      if (this.perHost.size >= 10_000) this.perHost.clear()
      this.perHost.set(host, (window = { start: now, count: 0 }))
    }
    if (++window.count > FETCHES_PER_HOST)
      throw new PageError(429, 'error.metadataBusyHost', { host })
    if (now - this.all.start >= 60_000) this.all = { start: now, count: 0 }
    if (++this.all.count > FETCHES_PER_MINUTE)
      throw new PageError(429, 'error.metadataBusy')
  }
}

/**
 * The client an authorization request names: a registered one, or — with
 * CLIENT_ID_METADATA_DOCUMENTS on — the one a metadata-document URL describes.
 */
export async function clientForAuthorization(ctx: { store: Store; config: Config; metadataClients: MetadataClients }, clientId: string): Promise<Client | undefined> {
  if (isMetadataUrl(clientId)) return ctx.config.clientIdMetadataDocuments ? ctx.metadataClients.resolve(clientId) : undefined
  return findClient(ctx.store, clientId)
}
