import type { DeviceCodeRecord, DeviceCodeStore, DeviceStatus, NewCode, NewDeviceCode } from '../store'
import { writeCode } from './grants'
import { lock, n, type PgContext, type Row } from './context'

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

export class PgDevices implements DeviceCodeStore {
  constructor(private readonly ctx: PgContext) {}

  insertDeviceCode(c: NewDeviceCode, maxPending: number): Promise<boolean> {
    // A taken user code is a UniqueViolation (portError): the caller draws another.
    return this.ctx.tx(async (tx) => {
      await lock(tx, `device:${c.clientId}`)
      const [{ n: count }] = await tx`SELECT count(*)::int AS n FROM device_codes WHERE client_id = ${c.clientId} AND status = 'pending' AND expires_at > ${c.createdAt}`
      if (count >= maxPending) return false
      await tx`INSERT INTO device_codes (device_code_hash, user_code_hash, client_id, scope, resource, created_at, expires_at, interval, status, address)
          VALUES (${c.deviceCodeHash}, ${c.userCodeHash}, ${c.clientId}, ${c.scope}, ${c.resource}, ${c.createdAt}, ${c.expiresAt}, ${c.interval}, 'pending', ${c.address})`
      return true
    })
  }

  findPendingByUserCode(userCodeHash: string, now: number): Promise<DeviceCodeRecord | undefined> {
    return this.ctx.run(async (sql) => toRecord((await sql.unsafe(`SELECT ${COLUMNS} FROM device_codes WHERE user_code_hash = $1 AND status = 'pending' AND expires_at > $2`, [userCodeHash, now]))[0]))
  }

  /** One UPDATE … WHERE status = 'pending': of two decisions at once, on any instances, one counts. */
  denyDeviceCode(userCodeHash: string, now: number, userId: string): Promise<boolean> {
    return this.ctx.run(
      async (sql) => (await sql`UPDATE device_codes SET status = 'denied', user_id = ${userId} WHERE user_code_hash = ${userCodeHash} AND status = 'pending' AND expires_at > ${now}`).count > 0,
    )
  }

  /** The decision's UPDATE, then the code and the consent, in one transaction; a decision that does not count writes nothing. */
  allowDeviceCode(userCodeHash: string, now: number, code: NewCode, remember: { scopes: readonly string[]; canonicalOrder: readonly string[] }): Promise<boolean> {
    return this.ctx.tx(async (tx) => {
      const decided = await tx`UPDATE device_codes SET status = 'allowed', user_id = ${code.userId}, code_hash = ${code.codeHash}
        WHERE user_code_hash = ${userCodeHash} AND status = 'pending' AND expires_at > ${now}`
      if (decided.count === 0) return false
      await writeCode(tx, code, { ...remember, now })
      return true
    })
  }

  findDeviceCode(deviceCodeHash: string): Promise<DeviceCodeRecord | undefined> {
    return this.ctx.run(async (sql) => toRecord((await sql.unsafe(`SELECT ${COLUMNS} FROM device_codes WHERE device_code_hash = $1`, [deviceCodeHash]))[0]))
  }

  slowDown(deviceCodeHash: string, now: number, interval: number): Promise<void> {
    return this.ctx.run(async (sql) => void (await sql`UPDATE device_codes SET last_polled_at = ${now}, interval = greatest(interval, ${interval}) WHERE device_code_hash = ${deviceCodeHash}`))
  }

  /** One UPDATE … WHERE status: of two polls at once, on any instances, one finishes it. */
  finishDeviceCode(deviceCodeHash: string, clientId: string, now: number, status: 'allowed' | 'denied'): Promise<{ codeHash: string | null } | undefined> {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`UPDATE device_codes SET status = 'used', last_polled_at = ${now}
        WHERE device_code_hash = ${deviceCodeHash} AND client_id = ${clientId} AND status = ${status} AND expires_at > ${now} RETURNING code_hash`
      return row ? { codeHash: row.code_hash as string | null } : undefined
    })
  }
}
