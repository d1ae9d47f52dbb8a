import type { User } from '../accounts/users'
import { isWhole, type Change, type ChangeFeed, type NewToken, type Store, type TokenRecord } from '../db/store'
import type { Clock } from '../lib/clock'
import { constantTimeEqual, randomToken, sha256 } from '../lib/crypto'
import { claimedRow, looksLikeJwt, verifiedRow } from './jwt-access-tokens'
import type { JwsKey } from '../oidc/jwt'
import { TokenCache } from './token-cache'

export const ACCESS_TOKEN_PREFIX = 'lk_at_'

/** `<prefix><id in base 36>.<verifier: 256 random bits, base64url>` (see the schema). */
const TOKEN_SHAPE = /^(lk_[a-z]{2}_)([0-9a-z]{1,11})\.([A-Za-z0-9_-]{43})$/

export function parseOpaque(prefix: string, token: string): { id: number; verifier: string } | undefined {
  const match = TOKEN_SHAPE.exec(token)
  return match && match[1] === prefix ? { id: parseInt(match[2]!, 36), verifier: match[3]! } : undefined
}

/** A token's row (its verifier only hashed) and how to spell it once the row has its id. */
export function mintOpaque<T extends { clientId: string; scope: string }>(
  prefix: string,
  input: T,
  now: number,
  ttlSeconds: number,
): { row: T & { verifierHash: string; expiresAt: number; createdAt: number }; spell(id: number): string; expiresIn: number } {
  const verifier = randomToken()
  return {
    row: { ...input, verifierHash: sha256(verifier), expiresAt: now + ttlSeconds * 1000, createdAt: now },
    spell: (id) => `${prefix}${id.toString(36)}.${verifier}`,
    expiresIn: ttlSeconds,
  }
}

/** What a valid access token grants. */
export interface TokenGrant {
  /** Its row: what a revocation names, and what a stream ends with. */
  tokenId: number
  clientId: string
  /** The authorization (refresh family) it was issued from; null for tokens older than families. */
  familyId: string | null
  /** The resource it is for (RFC 8707, its audience); null for Latchkey's own API. */
  resource: string | null
  scopes: readonly string[]
  expiresAt: number
  issuedAt: number
  /** null for a client's own token (client_credentials): no user, so no userinfo and no settings. */
  user: User | null
}

/** A token a user granted: what userinfo and the settings API accept. */
export type UserGrant = TokenGrant & { user: User }

/** A token about to be stored: its row, and how to spell it once the row has its id. */
export interface MintedToken {
  row: NewToken
  spell(id: number): string
  expiresIn: number
}

/**
 * Access tokens: stored as the SHA-256 of their verifier only; validated through an in-process
 * cache (TOKEN_CACHE_SIZE entries) so the hot path skips the hash and the lookup. Entries expire
 * with their token. The cache hears of every write from the change feed — this instance's (the
 * store emits what it committed), another instance's, the CLI's: deleted tokens named there drop
 * their entries; users named there drop their identity (the `users` map), and a cached grant is
 * served only while its user is the one the map holds, so their tokens' next use reads them
 * again; a change naming nothing empties it all. So a revoked token, or a renamed user, is seen
 * on the next request here and within the feed's delay elsewhere. Purging expired rows leaves
 * it alone: an expired token is refused by its cached expiry anyway. While the feed is down the
 * cache is bypassed. A lookup that raced a change is neither cached nor kept as its user's
 * identity (the generation moved on while it ran).
 */
export class AccessTokens {
  private readonly cache: TokenCache<TokenGrant>
  private generation = 0
  /** Scope lists, client ids and users repeat across tokens: one copy each (bounded). */
  private readonly scopeLists = new Map<string, readonly string[]>()
  private readonly clientIds = new Map<string, string>()
  private readonly users = new Map<string, User>()
  /** Told of every revocation: the ids when known, nothing when it may be any (open streams check theirs). */
  private readonly revoked: Array<(ids?: readonly number[]) => void> = []

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly ttlSeconds: number,
    private readonly changes: ChangeFeed,
    maxCached = 100_000,
    /** For JWT access tokens (RFC 9068): the issuer they must name and the keys that may have signed them. */
    private readonly jwt?: { issuer: string; keys: () => Promise<(kid: string) => JwsKey | undefined> },
  ) {
    this.cache = new TokenCache(maxCached)
    changes.onChange((change) => this.changed(change))
  }

  onRevoked(listener: (ids?: readonly number[]) => void): void {
    this.revoked.push(listener)
  }

  /** The grant of a stored token by its id (a stream ticket names one), while it is valid. */
  async grantById(id: number): Promise<TokenGrant | undefined> {
    const generation = this.generation
    const row = await this.store.tokens.findToken(id)
    return row && row.expiresAt > this.clock.now() ? this.grantOf(row, generation === this.generation) : undefined
  }

  /** A new token for the store to insert; spelled with the id its row gets. */
  mint(input: { clientId: string; userId: string; scope: string; familyId: string; resource: string | null }): MintedToken {
    return mintOpaque(ACCESS_TOKEN_PREFIX, input, this.clock.now(), this.ttlSeconds)
  }

  /** A client's own token (client_credentials): no user, no family; for a registered resource. */
  mintForClient(input: { clientId: string; scope: string; resource: string }) {
    return mintOpaque(ACCESS_TOKEN_PREFIX, input, this.clock.now(), this.ttlSeconds)
  }

  /** Tokens answered from the cache, and looked up (metrics; plain numbers, read when scraped). */
  private hits = 0
  private misses = 0

  get cacheCounts(): { hits: number; misses: number } {
    return { hits: this.hits, misses: this.misses }
  }

  /** A cached grant is returned as it is, and so is a SQLite lookup: a promise only for PostgreSQL's. */
  validate(token: string): TokenGrant | undefined | Promise<TokenGrant | undefined> {
    if (looksLikeJwt(token)) return this.validateJwt(token)
    const parsed = parseOpaque(ACCESS_TOKEN_PREFIX, token)
    if (!parsed) return undefined
    const trusted = this.changes.check()
    const now = this.clock.now()
    if (trusted) {
      const cached = this.cache.get(parsed.id, parsed.verifier)
      // A grant whose user changed since (the map no longer holds its copy) is read again.
      if (cached && (cached.user === null || cached.user === this.users.get(cached.user.id))) {
        this.hits++
        if (cached.expiresAt > now) return cached
        this.cache.delete(parsed.id)
        return undefined
      }
    }
    this.misses++
    return this.lookup(parsed, now, trusted)
  }

  /**
   * A JWT access token is cached under its row's id with the whole JWT as its "verifier": a hit
   * is the very token verified before. A miss verifies the signature, then reads the row — so a
   * revoked JWT stops working here as an opaque token does.
   */
  private validateJwt(token: string): TokenGrant | undefined | Promise<TokenGrant | undefined> {
    const claimed = claimedRow(token)
    if (!claimed || !this.jwt) return undefined
    const trusted = this.changes.check()
    const now = this.clock.now()
    const cached = trusted ? this.cache.get(claimed.id, token) : undefined
    if (cached && (cached.user === null || cached.user === this.users.get(cached.user.id))) return cached.expiresAt > now ? cached : undefined
    const generation = this.generation
    return this.verifiedJwtRow(token).then((row) => {
      if (!row || row.expiresAt <= now) return undefined
      const current = generation === this.generation
      const grant = this.grantOf(row, current)
      if (trusted && current && this.changes.check()) this.cache.offer(claimed.id, token, grant)
      return grant
    })
  }

  private async verifiedJwtRow(token: string): Promise<TokenRecord | undefined> {
    const claimed = this.jwt && (await verifiedRow(token, this.jwt.issuer, this.jwt.keys))
    const row = claimed && (await this.store.tokens.findToken(claimed.id))
    return row && row.resource !== null && row.verifierHash.startsWith(claimed.hashPrefix) ? row : undefined
  }

  private lookup(parsed: { id: number; verifier: string }, now: number, trusted: boolean): TokenGrant | undefined | Promise<TokenGrant | undefined> {
    const generation = this.generation
    const found = this.store.tokens.findToken(parsed.id, trusted ? this.knownUser : undefined)
    return found instanceof Promise ? found.then((row) => this.admit(row, parsed, now, trusted, generation)) : this.admit(found, parsed, now, trusted, generation)
  }

  /** The grant of a row just read, cached unless a revocation ran meanwhile (the generation moved on). */
  private admit(row: TokenRecord | undefined, parsed: { id: number; verifier: string }, now: number, trusted: boolean, generation: number): TokenGrant | undefined {
    if (!row || !constantTimeEqual(sha256(parsed.verifier), row.verifierHash) || row.expiresAt <= now) return undefined
    const current = generation === this.generation
    const grant = this.grantOf(row, current)
    if (trusted && current && this.changes.check()) this.cache.offer(parsed.id, parsed.verifier, grant)
    return grant
  }

  /** `current`: nothing changed while the row was read, so its user may become that user's identity here. */
  private grantOf(row: TokenRecord, current: boolean): TokenGrant {
    return {
      tokenId: row.id,
      clientId: this.clientId(row.clientId),
      familyId: row.familyId,
      resource: row.resource,
      scopes: this.scopes(row.scope),
      expiresAt: row.expiresAt,
      issuedAt: row.createdAt,
      user: row.user && (current ? this.user(row.user) : row.user),
    }
  }

  private readonly knownUser = (id: string): User | undefined => this.users.get(id)

  private scopes(scope: string): readonly string[] {
    let list = this.scopeLists.get(scope)
    if (!list) {
      // Scope strings are combinations of a handful of scopes: few, but bound them anyway.
      if (this.scopeLists.size >= 1024) this.scopeLists.clear()
      this.scopeLists.set(scope, (list = Object.freeze(scope.split(' '))))
    }
    return list
  }

  private clientId(id: string): string {
    const known = this.clientIds.get(id)
    if (known !== undefined) return known
    if (this.clientIds.size >= 4096) this.clientIds.clear()
    this.clientIds.set(id, id)
    return id
  }

  /**
   * One object per user while it is unchanged: a copy read later with any field different
   * replaces it (the grants that hold the old copy keep it, as they would their own).
   */
  private user(read: User): User {
    const known = this.users.get(read.id)
    if (
      known &&
      known.email === read.email &&
      known.fullName === read.fullName &&
      known.avatarUrl === read.avatarUrl &&
      known.emailVerified === read.emailVerified
    )
      return known
    if (this.users.size >= this.cache.capacity) this.users.clear()
    this.users.set(read.id, read)
    return read
  }

  /** The stored row of a presented token, if it parses and its verifier matches (expired or not). */
  identify(token: string) {
    return this.verified(token)
  }

  /**
   * Revokes one token (RFC 7009): the store's delete tells the feed, which drops its entry (not
   * the whole cache) once it committed — the generation moves on then, so a lookup racing the
   * delete is not cached.
   */
  revoke(id: number): Promise<boolean> {
    return this.store.tokens.deleteToken(id)
  }

  /** What the feed reported: tokens deleted, users changed — or, naming nothing, anything. */
  private changed(change: Change | undefined): void {
    if (isWhole(change)) return this.clear()
    this.generation++
    if (change!.users) for (const id of change!.users) this.users.delete(id)
    if (change!.tokens) {
      for (const id of change!.tokens) this.cache.delete(id)
      for (const listener of this.revoked) listener(change!.tokens)
    }
  }

  /** Empties the cache: anything may have changed (a client or user deleted, another process's commit). */
  private clear(): void {
    this.generation++
    this.cache.clear()
    this.users.clear()
    for (const listener of this.revoked) listener()
  }

  get cachedCount(): number {
    return this.cache.size
  }

  /** The stored row of a well-formed token whose verifier matches its hash (constant time), or that a valid JWT names. */
  private async verified(token: string) {
    if (looksLikeJwt(token)) return this.verifiedJwtRow(token)
    const parsed = parseOpaque(ACCESS_TOKEN_PREFIX, token)
    const row = parsed && (await this.store.tokens.findToken(parsed.id))
    return row && constantTimeEqual(sha256(parsed!.verifier), row.verifierHash) ? row : undefined
  }
}
