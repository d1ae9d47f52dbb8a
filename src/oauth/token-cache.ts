import { constantTimeEqual } from '../lib/crypto'

/**
 * The validated-token cache: keyed by the token's row id, holding the verifier to compare (in
 * constant time) and what the token grants. Bounded to `capacity` entries in a ring of slots:
 * a new id takes the next slot, evicting whoever held it (first in, first out), so an insert
 * is constant time — evicting through `Map.keys().next()` cost 6–7 µs in Bun. The map holds
 * only a slot number per id and the slots live in plain arrays, so an entry is its verifier,
 * its grant and a map cell (~170 bytes; tests/oauth/token-cache.test.ts bounds it). Values
 * that repeat across tokens (users, scopes, client ids) are shared by the caller.
 *
 * Once full, a token is admitted on its second miss within a window (a "doorkeeper", as in
 * TinyLFU): when more tokens are active than the cache holds, caching each one on its first
 * miss only churns — every miss evicted an entry another request would have hit, and on 1M
 * tokens served that way the cache was slower than none (38–40k against 45–46k req/s). A
 * token used again soon still gets in at its second request.
 *
 * The slots grow with the entries (doubling, up to `capacity`) and the doorkeeper's bits are made
 * when the cache first fills: an idle server does not hold a full cache's arrays (1.5–3.7 MB of an idle
 * server's RSS at the default 100,000, measured).
 */
export class TokenCache<G> {
  private readonly slots = new Map<number, number>()
  /** The id in each slot; grown (doubling) as slots are first used. */
  private ids = new Float64Array(0)
  private verifiers: Array<string | undefined> = []
  private grants: Array<G | undefined> = []
  private head = 0
  /** One bit per hashed id seen missing since the window began; ~16 bits per entry. Made when the cache first fills. */
  private seen: Uint8Array | undefined
  private readonly seenBits: number
  private seenCount = 0

  constructor(readonly capacity: number) {
    this.seenBits = Math.min(24, Math.max(10, Math.ceil(Math.log2(Math.max(capacity, 1) * 16))))
  }

  /**
   * Caches a token that just missed: at once while there is room or when it is cached already
   * (read again: its user changed), otherwise on its second miss within the window (the last
   * `capacity` first misses). True when it was cached.
   */
  offer(id: number, verifier: string, grant: G): boolean {
    if (this.slots.size >= this.capacity && !this.slots.has(id) && !this.seenBefore(id)) return false
    this.set(id, verifier, grant)
    return true
  }

  private seenBefore(id: number): boolean {
    const seen = (this.seen ??= new Uint8Array(2 ** (this.seenBits - 3)))
    const bit = Math.imul(id | 0, 0x9e3779b1) >>> (32 - this.seenBits)
    const byte = bit >>> 3
    const mask = 1 << (bit & 7)
    if (seen[byte]! & mask) return true
    seen[byte] = seen[byte]! | mask
    if (++this.seenCount >= this.capacity) {
      seen.fill(0)
      this.seenCount = 0
    }
    return false
  }

  get(id: number, verifier: string): G | undefined {
    const slot = this.slots.get(id)
    if (slot === undefined) return undefined
    return constantTimeEqual(this.verifiers[slot]!, verifier) ? this.grants[slot] : undefined
  }

  set(id: number, verifier: string, grant: G): void {
    if (this.capacity === 0) return
    let slot = this.slots.get(id)
    if (slot === undefined) {
      slot = this.head
      this.head = (slot + 1) % this.capacity
      if (slot === this.ids.length) this.grow()
      // The slot's previous id, unless it was deleted since (its slot then went back empty).
      if (this.verifiers[slot] !== undefined) this.slots.delete(this.ids[slot]!)
      this.ids[slot] = id
      this.slots.set(id, slot)
    }
    this.verifiers[slot] = verifier
    this.grants[slot] = grant
  }

  /** More slots: twice as many (at least 1,024), never more than `capacity`. The value arrays grow as they are written, in order. */
  private grow(): void {
    const ids = new Float64Array(Math.min(this.capacity, Math.max(1024, this.ids.length * 2)))
    ids.set(this.ids)
    this.ids = ids
  }

  delete(id: number): void {
    const slot = this.slots.get(id)
    if (slot === undefined) return
    this.slots.delete(id)
    this.verifiers[slot] = undefined
    this.grants[slot] = undefined
  }

  clear(): void {
    if (this.slots.size === 0) return
    this.slots.clear()
    this.verifiers = []
    this.grants = []
    this.ids = new Float64Array(0)
    this.head = 0
  }

  get size(): number {
    return this.slots.size
  }
}
