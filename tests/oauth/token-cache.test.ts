import { describe, expect, test } from 'bun:test'
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
})
