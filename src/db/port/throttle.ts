/** A row of the sign-in throttle (per account or per client address). */
export interface ThrottleRow {
  count: number
  /** When the current window (or run of failures) started. */
  startedAt: number
  lastAt: number
}

/** The sign-in throttle, shared by every instance. */
export interface ThrottleStore {
  /**
   * Reads and replaces one throttle row atomically: `decide` returns the row to keep (the same
   * object: no write; null: delete it) and a result.
   */
  updateThrottle<T>(key: string, decide: (row: ThrottleRow | undefined) => { row: ThrottleRow | null; result: T }): Promise<T>
}
