import { and, eq, isNull, or, sql } from 'drizzle-orm'
import type { AdminChange, AvatarUpload, EmailToken, NewMail, NewUser, PasskeyRecord, UserListing, UserPicture, UserRecord, UserStore } from '../store'
import { insertToken } from './mail'
import { changes } from './client'
import { unique, type SqliteContext } from './context'
import { prepared } from './prepared'
import { passkeys, userAvatars, users } from './schema'

const p = (name: string) => sql.placeholder(name)
export const toUser = (row: typeof users.$inferSelect): UserRecord => ({
  id: row.id,
  email: row.email,
  fullName: row.fullName,
  avatarUrl: row.avatarUrl,
  emailVerified: row.emailVerified,
  locale: row.locale,
  timeZone: row.timeZone,
})

export class SqliteUsers implements UserStore {
  constructor(private readonly ctx: SqliteContext) {}

  insertUser(user: NewUser, now: number, welcome?: { token: EmailToken; mail: NewMail | null }): Promise<void> {
    const { db } = this.ctx
    return this.ctx.write(() => {
      unique(() => db.orm.insert(users).values({ ...user, createdAt: now }).run())
      if (welcome) insertToken(db, welcome.token, welcome.mail, now)
    })
  }

  async findUser(id: string): Promise<UserRecord | undefined> {
    const { db } = this.ctx
    const row = prepared(db, 'userById', () => db.orm.select().from(users).where(eq(users.id, p('id'))).prepare()).get({ id })
    return row && toUser(row)
  }

  async findUserByEmail(email: string) {
    const { db } = this.ctx
    const row = prepared(db, 'userByEmail', () => db.orm.select().from(users).where(eq(users.email, p('email'))).prepare()).get({ email })
    return row && { ...toUser(row), passwordHash: row.passwordHash }
  }

  async listUsers(filter: { query?: string; limit?: number } = {}): Promise<UserListing[]> {
    // LIKE is case-insensitive for ASCII in SQLite; `\` escapes the pattern's own % and _.
    const pattern = filter.query ? `%${filter.query.replace(/[\\%_]/g, (c) => '\\' + c)}%` : undefined
    const matching = pattern === undefined ? undefined : or(sql`${users.email} LIKE ${pattern} ESCAPE '\\'`, sql`${users.fullName} LIKE ${pattern} ESCAPE '\\'`)
    return this.ctx.db.orm
      .select()
      .from(users)
      .where(matching)
      .orderBy(users.createdAt, users.id)
      .limit(filter.limit ?? -1)
      .all()
      .map((row) => ({ ...toUser(row), admin: row.isAdmin, disabled: row.disabledAt !== null }))
  }

  setFullName(id: string, fullName: string): Promise<boolean> {
    return this.ctx.write(() => this.changed(id, changes(this.ctx.db.orm.update(users).set({ fullName }).where(eq(users.id, id)).run()) > 0))
  }

  setLanguage(id: string, language: { locale: string | null; timeZone: string | null }): Promise<boolean> {
    return this.ctx.write(() => this.changed(id, changes(this.ctx.db.orm.update(users).set({ locale: language.locale, timeZone: language.timeZone }).where(eq(users.id, id)).run()) > 0))
  }

  setProfile(id: string, profile: { fullName: string; avatarUrl: string | null }): Promise<boolean> {
    const { orm } = this.ctx.db
    return this.ctx.write(() => {
      orm.delete(userAvatars).where(eq(userAvatars.userId, id)).run()
      return this.changed(id, changes(orm.update(users).set({ fullName: profile.fullName, avatarUrl: profile.avatarUrl }).where(eq(users.id, id)).run()) > 0)
    })
  }

  setAvatar(id: string, avatar: { url: string | null; upload?: AvatarUpload }, now: number): Promise<boolean> {
    const { orm } = this.ctx.db
    return this.ctx.write(() => {
      if (changes(orm.update(users).set({ avatarUrl: avatar.url }).where(eq(users.id, id)).run()) === 0) return false
      const { upload } = avatar
      if (!upload) orm.delete(userAvatars).where(eq(userAvatars.userId, id)).run()
      else {
        const row = { contentType: upload.contentType, bytes: Buffer.from(upload.bytes), etag: upload.etag, updatedAt: now }
        orm.insert(userAvatars).values({ userId: id, ...row }).onConflictDoUpdate({ target: userAvatars.userId, set: row }).run()
      }
      return this.changed(id, true)
    })
  }

  async findAvatar(id: string): Promise<UserPicture | undefined> {
    const row = this.ctx.db.orm
      .select({ fullName: users.fullName, upload: userAvatars })
      .from(users)
      .leftJoin(userAvatars, eq(userAvatars.userId, users.id))
      .where(and(eq(users.id, id), isNull(users.disabledAt)))
      .get()
    if (!row) return undefined
    const { fullName, upload } = row
    return upload ? { fullName, upload: { contentType: upload.contentType, bytes: new Uint8Array(upload.bytes), etag: upload.etag, updatedAt: upload.updatedAt } } : { fullName }
  }

  setAdmin(id: string, admin: boolean): Promise<boolean> {
    return this.ctx.write(() => this.changed(id, changes(this.ctx.db.orm.update(users).set({ isAdmin: admin }).where(eq(users.id, id)).run()) > 0))
  }

  /** The caches hear of a user whose row changed (the change feed). */
  private changed(id: string, found: boolean): boolean {
    if (found) this.ctx.emit({ users: [id] })
    return found
  }

  setDisabled(id: string, disabled: boolean, now: number): Promise<boolean> {
    return this.ctx.write(() => this.disable(id, disabled, now))
  }

  private disable(id: string, disabled: boolean, now: number): boolean {
    const { sqlite } = this.ctx.db
    const found = changes(this.ctx.db.orm.update(users).set({ disabledAt: disabled ? now : null }).where(eq(users.id, id)).run()) > 0
    if (!found) return false
    if (!disabled) return this.changed(id, true)
    for (const table of ['sessions', 'auth_codes', 'refresh_tokens', 'refresh_families']) sqlite.prepare(`DELETE FROM ${table} WHERE user_id = ?`).run(id)
    const tokens = sqlite.prepare<{ id: number }, [string]>('DELETE FROM access_tokens WHERE user_id = ? RETURNING id').all(id)
    this.ctx.emit({ users: [id], tokens: tokens.map((t) => t.id) })
    return true
  }

  deleteUser(id: string): Promise<boolean> {
    const { db } = this.ctx
    return this.ctx.write(() => this.removed(changes(db.orm.delete(users).where(eq(users.id, id)).run()) > 0))
  }

  /** A user deleted takes tokens, consents and settings with it (cascades): the caches drop everything. */
  private removed(found: boolean): boolean {
    if (found) this.ctx.emit({})
    return found
  }

  /** One write job: the check and the change see the same database. */
  changeKeepingAnAdmin(id: string, change: AdminChange, now: number): Promise<'done' | 'unknown' | 'last-admin'> {
    const { db } = this.ctx
    return this.ctx.write(() => {
      const admins = db.orm.select({ id: users.id }).from(users).where(and(eq(users.isAdmin, true), isNull(users.disabledAt))).all()
      if (admins.length === 1 && admins[0]!.id === id) return 'last-admin'
      const found =
        change === 'demote'
          ? this.changed(id, changes(db.orm.update(users).set({ isAdmin: false }).where(eq(users.id, id)).run()) > 0)
          : change === 'disable'
            ? this.disable(id, true, now)
            : this.removed(changes(db.orm.delete(users).where(eq(users.id, id)).run()) > 0)
      return found ? 'done' : 'unknown'
    })
  }

  async adminExists(): Promise<boolean> {
    return this.ctx.db.sqlite.query('SELECT 1 FROM users WHERE is_admin = 1 AND disabled_at IS NULL LIMIT 1').get() !== null
  }

  /** One write job: the token's claim, the check and the insert commit together, or (a taken email) not at all. */
  insertFirstAdmin(user: NewUser, tokenHash: string, since: number, now: number, passkey?: PasskeyRecord): Promise<'done' | 'refused'> {
    const { db } = this.ctx
    return this.ctx.write(() => {
      const claimed = db.sqlite
        .prepare<unknown, [string, number]>(
          `UPDATE server_secrets SET value = 'used:' || value WHERE name = 'setup' AND value = ?1 AND created_at >= ?2
            AND NOT EXISTS (SELECT 1 FROM users WHERE is_admin = 1 AND disabled_at IS NULL)`,
        )
        .run(tokenHash, since).changes
      if (claimed === 0) return 'refused'
      unique(() => db.orm.insert(users).values({ ...user, isAdmin: true, createdAt: now }).run())
      if (passkey) unique(() => db.orm.insert(passkeys).values(passkey).run())
      return 'done'
    })
  }
}
