import { describe, expect, test } from 'bun:test'
import { heapStats } from 'bun:jsc'
import { randomToken } from '../../src/lib/crypto'
import { TokenCache } from '../../src/oauth/token-cache'

describe('the token cache', () => {
  test('a hit needs the right verifier; the oldest entries go first, and it never holds more than its capacity', () => {
    const cache = new TokenCache<string>(3)
    for (const id of [1, 2, 3]) cache.set(id, `v${id}`, `g${id}`)
    expect(cache.get(2, 'v2')).toBe('g2')
    expect(cache.get(2, 'v1')).toBeUndefined()
    cache.set(4, 'v4', 'g4')
    expect([cache.get(1, 'v1'), cache.get(4, 'v4'), cache.size]).toEqual([undefined, 'g4', 3])
    for (let id = 5; id < 1000; id++) cache.set(id, `v${id}`, `g${id}`)
    expect(cache.size).toBe(3)
    expect(cache.get(999, 'v999')).toBe('g999')
    cache.clear()
    expect(cache.size).toBe(0)
    expect(new TokenCache<string>(0).size).toBe(0)
  })

  test('eviction stays constant-time at 100,000 entries (a million inserts well under a second)', () => {
    const cache = new TokenCache<number>(100_000)
    const started = performance.now()
    for (let id = 0; id < 1_000_000; id++) cache.set(id, 'v', id)
    // Through Map.keys().next() this took ~6 s here; generous for a shared machine.
    expect(performance.now() - started).toBeLessThan(2000)
    expect(cache.size).toBe(100_000)
  })

  test('a deleted entry is gone and its slot is reused without evicting anyone else; setting a cached id again keeps its slot', () => {
    const cache = new TokenCache<string>(3)
    for (const id of [1, 2, 3]) cache.set(id, `v${id}`, `g${id}`)
    cache.delete(1)
    cache.delete(42)
    expect([cache.get(1, 'v1'), cache.size]).toEqual([undefined, 2])
    cache.set(2, 'v2', 'g2 again')
    expect([cache.get(2, 'v2'), cache.size]).toEqual(['g2 again', 2])
    cache.set(4, 'v4', 'g4') // takes the freed slot: 2 and 3 stay
    expect([cache.get(2, 'v2'), cache.get(3, 'v3'), cache.get(4, 'v4'), cache.size]).toEqual(['g2 again', 'g3', 'g4', 3])
    cache.set(5, 'v5', 'g5') // then the oldest goes
    expect([cache.get(2, 'v2'), cache.get(5, 'v5'), cache.size]).toEqual([undefined, 'g5', 3])
  })

  test('offered tokens get in at once while there is room; once full, on their second miss within the window', () => {
    const cache = new TokenCache<string>(3)
    expect([1, 2, 3].map((id) => cache.offer(id, `v${id}`, `g${id}`))).toEqual([true, true, true])
    expect(cache.offer(4, 'v4', 'g4')).toBe(false)
    expect([cache.get(4, 'v4'), cache.get(1, 'v1'), cache.size]).toEqual([undefined, 'g1', 3])
    expect(cache.offer(4, 'v4', 'g4')).toBe(true)
    expect([cache.get(4, 'v4'), cache.get(1, 'v1'), cache.size]).toEqual(['g4', undefined, 3])
    // The window is `capacity` first misses: 5, 6 and 7 end it, so 5 is a first miss again.
    for (const id of [5, 6, 7]) expect(cache.offer(id, `v${id}`, `g${id}`)).toBe(false)
    expect(cache.offer(5, 'v5', 'g5')).toBe(false)
    expect(cache.offer(5, 'v5', 'g5')).toBe(true)
  })

  test('its slots grow with its entries: ten empty caches of 100,000 take under 2 MB of heap, and entries stay found across each growth', () => {
    Bun.gc(true)
    const before = heapStats().heapSize
    const empty = Array.from({ length: 10 }, () => new TokenCache<number>(100_000))
    Bun.gc(true)
    // Allocated at full size they took 26.6 MB; the bound leaves room for what else the process allocates meanwhile.
    expect(heapStats().heapSize - before).toBeLessThan(2 * 1024 * 1024)
    expect(empty.map((c) => c.size)).toEqual(Array(10).fill(0))

    const cache = new TokenCache<number>(5_000)
    for (let id = 1; id <= 3_000; id++) cache.set(id, `v${id}`, id)
    expect([cache.get(1, 'v1'), cache.get(1_024, 'v1024'), cache.get(1_025, 'v1025'), cache.get(3_000, 'v3000'), cache.size]).toEqual([1, 1_024, 1_025, 3_000, 3_000])
    for (let id = 3_001; id <= 7_000; id++) cache.set(id, `v${id}`, id)
    // Full at 5,000: the first 2,000 went first, in order.
    expect([cache.get(2_000, 'v2000'), cache.get(2_001, 'v2001'), cache.get(7_000, 'v7000'), cache.size]).toEqual([undefined, 2_001, 7_000, 5_000])
    cache.clear()
    cache.set(9, 'v9', 9)
    expect([cache.get(9, 'v9'), cache.get(7_000, 'v7000'), cache.size]).toEqual([9, undefined, 1])
  })

  test('100,000 entries — each its own user, as in a 100,000-user deployment — fit in 40 MB of heap', () => {
    const count = 100_000
    const verifiers = Array.from({ length: count }, () => randomToken())
    const scopes = Object.freeze(['openid', 'profile', 'email'])
    const now = Date.now()
    Bun.gc(true)
    const before = heapStats().heapSize
    const cache = new TokenCache<object>(count)
    for (let i = 0; i < count; i++) {
      const user = { id: Bun.randomUUIDv7(), email: `user${i}@example.com`, fullName: `User Number ${i}`, avatarUrl: null, emailVerified: true }
      cache.set(i + 1, verifiers[i]!, { clientId: 'app_0123456789abcdef', scopes, expiresAt: now + 3_600_000, issuedAt: now, user })
    }
    Bun.gc(true)
    const grown = heapStats().heapSize - before
    expect(cache.size).toBe(count)
    // ~36 MB here, 20 MB of it the users: the entries alone are ~16 MB, where the cache before
    // slots took ~23 MB (an entry object per token besides its grant).
    expect(grown).toBeLessThan(40 * 1024 * 1024)
  })
})
