import type { FoundRefresh, NewToken, RefreshLookup, Store } from '../db/store'
import type { Clock } from '../lib/clock'
import { constantTimeEqual, randomToken, sha256 } from '../lib/crypto'

export const REFRESH_TOKEN_PREFIX = 'lk_rt_'

/**
 * `lk_rt_<family in base 36>.<key: 22 chars><secret: 43 chars>`; before families had keys,
 * `lk_rt_<own row id>.<secret>` (still accepted). The key is the family's, in every token of
 * it; the secret is the token's own.
 */
const SHAPE = /^lk_rt_([0-9a-z]{1,11})\.([A-Za-z0-9_-]{22})?([A-Za-z0-9_-]{43})$/

/** A presented refresh token, read (nothing checked yet). */
export interface PresentedRefresh {
  lookup: RefreshLookup
  /** The family key it carries; undefined for an old token. */
  key: string | undefined
  verifier: string
}

/** A family's key, as a presented token carries it, and its hash as stored (already checked). */
export interface FamilyKey {
  key: string
  hash: string
}

/** A refresh token about to be stored, and how to spell it once its family has an id. */
export interface MintedRefresh {
  row: NewToken
  keyHash: string
  spell(familyRef: number): string
}

/** The rate limit on refreshing one family (issue 18: storage per family stays bounded). */
export const REFRESHES_PER_MINUTE = 60
/** How many unrotated tokens a family may have: a use within the grace adds one (two tabs). */
export const MAX_LIVE_BRANCHES = 8

/**
 * Refresh tokens (RFC 6749 §6), stored as the SHA-256 of the verifier, never cached (every use
 * is a rotation, a write). Each lives REFRESH_TOKEN_TTL seconds unused. Reuse detection (RFC
 * 9700 §4.14.2) needs no row per rotation: a token that carries its family's key but matches no
 * live row of it was rotated, and revokes the family.
 */
export class RefreshTokens {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    readonly ttlSeconds: number,
    /** Seconds during which a just-rotated token may be presented again without revoking its family. */
    readonly graceSeconds: number,
  ) {}

  /**
   * A new token of a family: with its key and that key's stored hash (a refresh), or a new key
   * (a new family, or an old one that had none).
   */
  mint(input: { clientId: string; userId: string; scope: string; familyId: string; resource: string | null }, family?: FamilyKey): MintedRefresh {
    const key = family?.key ?? randomToken().slice(0, 22)
    const verifier = key + randomToken()
    const now = this.clock.now()
    return {
      row: { ...input, verifierHash: sha256(verifier), expiresAt: now + this.ttlSeconds * 1000, createdAt: now },
      keyHash: family?.hash ?? sha256(key),
      spell: (familyRef) => `${REFRESH_TOKEN_PREFIX}${familyRef.toString(36)}.${verifier}`,
    }
  }

  read(token: string): PresentedRefresh | undefined {
    const match = SHAPE.exec(token)
    if (!match) return undefined
    const id = parseInt(match[1]!, 36)
    const key = match[2]
    const verifier = (key ?? '') + match[3]!
    return { lookup: key === undefined ? { tokenId: id } : { family: id, verifierHash: sha256(verifier) }, key, verifier }
  }

  /**
   * Whether the presented token belongs to the family it names: it carries the family's key, or
   * (an old token) its row's verifier. Only a member's stale token revokes a family.
   */
  isMember(presented: PresentedRefresh, found: FoundRefresh): boolean {
    if (presented.key === undefined) return found.token !== undefined && constantTimeEqual(sha256(presented.verifier), found.token.verifierHash)
    return found.family.keyHash !== null && constantTimeEqual(sha256(presented.key), found.family.keyHash)
  }

  /** Whether a member's token is current: its row is there and not rotated, or rotated within the grace. */
  isCurrent(found: FoundRefresh, now: number): boolean {
    const token = found.token
    if (!token || token.expiresAt <= now) return false
    return token.rotatedAt === null || (this.graceSeconds > 0 && now - token.rotatedAt < this.graceSeconds * 1000)
  }

  /** The rows of a presented token that belongs to its family (expired, rotated or not). */
  async identify(token: string): Promise<(FoundRefresh & { presented: PresentedRefresh }) | undefined> {
    const presented = this.read(token)
    const found = presented && (await this.store.grants.findRefreshToken(presented.lookup))
    return found && this.isMember(presented, found) ? { ...found, presented } : undefined
  }
}
