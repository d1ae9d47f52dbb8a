/** Time is injected so expiry is tested without sleeping. */
export interface Clock {
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

/** A clock tests can move by hand. */
export function manualClock(start = Date.UTC(2026, 0, 1)): Clock & { advance(ms: number): void } {
  let t = start
  return {
    now: () => t,
    advance(ms: number) {
      t += ms
    },
  }
}
