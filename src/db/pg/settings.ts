import type { SettingsStore, SettingsUsage, StoredSetting } from '../store'
import { lock, n, type PgContext, type Row, type Tx } from './context'

const toSetting = (r: Row): StoredSetting => ({ key: r.key as string, value: r.value as string, updatedAt: n(r.updated_at) })

export class PgSettings implements SettingsStore {
  constructor(private readonly ctx: PgContext) {}

  listSettings(userId: string, clientId: string): Promise<StoredSetting[]> {
    return this.ctx.run(async (sql) =>
      (await sql`SELECT key, value, updated_at FROM settings WHERE user_id = ${userId} AND client_id = ${clientId} ORDER BY key`).map(toSetting),
    )
  }

  getSetting(userId: string, clientId: string, key: string): Promise<StoredSetting | undefined> {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`SELECT key, value, updated_at FROM settings WHERE user_id = ${userId} AND client_id = ${clientId} AND key = ${key}`
      return row && toSetting(row)
    })
  }

  /** Locks the user's settings (every instance queues here), then reads the key and the usage in one statement. */
  private async lockedSetting(tx: Tx, userId: string, clientId: string, key: string) {
    await lock(tx, `settings:${userId}`)
    const [row] = await tx`SELECT s.value, s.updated_at,
        (SELECT coalesce(sum(n) FILTER (WHERE client_id = ${clientId}), 0) FROM setting_counts WHERE user_id = ${userId}) AS keys,
        (SELECT coalesce(sum(bytes), 0) FROM setting_counts WHERE user_id = ${userId}) AS bytes
      FROM (SELECT 1) one LEFT JOIN settings s ON s.user_id = ${userId} AND s.client_id = ${clientId} AND s.key = ${key}`
    const current = row!.value === null ? undefined : { key, value: row!.value as string, updatedAt: n(row!.updated_at) }
    return { current, usage: { keys: n(row!.keys), bytes: n(row!.bytes) } }
  }

  saveSetting(
    userId: string,
    clientId: string,
    key: string,
    value: string,
    decide: (current: StoredSetting | undefined, usage: SettingsUsage) => number,
  ): Promise<StoredSetting> {
    return this.ctx.tx(async (tx) => {
      // One writer per user at a time, on every instance: quotas span the user's applications.
      const { current, usage } = await this.lockedSetting(tx, userId, clientId, key)
      const updatedAt = decide(current, usage)
      await tx`INSERT INTO settings (user_id, client_id, key, value, updated_at) VALUES (${userId}, ${clientId}, ${key}, ${value}, ${updatedAt})
        ON CONFLICT (user_id, client_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`
      return { key, value, updatedAt }
    })
  }

  deleteSetting(userId: string, clientId: string, key: string, check: (current: StoredSetting | undefined) => void): Promise<boolean> {
    return this.ctx.tx(async (tx) => {
      const { current } = await this.lockedSetting(tx, userId, clientId, key)
      check(current)
      if (!current) return false
      await tx`DELETE FROM settings WHERE user_id = ${userId} AND client_id = ${clientId} AND key = ${key}`
      return true
    })
  }
}
