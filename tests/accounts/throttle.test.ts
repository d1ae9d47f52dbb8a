import { describe, expect, test } from 'bun:test'
import { decideAccountAttempt, decideAddressAttempt } from '../../src/accounts/throttle'
import type { ThrottleRow } from '../../src/db/store'

/** Runs decisions the way the store does: each one sees the row the last one kept. */
function run(decide: (row: ThrottleRow | undefined, now: number) => { row: ThrottleRow | null; result: number }) {
  let row: ThrottleRow | undefined
  return (now: number) => {
    const next = decide(row, now)
    row = next.row ?? undefined
    return next.result
  }
}

describe('per-account back-off', () => {
  test('after five attempts an account waits 1 s, then 2 s, 4 s … up to 15 minutes', () => {
    const attempt = run(decideAccountAttempt)
    const t0 = 1_000_000
    expect([0, 0, 0, 0, 0].map(() => attempt(t0))).toEqual([0, 0, 0, 0, 0])
    expect(attempt(t0)).toBe(1) // the sixth must wait; waiting does not count
    expect(attempt(t0 + 1000)).toBe(0)
    expect(attempt(t0 + 1000)).toBe(2)
    let now = t0 + 3000
    const waits: number[] = []
    for (let i = 0; i < 12; i++) {
      expect(attempt(now)).toBe(0)
      const wait = attempt(now)
      waits.push(wait)
      now += wait * 1000
    }
    expect(waits.slice(0, 3)).toEqual([4, 8, 16])
    expect(waits.at(-1)).toBe(900)
  })

  test('an account is forgotten an hour after its last attempt', () => {
    const attempt = run(decideAccountAttempt)
    for (let i = 0; i < 6; i++) attempt(0)
    expect(attempt(3600_000)).toBe(0)
    expect(decideAccountAttempt({ count: 9, startedAt: 0, lastAt: 0 }, 3600_000).row).toEqual({ count: 1, startedAt: 3600_000, lastAt: 3600_000 })
  })
})

describe('per-address window', () => {
  test('N checks a minute per address, then the wait to the window\'s end; the next minute starts over', () => {
    const take = run((row, now) => decideAddressAttempt(row, now, 3))
    expect([take(0), take(1000), take(2000)]).toEqual([0, 0, 0])
    expect(take(20_000)).toBe(40)
    expect(take(59_500)).toBe(1)
    expect(take(60_000)).toBe(0)
  })
})
