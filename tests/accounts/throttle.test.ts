import { describe, expect, test } from 'bun:test'
import { LoginThrottle } from '../../src/accounts/throttle'
import { manualClock } from '../../src/lib/clock'

describe('LoginThrottle', () => {
  test('waits double from the fifth failure on, up to 15 minutes', () => {
    const clock = manualClock()
    const throttle = new LoginThrottle(clock)
    const waits: number[] = []
    for (let i = 0; i < 16; i++) {
      throttle.failed('a@x')
      waits.push(throttle.retryAfter('a@x'))
    }
    expect(waits.slice(0, 4)).toEqual([0, 0, 0, 0])
    expect(waits.slice(4, 8)).toEqual([1, 2, 4, 8])
    expect(waits.at(-1)).toBe(900)
  })

  test('forgets an account an hour after its last failure', () => {
    const clock = manualClock()
    const throttle = new LoginThrottle(clock)
    for (let i = 0; i < 6; i++) throttle.failed('a@x')
    clock.advance(3600_000)
    throttle.failed('a@x')
    expect(throttle.retryAfter('a@x')).toBe(0)
  })

  test('tracks a bounded number of accounts', () => {
    const clock = manualClock()
    const throttle = new LoginThrottle(clock, 100)
    for (let i = 0; i < 1000; i++) throttle.failed(`user${i}@x`)
    expect((throttle as unknown as { failures: Map<string, unknown> }).failures.size).toBeLessThanOrEqual(100)
  })
})
