import { etagList } from '../store'
import type { DeleteOutcome, Preconditions, RemoteSettingChange, SaveOutcome, SaveRules, SettingChange, SettingRefusal, SettingsDelta, SettingsStore, StoredSetting } from '../store'
import { SETTINGS_CHANNEL, type PgChangeFeed } from './change-feed'
import { lock, n, type PgContext, type Row, type Tx } from './context'

const toSetting = (r: Row): StoredSetting => ({ key: r.key as string, value: r.value as string, updatedAt: n(r.updated_at) })

/** A bury-only revision for deleteAppSettings: `latchkey_next_setting_revision` (migration 0014) takes the next one, lays the tombstone and NOTIFYs at commit. */
function buryWithRevision(tx: Tx, userId: string, clientId: string, key: string, now: number): Promise<number> {
  return tx`SELECT latchkey_next_setting_revision(${userId}, ${clientId}, ${key}, ${now}, 'bury', ${SETTINGS_CHANNEL}) AS revision`.then((rows: Row[]) => n(rows[0]!.revision))
}

/** If-Match / If-None-Match as the SQL functions take them: `*`, or `etagList`'s tags joined with `,`. */
function tags(header: string | undefined): string | null {
  if (header === undefined) return null
  const list = etagList(header)
  return list === '*' ? '*' : list.join(',')
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

  /**
   * One round trip: `latchkey_save_setting` (migration 0014) locks the user's settings (every
   * instance queues there; quotas span the user's applications), decides `judgeSave`'s rules on
   * what committed before, writes with the next revision and NOTIFYs at commit.
   */
  saveSetting(userId: string, clientId: string, key: string, value: string, rules: SaveRules): Promise<SaveOutcome> {
    return this.ctx.atomic(async (sql) => {
      const [row] = await sql`SELECT refused, revision, updated_at FROM latchkey_save_setting(${userId}, ${clientId}, ${key}, ${value}, ${rules.now}, ${rules.valueBytes},
        ${rules.maxKeys}, ${rules.maxUserBytes}, ${tags(rules.ifMatch)}, ${tags(rules.ifNoneMatch)}, ${SETTINGS_CHANNEL})`
      if (row!.refused !== null) return { ok: false, refused: row!.refused as SettingRefusal }
      return { ok: true, setting: { key, value, updatedAt: n(row!.updated_at) }, revision: n(row!.revision) }
    })
  }

  /** One round trip: `latchkey_delete_setting` (migration 0014), under the same lock. */
  deleteSetting(userId: string, clientId: string, key: string, now: number, pre: Preconditions): Promise<DeleteOutcome> {
    return this.ctx.atomic(async (sql) => {
      const [row] = await sql`SELECT refused, revision FROM latchkey_delete_setting(${userId}, ${clientId}, ${key}, ${now}, ${tags(pre.ifMatch)}, ${tags(pre.ifNoneMatch)}, ${SETTINGS_CHANNEL})`
      if (row!.refused !== null) return { ok: false, refused: row!.refused as 'if-match' | 'if-none-match' | 'missing' }
      return { ok: true, revision: n(row!.revision) }
    })
  }

  deleteAppSettings(userId: string, clientId: string, now: number): Promise<SettingChange[]> {
    return this.ctx.tx(async (tx) => {
      await lock(tx, `settings:${userId}`)
      const keys = (await tx`DELETE FROM settings WHERE user_id = ${userId} AND client_id = ${clientId} RETURNING key`).map((r: Row) => r.key as string).sort()
      const out: SettingChange[] = []
      for (const key of keys) out.push({ key, revision: await buryWithRevision(tx, userId, clientId, key, now), setting: undefined })
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
