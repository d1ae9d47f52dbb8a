import { createLocalJWKSet, type JSONWebKeySet } from 'jose'
import type { Config } from '../../config'
import type { Clock } from '../../lib/clock'
import type { Logger } from '../../lib/log'
import { FetchRefused, safeFetch, type SafeFetchPolicy } from '../../lib/safe-fetch'
import { freshFor } from '../client-metadata'
import type { Client } from '../clients'

export type KeySet = ReturnType<typeof createLocalJWKSet>

/** An unknown kid fetches a client's jwks_uri again, at most once a minute (a key rotated in, or a forged kid). */
const REFETCH_AFTER_MS = 60_000
/** A jwks_uri that could not be fetched is not asked again for this long: its client's requests do not each become a fetch. */
const FAILED_RETRY_MS = 10_000
const MAX_URIS = 1000

/** What was fetched from a jwks_uri: its keys (none after a failure), until when they are used, and when it was asked last. */
interface Fetched {
  set: KeySet | undefined
  freshUntil: number
  fetchedAt: number
}

/**
 * private_key_jwt clients' public keys (RFC 7523): the JWKS given with `--jwks-file`, or the
 * one at `--jwks-uri`, fetched as a client metadata document is (https, public addresses, no
 * redirects, 5 s, 64 KiB) and kept as its Cache-Control says. A failed fetch is remembered for
 * 10 s, and requests arriving while a fetch runs wait for that one: however many assertions
 * come, a jwks_uri sees at most one fetch at a time, one per 10 s while it fails, one a minute
 * for unknown kids. Bounded.
 */
export class ClientKeys {
  private readonly fetched = new Map<string, Fetched>()
  private readonly running = new Map<string, Promise<KeySet | undefined>>()
  private readonly policy: SafeFetchPolicy

  constructor(
    private readonly deps: { config: Config; clock: Clock; log: Logger },
    policy?: SafeFetchPolicy,
  ) {
    this.policy = policy ?? { allowHosts: deps.config.clientIdMetadataAllowHosts }
  }

  /** The client's keys; undefined when it has none, or its jwks_uri cannot be fetched. */
  async keysOf(client: Client): Promise<KeySet | undefined> {
    if (client.jwks) return createLocalJWKSet(JSON.parse(client.jwks) as JSONWebKeySet)
    if (!client.jwksUri) return undefined
    const known = this.fetched.get(client.jwksUri)
    if (known && known.freshUntil > this.deps.clock.now()) return known.set
    return this.fetch(client.jwksUri)
  }

  /** After an unknown kid: the keys fetched again, unless they were asked for less than a minute ago. */
  async refetch(client: Client): Promise<KeySet | undefined> {
    if (!client.jwksUri) return undefined
    const known = this.fetched.get(client.jwksUri)
    if (known && this.deps.clock.now() - known.fetchedAt < REFETCH_AFTER_MS) return undefined
    return this.fetch(client.jwksUri)
  }

  /** One fetch per jwks_uri at a time: callers that come while it runs share its answer. */
  private fetch(uri: string): Promise<KeySet | undefined> {
    const running = this.running.get(uri)
    if (running) return running
    const fetching = this.load(uri).finally(() => this.running.delete(uri))
    this.running.set(uri, fetching)
    return fetching
  }

  private async load(uri: string): Promise<KeySet | undefined> {
    let entry: Fetched
    try {
      const fetched = await safeFetch(new URL(uri), this.policy)
      const set = createLocalJWKSet(JSON.parse(fetched.body) as JSONWebKeySet)
      const now = this.deps.clock.now()
      entry = { set, freshUntil: now + freshFor(fetched.cacheControl), fetchedAt: now }
    } catch (error) {
      if (!(error instanceof FetchRefused || error instanceof SyntaxError || error instanceof TypeError)) throw error
      this.deps.log.warn('client jwks_uri refused', { url: uri, reason: (error as Error).message })
      const now = this.deps.clock.now()
      // Keys still fresh stay in use (a refetch for an unknown kid failed); none otherwise, for a few seconds.
      const previous = this.fetched.get(uri)
      entry = previous && previous.freshUntil > now ? { ...previous, fetchedAt: now } : { set: undefined, freshUntil: now + FAILED_RETRY_MS, fetchedAt: now }
    }
    if (this.fetched.size >= MAX_URIS && !this.fetched.has(uri)) this.fetched.clear()
    this.fetched.set(uri, entry)
    return entry.set
  }
}
