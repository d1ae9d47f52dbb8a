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
 */
export class TokenCache<G> {
  private readonly slots = new Map<number, number>()
  private readonly ids: Float64Array
  private readonly verifiers: Array<string | undefined>
  private readonly grants: Array<G | undefined>
  private head = 0
  /** One bit per hashed id seen missing since the window began; ~16 bits per entry. */
  private readonly seen: Uint8Array
  private readonly seenShift: number
  private seenCount = 0

  constructor(readonly capacity: number) {
    const length = Math.max(capacity, 1)
    this.ids = new Float64Array(length)
    this.verifiers = new Array(length).fill(undefined)
    this.grants = new Array(length).fill(undefined)
    const bits = Math.min(24, Math.max(10, Math.ceil(Math.log2(length * 16))))
    this.seen = new Uint8Array(2 ** (bits - 3))
    this.seenShift = 32 - bits
  }

  /**
   * Caches a token that just missed: at once while there is room, otherwise on its second miss
   * within the window (the last `capacity` first misses). True when it was cached.
   */
  offer(id: number, verifier: string, grant: G): boolean {
    if (this.slots.size >= this.capacity && !this.seenBefore(id)) return false
    this.set(id, verifier, grant)
    return true
  }

  private seenBefore(id: number): boolean {
    const bit = Math.imul(id | 0, 0x9e3779b1) >>> this.seenShift
    const byte = bit >>> 3
    const mask = 1 << (bit & 7)
    if (this.seen[byte]! & mask) return true
    this.seen[byte] = this.seen[byte]! | mask
    if (++this.seenCount >= this.capacity) {
      this.seen.fill(0)
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
      // The slot's previous id, unless it was deleted since (its slot then went back empty).
      if (this.verifiers[slot] !== undefined) this.slots.delete(this.ids[slot]!)
      this.ids[slot] = id
      this.slots.set(id, slot)
    }
    this.verifiers[slot] = verifier
    this.grants[slot] = grant
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
    this.verifiers.fill(undefined)
    this.grants.fill(undefined)
    this.head = 0
  }

  get size(): number {
    return this.slots.size
  }
}
