import { and, asc, eq, sql } from 'drizzle-orm'
import type { SettingsStore, SettingsUsage, StoredSetting } from '../store'
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

  async listSettings(userId: string, clientId: string): Promise<StoredSetting[]> {
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

  saveSetting(
    userId: string,
    clientId: string,
    key: string,
    value: string,
    decide: (current: StoredSetting | undefined, usage: SettingsUsage) => number,
  ): Promise<StoredSetting> {
    return this.ctx.write(() => {
      const current = this.readSetting(userId, clientId, key)
      // Usage is read only if asked for: most writes replace a value with one no larger.
      let cached: SettingsUsage | undefined
      const usage = () => (cached ??= this.usage(userId, clientId))
      const updatedAt = decide(current, {
        get keys() {
          return usage().keys
        },
        get bytes() {
          return usage().bytes
        },
      })
      prepared(this.db, 'settingsUpsert', () =>
        this.db.orm
          .insert(settings)
          .values({ userId: p('userId'), clientId: p('clientId'), key: p('key'), value: p('value'), updatedAt: p('updatedAt') })
          .onConflictDoUpdate({
            target: [settings.userId, settings.clientId, settings.key],
            set: { value: sql`excluded.value`, updatedAt: sql`excluded.updated_at` },
          })
          .prepare(),
      ).run({ userId, clientId, key, value, updatedAt })
      return { key, value, updatedAt }
    })
  }

  deleteSetting(userId: string, clientId: string, key: string, check: (current: StoredSetting | undefined) => void): Promise<boolean> {
    return this.ctx.write(() => {
      const current = this.readSetting(userId, clientId, key)
      check(current)
      if (!current) return false
      const deleted = prepared(this.db, 'settingsDelete', () =>
        this.db.orm
          .delete(settings)
          .where(and(eq(settings.userId, p('userId')), eq(settings.clientId, p('clientId')), eq(settings.key, p('key'))))
          .prepare(),
      ).run({ userId, clientId, key })
      return changes(deleted) > 0
    })
  }
}
