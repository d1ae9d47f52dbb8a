import { and, asc, eq, sql } from 'drizzle-orm'
import { judgePreconditions, judgeSave } from '../store'
import type { DeleteOutcome, Preconditions, RemoteSettingChange, SaveOutcome, SaveRules, SettingChange, SettingsDelta, SettingsStore, SettingsUsage, StoredSetting } from '../store'
import { changes } from './client'
import type { SqliteContext } from './context'
import { prepared } from './prepared'
import { settingCounts, settings } from './schema'

const p = (name: string) => sql.placeholder(name)

export class SqliteSettings implements SettingsStore {
  constructor(private readonly ctx: SqliteContext) {}

  private get db() {
    return this.ctx.db
  }

  async listSettings(userId: string, clientId: string): Promise<{ settings: StoredSetting[]; revision: number }> {
    // Both read synchronously on the serving connection: one snapshot, no write between them.
    return { settings: this.rows(userId, clientId), revision: this.head(userId, clientId).revision }
  }

  private head(userId: string, clientId: string): { revision: number; purgedThrough: number } {
    const row = prepared(this.db, 'settingsHead', () =>
      this.db.sqlite.prepare<{ revision: number; purgedThrough: number }, [string, string]>(
        'SELECT revision, purged_through AS purgedThrough FROM setting_heads WHERE user_id = ? AND client_id = ?',
      ),
    ).get(userId, clientId)
    return row ?? { revision: 0, purgedThrough: 0 }
  }

  /** The (user, app)'s next revision; inside the write job, so two writes never take one number and none is skipped. */
  private bump(userId: string, clientId: string): number {
    return prepared(this.db, 'settingsBump', () =>
      this.db.sqlite.prepare<{ revision: number }, [string, string]>(
        `INSERT INTO setting_heads (user_id, client_id, revision) VALUES (?1, ?2, 1)
          ON CONFLICT (user_id, client_id) DO UPDATE SET revision = revision + 1 RETURNING revision`,
      ),
    ).get(userId, clientId)!.revision
  }

  /** A deleted key's tombstone (until it is saved again, or purged). */
  private bury(userId: string, clientId: string, key: string, revision: number, now: number): void {
    prepared(this.db, 'settingsBury', () =>
      this.db.sqlite.prepare<unknown, [string, string, string, number, number]>(
        `INSERT INTO setting_tombstones (user_id, client_id, key, revision, deleted_at) VALUES (?1, ?2, ?3, ?4, ?5)
          ON CONFLICT (user_id, client_id, key) DO UPDATE SET revision = excluded.revision, deleted_at = excluded.deleted_at`,
      ),
    ).run(userId, clientId, key, revision, now)
  }

  private rows(userId: string, clientId: string): StoredSetting[] {
    // Raw rows (`values`) skip Drizzle's per-row object mapping on this hot path.
    const rows = prepared(this.db, 'settingsList', () =>
      this.db.orm
        .select({ key: settings.key, value: settings.value, updatedAt: settings.updatedAt })
        .from(settings)
        .where(and(eq(settings.userId, p('userId')), eq(settings.clientId, p('clientId'))))
        .orderBy(asc(settings.key))
        .prepare(),
    ).values({ userId, clientId }) as unknown as Array<[string, string, number]>
    return rows.map(([key, value, updatedAt]) => ({ key, value, updatedAt }))
  }

  async getSetting(userId: string, clientId: string, key: string): Promise<StoredSetting | undefined> {
    return this.readSetting(userId, clientId, key)
  }

  private readSetting(userId: string, clientId: string, key: string): StoredSetting | undefined {
    return prepared(this.db, 'settingsGet', () =>
      this.db.orm
        .select({ key: settings.key, value: settings.value, updatedAt: settings.updatedAt })
        .from(settings)
        .where(and(eq(settings.userId, p('userId')), eq(settings.clientId, p('clientId')), eq(settings.key, p('key'))))
        .prepare(),
    ).get({ userId, clientId, key })
  }

  /** Keys in this app and bytes in all of them, from the rows the triggers keep (drizzle/sqlite/0002, 0004). */
  private usage(userId: string, clientId: string): SettingsUsage {
    const row = prepared(this.db, 'settingsUsage', () =>
      this.db.orm
        .select({
          keys: sql<number>`coalesce(sum(CASE WHEN ${settingCounts.clientId} = ${p('clientId')} THEN ${settingCounts.n} END), 0)`,
          bytes: sql<number>`coalesce(sum(${settingCounts.bytes}), 0)`,
        })
        .from(settingCounts)
        .where(eq(settingCounts.userId, p('userId')))
        .prepare(),
    ).get({ userId, clientId })
    return row ?? { keys: 0, bytes: 0 }
  }

  saveSetting(userId: string, clientId: string, key: string, value: string, rules: SaveRules): Promise<SaveOutcome> {
    return this.ctx.write((): SaveOutcome => {
      const current = this.readSetting(userId, clientId, key)
      // Usage is read only if asked for: most writes replace a value with one no larger.
      let usage: SettingsUsage | undefined
      const updatedAt = judgeSave(current, () => (usage ??= this.usage(userId, clientId)), rules)
      if (typeof updatedAt === 'string') return { ok: false, refused: updatedAt }
      const revision = this.bump(userId, clientId)
      prepared(this.db, 'settingsUpsert', () =>
        this.db.orm
          .insert(settings)
          .values({ userId: p('userId'), clientId: p('clientId'), key: p('key'), value: p('value'), updatedAt: p('updatedAt'), revision: p('revision') })
          .onConflictDoUpdate({
            target: [settings.userId, settings.clientId, settings.key],
            set: { value: sql`excluded.value`, updatedAt: sql`excluded.updated_at`, revision: sql`excluded.revision` },
          })
          .prepare(),
      ).run({ userId, clientId, key, value, updatedAt, revision })
      // Only a new key can have a tombstone.
      if (!current)
        prepared(this.db, 'settingsUnbury', () =>
          this.db.sqlite.prepare<unknown, [string, string, string]>('DELETE FROM setting_tombstones WHERE user_id = ? AND client_id = ? AND key = ?'),
        ).run(userId, clientId, key)
      return { ok: true, setting: { key, value, updatedAt }, revision }
    })
  }

  deleteSetting(userId: string, clientId: string, key: string, now: number, pre: Preconditions): Promise<DeleteOutcome> {
    return this.ctx.write((): DeleteOutcome => {
      const current = this.readSetting(userId, clientId, key)
      const refused = judgePreconditions(current, pre) ?? (current ? undefined : 'missing')
      if (refused) return { ok: false, refused }
      const deleted = prepared(this.db, 'settingsDelete', () =>
        this.db.orm
          .delete(settings)
          .where(and(eq(settings.userId, p('userId')), eq(settings.clientId, p('clientId')), eq(settings.key, p('key'))))
          .prepare(),
      ).run({ userId, clientId, key })
      if (changes(deleted) === 0) return { ok: false, refused: 'missing' }
      const revision = this.bump(userId, clientId)
      this.bury(userId, clientId, key, revision, now)
      return { ok: true, revision }
    })
  }

  deleteAppSettings(userId: string, clientId: string, now: number): Promise<SettingChange[]> {
    return this.ctx.write(() => {
      const keys = this.rows(userId, clientId).map((s) => s.key)
      this.db.sqlite.prepare('DELETE FROM settings WHERE user_id = ? AND client_id = ?').run(userId, clientId)
      return keys.map((key) => {
        const revision = this.bump(userId, clientId)
        this.bury(userId, clientId, key, revision, now)
        return { key, revision, setting: undefined }
      })
    })
  }

  async changesSince(userId: string, clientId: string, since: number): Promise<SettingsDelta> {
    const head = this.head(userId, clientId)
    // Each key once, at its latest change: a live key with its value, a deleted one by its tombstone.
    const rows = prepared(this.db, 'settingsSince', () =>
      this.db.sqlite.prepare<{ key: string; revision: number; value: string | null; updatedAt: number | null }, [string, string, number]>(
        `SELECT key, revision, value, updated_at AS updatedAt FROM settings WHERE user_id = ?1 AND client_id = ?2 AND revision > ?3
          UNION ALL SELECT key, revision, NULL, NULL FROM setting_tombstones WHERE user_id = ?1 AND client_id = ?2 AND revision > ?3
          ORDER BY revision`,
      ),
    ).all(userId, clientId, since)
    const changes = rows.map((r) => ({ key: r.key, revision: r.revision, setting: r.value === null ? undefined : { key: r.key, value: r.value, updatedAt: r.updatedAt! } }))
    return { ...head, changes }
  }

  async footprint(of: { userId: string } | { clientId: string }): Promise<{ settings: number; others: number }> {
    // Fixed column names, chosen here; only the id is a parameter.
    const [mine, theirs, id] = 'userId' in of ? ['user_id', 'client_id', of.userId] : ['client_id', 'user_id', of.clientId]
    return this.db.sqlite
      .prepare<{ settings: number; others: number }, [string]>(
        `SELECT (SELECT coalesce(sum(n), 0) FROM setting_counts WHERE ${mine} = ?1) AS settings,
          (SELECT count(*) FROM (SELECT ${theirs} FROM consents WHERE ${mine} = ?1 UNION SELECT ${theirs} FROM setting_counts WHERE ${mine} = ?1 AND n > 0)) AS others`,
      )
      .get(id)!
  }

  async exportSettings(userId: string): Promise<Array<{ clientId: string; settings: StoredSetting[] }>> {
    const rows = this.db.sqlite
      .prepare<{ clientId: string; key: string; value: string; updatedAt: number }, [string]>(
        'SELECT client_id AS clientId, key, value, updated_at AS updatedAt FROM settings WHERE user_id = ? ORDER BY client_id, key',
      )
      .all(userId)
    const apps = new Map<string, StoredSetting[]>()
    for (const { clientId, ...setting } of rows) {
      const list = apps.get(clientId)
      if (list) list.push(setting)
      else apps.set(clientId, [setting])
    }
    return [...apps].map(([clientId, settings]) => ({ clientId, settings }))
  }

  /** One process writes a SQLite file: every change is published by the instance that made it. */
  onRemoteChange(_listener: (change: RemoteSettingChange | undefined) => void): { alive(): boolean; close(): Promise<void> } {
    return { alive: () => true, close: async () => {} }
  }
}
