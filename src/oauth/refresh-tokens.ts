import type { RefreshRecord, Store } from '../db/store'
import type { Clock } from '../lib/clock'
import { constantTimeEqual, sha256 } from '../lib/crypto'
import { mintOpaque, parseOpaque, type MintedToken } from './tokens'

export const REFRESH_TOKEN_PREFIX = 'lk_rt_'

/**
 * Refresh tokens (RFC 6749 §6): `lk_rt_<id>.<verifier>`, stored as the SHA-256 of the verifier,
 * never cached (every use is a rotation, a write). Each lives REFRESH_TOKEN_TTL seconds unused.
 */
export class RefreshTokens {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    readonly ttlSeconds: number,
    /** Seconds during which a just-rotated token may be presented again without revoking its family. */
    readonly graceSeconds: number,
  ) {}

  mint(input: { clientId: string; userId: string; scope: string; familyId: string }): MintedToken {
    return mintOpaque(REFRESH_TOKEN_PREFIX, input, this.clock.now(), this.ttlSeconds)
  }

  /** The id a presented token names, if it is shaped like one of ours. */
  idOf(token: string): number | undefined {
    return parseOpaque(REFRESH_TOKEN_PREFIX, token)?.id
  }

  /** Whether `token` carries the verifier of `row` (constant time). */
  matches(token: string, row: RefreshRecord): boolean {
    const parsed = parseOpaque(REFRESH_TOKEN_PREFIX, token)
    return parsed !== undefined && parsed.id === row.id && constantTimeEqual(sha256(parsed.verifier), row.verifierHash)
  }

  /** The stored row of a presented token whose verifier matches (expired or rotated or not). */
  async identify(token: string): Promise<RefreshRecord | undefined> {
    const id = this.idOf(token)
    const row = id === undefined ? undefined : await this.store.grants.findRefreshToken(id)
    return row && this.matches(token, row) ? row : undefined
  }
}
