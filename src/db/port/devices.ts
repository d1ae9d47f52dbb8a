/** Device authorization (RFC 8628): codes a device polls with while its user allows or denies on /device. */
import type { NewCode } from './grants'

export type DeviceStatus = 'pending' | 'allowed' | 'denied' | 'used'

export interface NewDeviceCode {
  deviceCodeHash: string
  userCodeHash: string
  clientId: string
  scope: string
  /** The resource (RFC 8707) the tokens will be for; null for Latchkey's own API. */
  resource: string | null
  createdAt: number
  expiresAt: number
  /** Seconds a device waits between polls. */
  interval: number
  /** The client address the request came from, shown to the user. */
  address: string
}

export interface DeviceCodeRecord extends Omit<NewDeviceCode, 'deviceCodeHash' | 'userCodeHash'> {
  status: DeviceStatus
  lastPolledAt: number | null
  userId: string | null
  codeHash: string | null
}

/** What a poll answers (RFC 8628 §3.5); `ok` carries the hash of the code to exchange, once. */
export type PollOutcome = { answer: 'authorization_pending' | 'slow_down' | 'access_denied' | 'expired_token' | 'invalid_grant' } | { answer: 'ok'; codeHash: string }

/** RFC 8628 §3.5's slow_down adds 5 seconds to the interval. */
export const SLOW_DOWN_SECONDS = 5

/**
 * A poll decided on the row and `seen`, the instance's memory of the last poll (see grants/device_code):
 * a poll sooner than the interval after the last one is slow_down (and the interval grows), the
 * first and any later one authorization_pending until the user decides; an allowed code is used
 * by the one poll that sees it.
 */
export function decidePoll(
  row: DeviceCodeRecord | undefined,
  clientId: string,
  now: number,
  seen?: LastPoll,
): { outcome: PollOutcome; update?: Pick<DeviceCodeRecord, 'lastPolledAt' | 'interval' | 'status'> } {
  const answer = pollAnswer(row, clientId, now, seen)
  if (answer === 'invalid_grant' || answer === 'expired_token') return { outcome: { answer } }
  const interval = intervalOf(row!, seen)
  if (answer === 'slow_down') return { outcome: { answer }, update: { lastPolledAt: now, interval: interval + SLOW_DOWN_SECONDS, status: row!.status } }
  if (answer === 'access_denied') return { outcome: { answer }, update: { lastPolledAt: now, interval, status: 'used' } }
  if (answer === 'ok') return { outcome: { answer, codeHash: row!.codeHash! }, update: { lastPolledAt: now, interval, status: 'used' } }
  return { outcome: { answer }, update: { lastPolledAt: now, interval, status: row!.status } }
}

/**
 * decidePoll's answer alone, allocating nothing: a held poll that finds nothing asks only this
 * (issue 38 "Speed"). `seen` counts as the last poll when it is later than the row's.
 */
export function pollAnswer(row: DeviceCodeRecord | undefined, clientId: string, now: number, seen?: LastPoll): PollOutcome['answer'] {
  if (!row || row.clientId !== clientId || row.status === 'used') return 'invalid_grant'
  if (row.expiresAt <= now) return 'expired_token'
  const lastPolledAt = seen ? Math.max(row.lastPolledAt ?? 0, seen.at) : row.lastPolledAt
  if (lastPolledAt !== null && now - lastPolledAt < intervalOf(row, seen) * 1000) return 'slow_down'
  if (row.status === 'denied') return 'access_denied'
  if (row.status === 'allowed' && row.codeHash) return 'ok'
  return 'authorization_pending'
}

/** The seconds a device waits between polls: the row's, or this instance's memory's when longer. */
export function intervalOf(row: DeviceCodeRecord, seen?: LastPoll): number {
  return seen ? Math.max(row.interval, seen.interval) : row.interval
}

/** An instance's memory of a device code's last poll (src/oauth/token/grants/device_code.ts). */
export interface LastPoll {
  at: number
  interval: number
}

export interface DeviceCodeStore {
  /**
   * Stores a request unless its client has `maxPending` pending, unexpired ones (false then),
   * counted and written under a per-client lock, on any instance. UniqueViolation when the user
   * code is taken (the caller draws another).
   */
  insertDeviceCode(code: NewDeviceCode, maxPending: number): Promise<boolean>
  /** A pending, unexpired request by its user code. */
  findPendingByUserCode(userCodeHash: string, now: number): Promise<DeviceCodeRecord | undefined>
  /** "Deny" on a pending, unexpired request; false when it was decided already (once, on any instance). */
  denyDeviceCode(userCodeHash: string, now: number, userId: string): Promise<boolean>
  /**
   * "Allow" on a pending, unexpired request, in one transaction with what it grants: the code the
   * next poll exchanges and the user's consent. False (and nothing written) when it was decided
   * already or expired: a consent is never recorded for a decision that did not count.
   */
  allowDeviceCode(userCodeHash: string, now: number, code: NewCode, remember: { scopes: readonly string[]; canonicalOrder: readonly string[] }): Promise<boolean>
  /** A device code's row, as a poll reads it (nothing locked, nothing written: a poll that finds nothing costs a read). */
  findDeviceCode(deviceCodeHash: string): Promise<DeviceCodeRecord | undefined>
  /** A pending device code's row if this instance holds it in memory and may trust it now (src/db/device-cache.ts); undefined: ask findDeviceCode. */
  peekDeviceCode(deviceCodeHash: string): DeviceCodeRecord | undefined
  /** slow_down: the poll's time and the longer interval, kept for every instance. */
  slowDown(deviceCodeHash: string, now: number, interval: number): Promise<void>
  /**
   * The poll that sees the decision uses the request up, once on any instance (one UPDATE … WHERE
   * status): allowed → the hash of the code to exchange; denied → null. Undefined when another
   * poll took it first, or it expired.
   */
  finishDeviceCode(deviceCodeHash: string, clientId: string, now: number, status: 'allowed' | 'denied'): Promise<{ codeHash: string | null } | undefined>
}
