import type { DeviceCodeRecord, DeviceCodeStore, DeviceStatus, NewCode, NewDeviceCode } from '../store'
import { writeCode } from './grants'
import { unique, type SqliteContext } from './context'

const COLUMNS = `client_id AS clientId, scope, resource, created_at AS createdAt, expires_at AS expiresAt, interval, last_polled_at AS lastPolledAt, status, address, user_id AS userId, code_hash AS codeHash`
type Row = Omit<DeviceCodeRecord, 'status'> & { status: string }
const toRecord = (row: Row | null): DeviceCodeRecord | undefined => (row ? { ...row, status: row.status as DeviceStatus } : undefined)

export class SqliteDevices implements DeviceCodeStore {
  constructor(private readonly ctx: SqliteContext) {}

  insertDeviceCode(c: NewDeviceCode, maxPending: number): Promise<boolean> {
    const { sqlite } = this.ctx.db
    return this.ctx.write(() => {
      const { n } = sqlite.query<{ n: number }, [string, number]>(`SELECT count(*) AS n FROM device_codes WHERE client_id = ? AND status = 'pending' AND expires_at > ?`).get(c.clientId, c.createdAt)!
      if (n >= maxPending) return false
      unique(() =>
        sqlite
          .prepare(`INSERT INTO device_codes (device_code_hash, user_code_hash, client_id, scope, resource, created_at, expires_at, interval, status, address) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?)`)
          .run(c.deviceCodeHash, c.userCodeHash, c.clientId, c.scope, c.resource, c.createdAt, c.expiresAt, c.interval, c.address),
      )
      return true
    })
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
    return (
      this.ctx.db.sqlite.prepare(`UPDATE device_codes SET status = ?, user_id = ?, code_hash = ? WHERE user_code_hash = ? AND status = 'pending' AND expires_at > ?`).run(status, userId, codeHash, userCodeHash, now)
        .changes > 0
    )
  }

  async findDeviceCode(deviceCodeHash: string): Promise<DeviceCodeRecord | undefined> {
    return toRecord(this.ctx.db.sqlite.query<Row, [string]>(`SELECT ${COLUMNS} FROM device_codes WHERE device_code_hash = ?`).get(deviceCodeHash))
  }

  slowDown(deviceCodeHash: string, now: number, interval: number): Promise<void> {
    const { sqlite } = this.ctx.db
    return this.ctx.write(() => void sqlite.query('UPDATE device_codes SET last_polled_at = ?, interval = max(interval, ?) WHERE device_code_hash = ?').run(now, interval, deviceCodeHash))
  }

  finishDeviceCode(deviceCodeHash: string, clientId: string, now: number, status: 'allowed' | 'denied'): Promise<{ codeHash: string | null } | undefined> {
    const { sqlite } = this.ctx.db
    return this.ctx.write(() => {
      const row = sqlite
        .query<{ codeHash: string | null }, [number, string, string, string, number]>(
          `UPDATE device_codes SET status = 'used', last_polled_at = ? WHERE device_code_hash = ? AND client_id = ? AND status = ? AND expires_at > ? RETURNING code_hash AS codeHash`,
        )
        .get(now, deviceCodeHash, clientId, status, now)
      return row ? { codeHash: row.codeHash } : undefined
    })
  }
}
