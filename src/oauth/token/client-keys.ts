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

/**
 * private_key_jwt clients' public keys (RFC 7523): the JWKS given with `--jwks-file`, or the
 * one at `--jwks-uri`, fetched as a client metadata document is (https, public addresses, no
 * redirects, 5 s, 64 KiB) and kept as its Cache-Control says. Bounded.
 */
export class ClientKeys {
  private readonly fetched = new Map<string, { set: KeySet; freshUntil: number; fetchedAt: number }>()
  private readonly policy: SafeFetchPolicy

  constructor(private readonly deps: { config: Config; clock: Clock; log: Logger }) {
    this.policy = { allowHosts: deps.config.clientIdMetadataAllowHosts }
  }

  /** The client's keys; undefined when it has none, or its jwks_uri cannot be fetched. */
  async keysOf(client: Client): Promise<KeySet | undefined> {
    if (client.jwks) return createLocalJWKSet(JSON.parse(client.jwks) as JSONWebKeySet)
    if (!client.jwksUri) return undefined
    const known = this.fetched.get(client.jwksUri)
    if (known && known.freshUntil > this.deps.clock.now()) return known.set
    return this.fetch(client.jwksUri)
  }

  /** After an unknown kid: the keys fetched again, unless they were fetched less than a minute ago. */
  async refetch(client: Client): Promise<KeySet | undefined> {
    if (!client.jwksUri) return undefined
    const known = this.fetched.get(client.jwksUri)
    if (known && this.deps.clock.now() - known.fetchedAt < REFETCH_AFTER_MS) return undefined
    return this.fetch(client.jwksUri)
  }

  private async fetch(uri: string): Promise<KeySet | undefined> {
    try {
      const fetched = await safeFetch(new URL(uri), this.policy)
      const set = createLocalJWKSet(JSON.parse(fetched.body) as JSONWebKeySet)
      const now = this.deps.clock.now()
      if (this.fetched.size >= 1000) this.fetched.clear()
      this.fetched.set(uri, { set, freshUntil: now + freshFor(fetched.cacheControl), fetchedAt: now })
      return set
    } catch (error) {
      if (!(error instanceof FetchRefused || error instanceof SyntaxError || error instanceof TypeError)) throw error
      this.deps.log.warn('client jwks_uri refused', { url: uri, reason: (error as Error).message })
      return undefined
    }
  }
}
