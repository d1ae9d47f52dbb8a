import { DeviceCodeCache, pendingRecord } from '../device-cache'
import type { ChangeFeed, DeviceCodeRecord, DeviceCodeStore, DeviceStatus, NewCode, NewDeviceCode } from '../store'
import { writeCode } from './grants'
import { emitting, lock, n, type PgContext, type Row } from './context'

const COLUMNS = 'client_id, scope, resource, created_at, expires_at, interval, last_polled_at, status, address, user_id, code_hash'
const toRecord = (r: Row | undefined): DeviceCodeRecord | undefined =>
  r && {
    clientId: r.client_id as string,
    scope: r.scope as string,
    resource: r.resource as string | null,
    createdAt: n(r.created_at),
    expiresAt: n(r.expires_at),
    interval: n(r.interval),
    lastPolledAt: r.last_polled_at === null ? null : n(r.last_polled_at),
    status: r.status as DeviceStatus,
    address: r.address as string,
    userId: r.user_id as string | null,
    codeHash: r.code_hash as string | null,
  }

/** What a device-code write tells this instance's cache after its commit (the others hear drizzle/pg/0027's NOTIFY). */
const CHANGED = Object.freeze({ devices: true as const })

export class PgDevices implements DeviceCodeStore {
  // Made on first use: the store's change feed is made after this.
  private cached?: DeviceCodeCache

  constructor(
    private readonly ctx: PgContext,
    private readonly changes: () => ChangeFeed,
  ) {}

  private get cache(): DeviceCodeCache {
    return (this.cached ??= new DeviceCodeCache(this.changes()))
  }

  /** `changed` after its write committed: this instance's next poll reads the row again at once. */
  private wrote<T>(changed: T): T {
    return emitting(this.ctx, changed, changed ? CHANGED : undefined)
  }

  async insertDeviceCode(c: NewDeviceCode, maxPending: number): Promise<boolean> {
    const cache = this.ctx.inTransaction ? undefined : this.cache
    const generation = cache?.read()
    // A taken user code is a UniqueViolation (portError): the caller draws another.
    const stored = await this.ctx.tx(async (tx) => {
      await lock(tx, `device:${c.clientId}`)
      const [{ n: count }] = await tx`SELECT count(*)::int AS n FROM device_codes WHERE client_id = ${c.clientId} AND status = 'pending' AND expires_at > ${c.createdAt}`
      if (count >= maxPending) return false
      await tx`INSERT INTO device_codes (device_code_hash, user_code_hash, client_id, scope, resource, created_at, expires_at, interval, status, address)
          VALUES (${c.deviceCodeHash}, ${c.userCodeHash}, ${c.clientId}, ${c.scope}, ${c.resource}, ${c.createdAt}, ${c.expiresAt}, ${c.interval}, 'pending', ${c.address})`
      return true
    })
    if (stored && cache) cache.keep(c.deviceCodeHash, pendingRecord(c), generation)
    return stored
  }

  findPendingByUserCode(userCodeHash: string, now: number): Promise<DeviceCodeRecord | undefined> {
    return this.ctx.run(async (sql) => toRecord((await sql.unsafe(`SELECT ${COLUMNS} FROM device_codes WHERE user_code_hash = $1 AND status = 'pending' AND expires_at > $2`, [userCodeHash, now]))[0]))
  }

  /** One UPDATE … WHERE status = 'pending': of two decisions at once, on any instances, one counts. */
  denyDeviceCode(userCodeHash: string, now: number, userId: string): Promise<boolean> {
    return this.ctx.run(
      async (sql) => this.wrote((await sql`UPDATE device_codes SET status = 'denied', user_id = ${userId} WHERE user_code_hash = ${userCodeHash} AND status = 'pending' AND expires_at > ${now}`).count > 0),
    )
  }

  /** The decision's UPDATE, then the code and the consent, in one transaction; a decision that does not count writes nothing. */
  async allowDeviceCode(userCodeHash: string, now: number, code: NewCode, remember: { scopes: readonly string[]; canonicalOrder: readonly string[] }): Promise<boolean> {
    const allowed = await this.ctx.tx(async (tx) => {
      const decided = await tx`UPDATE device_codes SET status = 'allowed', user_id = ${code.userId}, code_hash = ${code.codeHash}
        WHERE user_code_hash = ${userCodeHash} AND status = 'pending' AND expires_at > ${now}`
      if (decided.count === 0) return false
      await writeCode(tx, code, { ...remember, now })
      return true
    })
    return this.wrote(allowed)
  }

  /** Every poll reads its code here: a pending one from the cache while it may be trusted (DeviceCodeCache). */
  findDeviceCode(deviceCodeHash: string): Promise<DeviceCodeRecord | undefined> {
    const cache = this.ctx.inTransaction ? undefined : this.cache
    const hit = cache?.get(deviceCodeHash)
    if (hit) return Promise.resolve(hit)
    const generation = cache?.read()
    return this.ctx.run(async (sql) => {
      const record = toRecord((await sql.unsafe(`SELECT ${COLUMNS} FROM device_codes WHERE device_code_hash = $1`, [deviceCodeHash]))[0])
      if (record && cache && !this.ctx.inTransaction) cache.keep(deviceCodeHash, record, generation)
      return record
    })
  }

  peekDeviceCode(deviceCodeHash: string): DeviceCodeRecord | undefined {
    return this.ctx.inTransaction ? undefined : this.cache.get(deviceCodeHash)
  }

  slowDown(deviceCodeHash: string, now: number, interval: number): Promise<void> {
    return this.ctx.run(
      async (sql) => void this.wrote((await sql`UPDATE device_codes SET last_polled_at = ${now}, interval = greatest(interval, ${interval}) WHERE device_code_hash = ${deviceCodeHash}`).count > 0),
    )
  }

  /** One UPDATE … WHERE status: of two polls at once, on any instances, one finishes it. */
  finishDeviceCode(deviceCodeHash: string, clientId: string, now: number, status: 'allowed' | 'denied'): Promise<{ codeHash: string | null } | undefined> {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`UPDATE device_codes SET status = 'used', last_polled_at = ${now}
        WHERE device_code_hash = ${deviceCodeHash} AND client_id = ${clientId} AND status = ${status} AND expires_at > ${now} RETURNING code_hash`
      return this.wrote(row) ? { codeHash: row!.code_hash as string | null } : undefined
    })
  }
}
