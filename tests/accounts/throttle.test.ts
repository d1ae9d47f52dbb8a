import { describe, expect, test } from 'bun:test'
import { AccountThrottle, AddressLimiter } from '../../src/accounts/throttle'
import { manualClock } from '../../src/lib/clock'

describe('AccountThrottle', () => {
  test('waits double from the fifth failure on, up to 15 minutes', () => {
    const clock = manualClock()
    const throttle = new AccountThrottle(clock)
    const waits: number[] = []
    for (let i = 0; i < 16; i++) {
      throttle.attempt('a')
      waits.push(throttle.retryAfter('a'))
    }
    expect(waits.slice(0, 4)).toEqual([0, 0, 0, 0])
    expect(waits.slice(4, 8)).toEqual([1, 2, 4, 8])
    expect(waits.at(-1)).toBe(900)
  })

  test('a success forgives the attempts before it', () => {
    const clock = manualClock()
    const throttle = new AccountThrottle(clock)
    for (let i = 0; i < 5; i++) throttle.attempt('a')
    throttle.succeeded('a')
    expect(throttle.retryAfter('a')).toBe(0)
  })

  test('forgets an account an hour after its last failure', () => {
    const clock = manualClock()
    const throttle = new AccountThrottle(clock)
    for (let i = 0; i < 6; i++) throttle.attempt('a')
    clock.advance(3600_000)
    throttle.attempt('a')
    expect(throttle.retryAfter('a')).toBe(0)
  })

  test('tracks a bounded number of accounts (item 3)', () => {
    const clock = manualClock()
    const throttle = new AccountThrottle(clock, 100)
    for (let i = 0; i < 1000; i++) throttle.attempt(`user${i}`)
    expect(throttle.trackedCount).toBe(100)
  })
})

describe('AddressLimiter', () => {
  test('allows N checks a minute per address, then names the wait; the next minute starts over', () => {
    const clock = manualClock()
    const limiter = new AddressLimiter(clock, 3)
    expect([limiter.take('a'), limiter.take('a'), limiter.take('a')]).toEqual([0, 0, 0])
    clock.advance(20_000)
    expect(limiter.take('a')).toBe(40)
    expect(limiter.take('b')).toBe(0)
    clock.advance(40_000)
    expect(limiter.take('a')).toBe(0)
  })

  test('tracks a bounded number of addresses', () => {
    const limiter = new AddressLimiter(manualClock(), 3, 50)
    for (let i = 0; i < 500; i++) limiter.take(`10.0.${i >> 8}.${i & 255}`)
    expect(limiter.trackedCount).toBe(50)
  })
})
