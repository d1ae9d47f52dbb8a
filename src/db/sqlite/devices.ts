import { DeviceCodeCache, pendingRecord } from '../device-cache'
import type { DeviceCodeRecord, DeviceCodeStore, DeviceStatus, NewCode, NewDeviceCode } from '../store'
import { writeCode } from './grants'
import { unique, type SqliteContext } from './context'

const COLUMNS = `client_id AS clientId, scope, resource, created_at AS createdAt, expires_at AS expiresAt, interval, last_polled_at AS lastPolledAt, status, address, user_id AS userId, code_hash AS codeHash`
type Row = Omit<DeviceCodeRecord, 'status'> & { status: string }
const toRecord = (row: Row | null): DeviceCodeRecord | undefined => (row ? { ...row, status: row.status as DeviceStatus } : undefined)

/** What a device-code write tells the caches at its commit (src/db/device-cache.ts). */
const CHANGED = Object.freeze({ devices: true as const })

export class SqliteDevices implements DeviceCodeStore {
  // Made on first use: the store is still being built when this is.
  private cached?: DeviceCodeCache

  constructor(private readonly ctx: SqliteContext) {}

  private get cache(): DeviceCodeCache {
    return (this.cached ??= new DeviceCodeCache(this.ctx.changes))
  }

  /** `changed` after a write job changed a device code: the pending codes' cache hears it at the commit. */
  private wrote<T>(changed: T): T {
    if (changed) this.ctx.emit(CHANGED)
    return changed
  }

  async insertDeviceCode(c: NewDeviceCode, maxPending: number): Promise<boolean> {
    const { sqlite } = this.ctx.db
    const generation = this.cache.read()
    const stored = await this.ctx.write(() => {
      const { n } = sqlite.query<{ n: number }, [string, number]>(`SELECT count(*) AS n FROM device_codes WHERE client_id = ? AND status = 'pending' AND expires_at > ?`).get(c.clientId, c.createdAt)!
      if (n >= maxPending) return false
      unique(() =>
        sqlite
          .prepare(`INSERT INTO device_codes (device_code_hash, user_code_hash, client_id, scope, resource, created_at, expires_at, interval, status, address) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?)`)
          .run(c.deviceCodeHash, c.userCodeHash, c.clientId, c.scope, c.resource, c.createdAt, c.expiresAt, c.interval, c.address),
      )
      return true
    })
    if (stored) this.cache.keep(c.deviceCodeHash, pendingRecord(c), generation)
    return stored
  }

  async findPendingByUserCode(userCodeHash: string, now: number): Promise<DeviceCodeRecord | undefined> {
    return toRecord(this.ctx.db.sqlite.query<Row, [string, number]>(`SELECT ${COLUMNS} FROM device_codes WHERE user_code_hash = ? AND status = 'pending' AND expires_at > ?`).get(userCodeHash, now))
  }

  denyDeviceCode(userCodeHash: string, now: number, userId: string): Promise<boolean> {
    return this.ctx.write(() => this.decide(userCodeHash, now, 'denied', userId, null))
  }

  allowDeviceCode(userCodeHash: string, now: number, code: NewCode, remember: { scopes: readonly string[]; canonicalOrder: readonly string[] }): Promise<boolean> {
    return this.ctx.write(() => {
      if (!this.decide(userCodeHash, now, 'allowed', code.userId, code.codeHash)) return false
      writeCode(this.ctx.db, code, { ...remember, now })
      return true
    })
  }

  /** Inside a write job: the pending request decided, if it still is. */
  private decide(userCodeHash: string, now: number, status: 'allowed' | 'denied', userId: string, codeHash: string | null): boolean {
    return this.wrote(
      this.ctx.db.sqlite.prepare(`UPDATE device_codes SET status = ?, user_id = ?, code_hash = ? WHERE user_code_hash = ? AND status = 'pending' AND expires_at > ?`).run(status, userId, codeHash, userCodeHash, now)
        .changes > 0,
    )
  }

  /** Every poll reads its code here: a pending one from the cache while it may be trusted (DeviceCodeCache). */
  async findDeviceCode(deviceCodeHash: string): Promise<DeviceCodeRecord | undefined> {
    const cache = this.cache
    const hit = cache.get(deviceCodeHash)
    if (hit) return hit
    const generation = cache.read()
    const record = toRecord(this.ctx.db.sqlite.query<Row, [string]>(`SELECT ${COLUMNS} FROM device_codes WHERE device_code_hash = ?`).get(deviceCodeHash))
    if (record) cache.keep(deviceCodeHash, record, generation)
    return record
  }

  peekDeviceCode(deviceCodeHash: string): DeviceCodeRecord | undefined {
    return this.cache.get(deviceCodeHash)
  }

  slowDown(deviceCodeHash: string, now: number, interval: number): Promise<void> {
    const { sqlite } = this.ctx.db
    return this.ctx.write(() => void this.wrote(sqlite.query('UPDATE device_codes SET last_polled_at = ?, interval = max(interval, ?) WHERE device_code_hash = ?').run(now, interval, deviceCodeHash).changes > 0))
  }

  finishDeviceCode(deviceCodeHash: string, clientId: string, now: number, status: 'allowed' | 'denied'): Promise<{ codeHash: string | null } | undefined> {
    const { sqlite } = this.ctx.db
    return this.ctx.write(() => {
      const row = sqlite
        .query<{ codeHash: string | null }, [number, string, string, string, number]>(
          `UPDATE device_codes SET status = 'used', last_polled_at = ? WHERE device_code_hash = ? AND client_id = ? AND status = ? AND expires_at > ? RETURNING code_hash AS codeHash`,
        )
        .get(now, deviceCodeHash, clientId, status, now)
      return this.wrote(row) ? { codeHash: row!.codeHash } : undefined
    })
  }
}
