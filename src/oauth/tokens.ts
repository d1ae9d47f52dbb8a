import { and, eq, sql } from 'drizzle-orm'
import type { User } from '../accounts/users'
import { changes, insertedId, type Db } from '../db/client'
import type { ExternalWrites } from '../db/external-writes'
import { prepared } from '../db/prepared'
import { accessTokens, users } from '../db/schema'
import type { Clock } from '../lib/clock'
import { constantTimeEqual, randomToken, sha256 } from '../lib/crypto'

export const ACCESS_TOKEN_PREFIX = 'lk_at_'

/** `lk_at_<id in base 36>.<verifier: 256 random bits, base64url>` (see the schema). */
const TOKEN_SHAPE = /^lk_at_([0-9a-z]{1,11})\.([A-Za-z0-9_-]{43})$/

function parseToken(token: string): { id: number; verifier: string } | undefined {
  const match = TOKEN_SHAPE.exec(token)
  return match ? { id: parseInt(match[1]!, 36), verifier: match[2]! } : undefined
}

/** What a valid access token grants. */
export interface TokenGrant {
  clientId: string
  scopes: readonly string[]
  expiresAt: number
  user: User
}

/**
 * Access tokens: stored as the SHA-256 of their verifier only; validated through a small
 * in-process cache keyed by the token so the hot path skips the hash and the join. The cache is
 * bounded, entries expire with their token, and it is emptied on every revocation in this
 * process and whenever another process (the CLI deleting a user or client) commits to the
 * database (ExternalWrites), so a revoked token stops working on the very next request.
 */
export class AccessTokens {
  private readonly cache = new Map<string, TokenGrant>()

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly ttlSeconds: number,
    private readonly external: ExternalWrites,
    private readonly maxCached = 10_000,
  ) {
    external.onChange(() => this.forget())
  }

  /** Stores a new token; its id is the row's. Call inside a write job. */
  issue(input: { clientId: string; userId: string; scope: string }): { token: string; id: number; expiresIn: number } {
    const verifier = randomToken()
    const now = this.clock.now()
    const id = insertedId(
      prepared(this.db, 'insertToken', () =>
        this.db.orm
          .insert(accessTokens)
          .values({
            verifierHash: sql.placeholder('verifierHash'),
            clientId: sql.placeholder('clientId'),
            userId: sql.placeholder('userId'),
            scope: sql.placeholder('scope'),
            expiresAt: sql.placeholder('expiresAt'),
            createdAt: sql.placeholder('createdAt'),
          })
          .prepare(),
      ).run({ ...input, verifierHash: sha256(verifier), expiresAt: now + this.ttlSeconds * 1000, createdAt: now }),
    )
    return { token: `${ACCESS_TOKEN_PREFIX}${id.toString(36)}.${verifier}`, id, expiresIn: this.ttlSeconds }
  }

  validate(token: string): TokenGrant | undefined {
    this.external.check()
    const now = this.clock.now()
    const cached = this.cache.get(token)
    if (cached) {
      if (cached.expiresAt > now) return cached
      this.cache.delete(token)
      return undefined
    }
    const row = this.verified(token)
    if (!row || row.expiresAt <= now) return undefined
    const grant: TokenGrant = {
      clientId: row.clientId,
      scopes: row.scope.split(' '),
      expiresAt: row.expiresAt,
      user: row.user,
    }
    if (this.cache.size >= this.maxCached) this.cache.delete(this.cache.keys().next().value!)
    this.cache.set(token, grant)
    return grant
  }

  /** Revokes what a user granted a client (call inside a write job). */
  revokeGrant(userId: string, clientId: string): number {
    this.forget()
    return changes(this.db.orm
      .delete(accessTokens)
      .where(and(eq(accessTokens.userId, userId), eq(accessTokens.clientId, clientId)))
      .run())
  }

  /** The id and client of a presented token, if it parses and its verifier matches (expired or not). */
  identify(token: string): { id: number; clientId: string } | undefined {
    const row = this.verified(token)
    return row && { id: row.id, clientId: row.clientId }
  }

  /** Revokes one token (a replayed code's, RFC 6749 §4.1.2, or on request, RFC 7009). Call inside a write job. */
  revoke(id: number): number {
    this.forget()
    return changes(this.db.orm.delete(accessTokens).where(eq(accessTokens.id, id)).run())
  }

  /** Empties the cache: after any revocation, deletion of a user or client, or a purge. */
  forget(): void {
    this.cache.clear()
  }

  get cachedCount(): number {
    return this.cache.size
  }

  /** The stored row of a well-formed token whose verifier matches its hash (constant time). */
  private verified(token: string) {
    const parsed = parseToken(token)
    const row = parsed && this.lookup(parsed.id)
    return row && constantTimeEqual(sha256(parsed!.verifier), row.verifierHash) ? row : undefined
  }

  private lookup(id: number) {
    return prepared(this.db, 'tokenById', () =>
      this.db.orm
        .select({
          id: accessTokens.id,
          verifierHash: accessTokens.verifierHash,
          clientId: accessTokens.clientId,
          scope: accessTokens.scope,
          expiresAt: accessTokens.expiresAt,
          user: { id: users.id, email: users.email, fullName: users.fullName, avatarUrl: users.avatarUrl },
        })
        .from(accessTokens)
        .innerJoin(users, eq(users.id, accessTokens.userId))
        .where(eq(accessTokens.id, sql.placeholder('id')))
        .prepare(),
    ).get({ id })
  }
}
