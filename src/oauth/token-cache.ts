import { constantTimeEqual } from '../lib/crypto'

interface Entry<G> {
  verifier: string
  grant: G
}

/**
 * The validated-token cache: keyed by the token's row id, holding the verifier to compare (in
 * constant time) and what the token grants. Bounded to `capacity` entries with first-in,
 * first-out eviction through a ring of ids — constant time per insert, where evicting through
 * `Map.keys().next()` cost 6–7 µs in Bun. Values that repeat across tokens (scopes, client ids)
 * are interned by the caller, so an entry costs little more than its verifier.
 */
export class TokenCache<G> {
  private readonly entries = new Map<number, Entry<G>>()
  private readonly ring: Float64Array
  private head = 0

  constructor(readonly capacity: number) {
    this.ring = new Float64Array(Math.max(capacity, 1))
  }

  get(id: number, verifier: string): G | undefined {
    const entry = this.entries.get(id)
    return entry && constantTimeEqual(entry.verifier, verifier) ? entry.grant : undefined
  }

  set(id: number, verifier: string, grant: G): void {
    if (this.capacity === 0) return
    if (!this.entries.has(id)) {
      if (this.entries.size >= this.capacity) this.entries.delete(this.ring[this.head]!)
      this.ring[this.head] = id
      this.head = (this.head + 1) % this.capacity
    }
    this.entries.set(id, { verifier, grant })
  }

  delete(id: number): void {
    this.entries.delete(id)
  }

  clear(): void {
    this.entries.clear()
    this.head = 0
  }

  get size(): number {
    return this.entries.size
  }
}
