import type { SQL } from 'bun'
import type { RemoteSettingChange, SettingChange, SettingsDelta, SettingsStore, SettingsUsage, StoredSetting } from '../store'
import { SETTINGS_CHANNEL, type PgChangeFeed } from './change-feed'
import { lock, n, type PgContext, type Row, type Tx } from './context'

const toSetting = (r: Row): StoredSetting => ({ key: r.key as string, value: r.value as string, updatedAt: n(r.updated_at) })

/**
 * A write (or deletion) of one key with the (user, app)'s next revision (`h`, which the write
 * may read), the key's tombstone laid (a deletion) or lifted (a save of a new key), and the NOTIFY that tells
 * every instance once the transaction commits (never before: a change is announced only when it
 * is durable) — one round trip. Runs under the user's settings lock, so revisions are gap-free
 * however instances race.
 */
function writeWithRevision(tx: Tx, userId: string, clientId: string, key: string, now: number, write: SQL.Query<unknown>, tombstone: 'bury' | 'lift' | 'none'): Promise<number> {
  const grave =
    tombstone === 'bury'
      ? tx`INSERT INTO setting_tombstones (user_id, client_id, key, revision, deleted_at) SELECT ${userId}, ${clientId}, ${key}, revision, ${now} FROM h
          ON CONFLICT (user_id, client_id, key) DO UPDATE SET revision = excluded.revision, deleted_at = excluded.deleted_at`
      : tombstone === 'lift'
        ? tx`DELETE FROM setting_tombstones WHERE user_id = ${userId} AND client_id = ${clientId} AND key = ${key}`
        : tx`SELECT 1`
  return tx`WITH h AS (INSERT INTO setting_heads (user_id, client_id, revision) VALUES (${userId}, ${clientId}, 1)
        ON CONFLICT (user_id, client_id) DO UPDATE SET revision = setting_heads.revision + 1 RETURNING revision),
      w AS (${write}), t AS (${grave})
    SELECT revision, pg_notify(${SETTINGS_CHANNEL}, ${`${userId} ${clientId} `} || revision) FROM h`.then((rows: Row[]) => n(rows[0]!.revision))
}

export class PgSettings implements SettingsStore {
  constructor(
    private readonly ctx: PgContext,
    private readonly feed: () => PgChangeFeed,
  ) {}

  /** One statement, one snapshot: the rows and the revision they are at. */
  listSettings(userId: string, clientId: string): Promise<{ settings: StoredSetting[]; revision: number }> {
    return this.ctx.run(async (sql) => {
      const rows = await sql`SELECT h.revision, s.key, s.value, s.updated_at
        FROM (SELECT coalesce((SELECT revision FROM setting_heads WHERE user_id = ${userId} AND client_id = ${clientId}), 0) AS revision) h
        LEFT JOIN settings s ON s.user_id = ${userId} AND s.client_id = ${clientId} ORDER BY s.key`
      return { settings: rows.filter((r: Row) => r.key !== null).map(toSetting), revision: n(rows[0]!.revision) }
    })
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
  ): Promise<StoredSetting & { revision: number }> {
    return this.ctx.tx(async (tx) => {
      // One writer per user at a time, on every instance: quotas span the user's applications.
      const { current, usage } = await this.lockedSetting(tx, userId, clientId, key)
      const updatedAt = decide(current, usage)
      const upsert = tx`INSERT INTO settings (user_id, client_id, key, value, updated_at, revision) SELECT ${userId}, ${clientId}, ${key}, ${value}, ${updatedAt}, revision FROM h
        ON CONFLICT (user_id, client_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at, revision = excluded.revision`
      return { key, value, updatedAt, revision: await writeWithRevision(tx, userId, clientId, key, updatedAt, upsert, current ? 'none' : 'lift') }
    })
  }

  deleteSetting(userId: string, clientId: string, key: string, now: number, check: (current: StoredSetting | undefined) => void): Promise<number | false> {
    return this.ctx.tx(async (tx) => {
      const { current } = await this.lockedSetting(tx, userId, clientId, key)
      check(current)
      if (!current) return false
      return writeWithRevision(tx, userId, clientId, key, now, tx`DELETE FROM settings WHERE user_id = ${userId} AND client_id = ${clientId} AND key = ${key}`, 'bury')
    })
  }

  deleteAppSettings(userId: string, clientId: string, now: number): Promise<SettingChange[]> {
    return this.ctx.tx(async (tx) => {
      await lock(tx, `settings:${userId}`)
      const keys = (await tx`DELETE FROM settings WHERE user_id = ${userId} AND client_id = ${clientId} RETURNING key`).map((r: Row) => r.key as string).sort()
      const out: SettingChange[] = []
      for (const key of keys) out.push({ key, revision: await writeWithRevision(tx, userId, clientId, key, now, tx`SELECT 1`, 'bury'), setting: undefined })
      return out
    })
  }

  /** One statement, one snapshot: the head, and each key changed after `since` at its latest change with its state now. */
  changesSince(userId: string, clientId: string, since: number): Promise<SettingsDelta> {
    return this.ctx.run(async (sql) => {
      // Each key once, at its latest change: a live key with its value, a deleted one by its tombstone.
      const rows = await sql`SELECT h.revision AS head, h.purged_through, c.key, c.revision, c.value, c.updated_at
        FROM (SELECT coalesce(max(revision), 0) AS revision, coalesce(max(purged_through), 0) AS purged_through
              FROM setting_heads WHERE user_id = ${userId} AND client_id = ${clientId}) h
        LEFT JOIN (SELECT key, revision, value, updated_at FROM settings WHERE user_id = ${userId} AND client_id = ${clientId} AND revision > ${since}
              UNION ALL SELECT key, revision, NULL, NULL FROM setting_tombstones WHERE user_id = ${userId} AND client_id = ${clientId} AND revision > ${since}) c ON true
        ORDER BY c.revision`
      const changes = rows
        .filter((r: Row) => r.key !== null)
        .map((r: Row) => ({ key: r.key as string, revision: n(r.revision), setting: r.value === null ? undefined : toSetting(r) }))
      return { revision: n(rows[0]!.head), purgedThrough: n(rows[0]!.purged_through), changes }
    })
  }

  exportSettings(userId: string): Promise<Array<{ clientId: string; settings: StoredSetting[] }>> {
    return this.ctx.run(async (sql) => {
      const apps = new Map<string, StoredSetting[]>()
      for (const r of await sql`SELECT client_id, key, value, updated_at FROM settings WHERE user_id = ${userId} ORDER BY client_id, key`) {
        const list = apps.get(r.client_id as string)
        if (list) list.push(toSetting(r))
        else apps.set(r.client_id as string, [toSetting(r)])
      }
      return [...apps].map(([clientId, settings]) => ({ clientId, settings }))
    })
  }

  onRemoteChange(listener: (change: RemoteSettingChange | undefined) => void): { alive(): boolean; close(): Promise<void> } {
    const feed = this.feed()
    const subscription = feed.listenSettings(listener, () => listener(undefined))
    return {
      alive: () => feed.alive,
      close: async () => void (await (await subscription).unlisten()),
    }
  }
}
