import { isWhole, type ChangeFeed, type DeviceCodeRecord, type NewDeviceCode } from './store'

/** The row a device code is inserted as: what its first poll would read. */
export function pendingRecord(c: NewDeviceCode): DeviceCodeRecord {
  return { clientId: c.clientId, scope: c.scope, resource: c.resource, createdAt: c.createdAt, expiresAt: c.expiresAt, interval: c.interval, address: c.address, status: 'pending', lastPolledAt: null, userId: null, codeHash: null }
}

/**
 * Pending device codes held at most per instance. A client may have 100 pending (SPEC), so this
 * is 655 busy clients' worth; past it the cache empties (its next polls read the database).
 */
export const DEVICE_CACHE_CAPACITY = 65_536

/**
 * The pending device codes a device polls (RFC 8628 §3.4), kept in memory on both engines: a TV
 * polls every 5 s for as long as its person takes, and a poll that finds nothing is to cost no
 * more than a userinfo (issue 38 "Speed") — the row's read was two fifths of it. Only a pending
 * row is kept: it is what a poll that finds nothing reads, and its answer can only move on by a
 * write (the person's decision, a slow_down, the poll that uses it, a purge), never by itself
 * (its expiry is in the row: decidePoll compares it with the clock).
 *
 * Kept as it is read, and as this instance inserts it (its first poll here reads nothing).
 * Trusted only while the change feed is (`check()`), and emptied by every write that may change
 * a device code:
 * - this process's own, told by the store's device writes at their commit (`{ devices: true }`):
 *   the instance where the person allows answers the next poll with the tokens;
 * - other processes' — the CLI's on SQLite (`PRAGMA data_version`, naming nothing), another
 *   instance's on PostgreSQL (drizzle/pg/0027's NOTIFY on any updated or deleted row).
 * Nothing else changes a pending row: a user's deletion cascades only to rows they decided, a
 * client's deletion empties every cache (and its polls are refused by client authentication
 * first). A read that raced a change (the generation moved on while it read) is answered, not
 * kept. Between another instance's commit and its NOTIFY (~ms) a poll may still be told
 * authorization_pending: the device asks again after its interval, and nothing is ever issued
 * from here — tokens come only from the row's UPDATE … WHERE status = 'allowed'.
 */
export class DeviceCodeCache {
  private readonly entries = new Map<string, DeviceCodeRecord>()
  /** Moves on with every change: a read begun before one is not kept. */
  private generation = 0

  constructor(private readonly changes: ChangeFeed) {
    changes.onChange((change) => {
      if (isWhole(change) || change?.devices) this.clear()
    })
  }

  /** The pending row of this device code, if kept (undefined: read it, then `keep` it with the generation `read` gave). */
  get(deviceCodeHash: string): DeviceCodeRecord | undefined {
    return this.changes.check() ? this.entries.get(deviceCodeHash) : undefined
  }

  /** The generation a read begins in, or undefined when what it finds may not be kept. */
  read(): number | undefined {
    return this.changes.check() ? this.generation : undefined
  }

  /** Keeps a pending row read in `generation`, if nothing changed since and the feed is still alive. */
  keep(deviceCodeHash: string, record: DeviceCodeRecord, generation: number | undefined): void {
    if (record.status !== 'pending' || generation === undefined || !this.changes.check() || generation !== this.generation) return
    if (this.entries.size >= DEVICE_CACHE_CAPACITY) this.clear()
    // Shared by every poll of this code from now on: frozen, so none can change another's.
    this.entries.set(deviceCodeHash, Object.freeze(record))
  }

  private clear(): void {
    this.entries.clear()
    this.generation++
  }

  get size(): number {
    return this.entries.size
  }
}
