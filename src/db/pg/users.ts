import type { AdminChange, AvatarUpload, Change, EmailToken, NewMail, NewUser, PasskeyRecord, UserListing, UserPicture, UserRecord, UserStore } from '../store'
import { emitting, n, toUser, type PgContext, type Row, type Tx } from './context'
import { insertToken } from './mail'

export class PgUsers implements UserStore {
  constructor(private readonly ctx: PgContext) {}

  insertUser(user: NewUser, now: number, welcome?: { token: EmailToken; mail: NewMail | null }): Promise<void> {
    return this.ctx.tx(async (tx) => {
      await tx`INSERT INTO users (id, email, full_name, avatar_url, password_hash, created_at, email_verified)
          VALUES (${user.id}, ${user.email}, ${user.fullName}, ${user.avatarUrl}, ${user.passwordHash}, ${now}, ${user.emailVerified})`
      if (welcome) await insertToken(tx, welcome.token, welcome.mail, now)
    })
  }

  findUser(id: string): Promise<UserRecord | undefined> {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`SELECT id, email, full_name, avatar_url, email_verified, locale, time_zone FROM users WHERE id = ${id}`
      return row && toUser(row)
    })
  }

  findUserByEmail(email: string) {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`SELECT id, email, full_name, avatar_url, email_verified, locale, time_zone, password_hash FROM users WHERE email = ${email}`
      return row && { ...toUser(row), passwordHash: row.password_hash as string }
    })
  }

  listUsers(filter: { query?: string; limit?: number } = {}): Promise<UserListing[]> {
    // `\` escapes the pattern's own % and _.
    const pattern = filter.query ? `%${filter.query.replace(/[\\%_]/g, (c) => '\\' + c)}%` : null
    return this.ctx.run(async (sql) =>
      (
        await sql`SELECT id, email, full_name, avatar_url, email_verified, is_admin, disabled_at FROM users
          WHERE ${pattern}::text IS NULL OR email ILIKE ${pattern} OR full_name ILIKE ${pattern}
          ORDER BY created_at, id LIMIT ${filter.limit ?? null}`
      ).map((r: Row) => ({
        ...toUser(r),
        admin: r.is_admin as boolean,
        disabled: r.disabled_at !== null,
      })),
    )
  }

  async setFullName(id: string, fullName: string): Promise<boolean> {
    const found = await this.ctx.run(async (sql) => (await sql`UPDATE users SET full_name = ${fullName} WHERE id = ${id}`).count > 0)
    return emitting(this.ctx, found, found ? { users: [id] } : undefined)
  }

  async setProfile(id: string, profile: { fullName: string; avatarUrl: string | null }): Promise<boolean> {
    const found = await this.ctx.tx(async (tx) => {
      const updated = (await tx`UPDATE users SET full_name = ${profile.fullName}, avatar_url = ${profile.avatarUrl} WHERE id = ${id}`).count > 0
      await tx`DELETE FROM user_avatars WHERE user_id = ${id}`
      return updated
    })
    return emitting(this.ctx, found, found ? { users: [id] } : undefined)
  }

  /** The user's row first (its lock orders two uploads at once), then the picture's. */
  async setAvatar(id: string, avatar: { url: string | null; upload?: AvatarUpload }, now: number): Promise<boolean> {
    const found = await this.ctx.tx(async (tx) => {
      if ((await tx`UPDATE users SET avatar_url = ${avatar.url} WHERE id = ${id}`).count === 0) return false
      const { upload } = avatar
      if (!upload) await tx`DELETE FROM user_avatars WHERE user_id = ${id}`
      else
        await tx`INSERT INTO user_avatars (user_id, content_type, bytes, etag, updated_at)
            VALUES (${id}, ${upload.contentType}, ${Buffer.from(upload.bytes)}, ${upload.etag}, ${now})
          ON CONFLICT (user_id) DO UPDATE SET content_type = excluded.content_type, bytes = excluded.bytes, etag = excluded.etag, updated_at = excluded.updated_at`
      return true
    })
    return emitting(this.ctx, found, found ? { users: [id] } : undefined)
  }

  findAvatar(id: string): Promise<UserPicture | undefined> {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`SELECT u.full_name, a.content_type, a.bytes, a.etag, a.updated_at FROM users u LEFT JOIN user_avatars a ON a.user_id = u.id
        WHERE u.id = ${id} AND u.disabled_at IS NULL`
      if (!row) return undefined
      const fullName = row.full_name as string
      if (row.etag === null) return { fullName }
      return { fullName, upload: { contentType: row.content_type as string, bytes: new Uint8Array(row.bytes as Uint8Array), etag: row.etag as string, updatedAt: n(row.updated_at) } }
    })
  }

  async setLanguage(id: string, language: { locale: string | null; timeZone: string | null }): Promise<boolean> {
    return this.ctx.run(async (sql) => (await sql`UPDATE users SET locale = ${language.locale}, time_zone = ${language.timeZone} WHERE id = ${id}`).count > 0)
  }

  async setAdmin(id: string, admin: boolean): Promise<boolean> {
    const found = await this.ctx.run(async (sql) => (await sql`UPDATE users SET is_admin = ${admin} WHERE id = ${id}`).count > 0)
    return emitting(this.ctx, found, found ? { users: [id] } : undefined)
  }

  /** The user's row first (a session insert waits on it), then their grants in the lock order, then their sessions. */
  async setDisabled(id: string, disabled: boolean, now: number): Promise<boolean> {
    const change = await this.ctx.tx((tx) => disable(tx, id, disabled, now))
    return emitting(this.ctx, change !== undefined, change)
  }

  /**
   * The user's codes and families go first (the grant lock order): an exchange or a refresh
   * holding one while its insert checks the user row is waited for, never deadlocked with the
   * cascade.
   */
  async deleteUser(id: string): Promise<boolean> {
    const found = await this.ctx.tx((tx) => remove(tx, id))
    // Its tokens, consents and settings went with it (cascades): the caches drop everything.
    return emitting(this.ctx, found, found ? {} : undefined)
  }

  /**
   * Every enabled admin's row is locked first (in id order, so two of these queue rather than
   * deadlock); under READ COMMITTED a waiter re-reads a row that changed, so after a concurrent
   * demotion it sees one admin fewer. A refusal rolls back: a delete's grants come back too.
   */
  async changeKeepingAnAdmin(id: string, change: AdminChange, now: number): Promise<'done' | 'unknown' | 'last-admin'> {
    try {
      const changed = await this.ctx.tx(async (tx): Promise<Change | undefined> => {
        const admins = await tx`SELECT id FROM users WHERE is_admin AND disabled_at IS NULL ORDER BY id FOR UPDATE`
        if (admins.length === 1 && admins[0].id === id) throw LAST_ADMIN
        if (change === 'demote') return (await tx`UPDATE users SET is_admin = false WHERE id = ${id}`).count > 0 ? { users: [id] } : undefined
        if (change === 'disable') return disable(tx, id, true, now)
        return (await remove(tx, id)) ? {} : undefined
      })
      return emitting(this.ctx, changed ? 'done' : 'unknown', changed)
    } catch (error) {
      if (error === LAST_ADMIN) return 'last-admin'
      throw error
    }
  }

  adminExists(): Promise<boolean> {
    return this.ctx.run(async (sql) => (await sql`SELECT 1 FROM users WHERE is_admin AND disabled_at IS NULL LIMIT 1`).length > 0)
  }

  /**
   * The token's row is the lock: a second setup with the same token waits on the UPDATE, then
   * re-reads the row (READ COMMITTED) and finds it used. A taken email rolls the claim back.
   */
  insertFirstAdmin(user: NewUser, tokenHash: string, since: number, now: number, passkey?: PasskeyRecord): Promise<'done' | 'refused'> {
    return this.ctx.tx(async (tx) => {
      const claimed = await tx`UPDATE server_secrets SET value = 'used:' || value WHERE name = 'setup' AND value = ${tokenHash} AND created_at >= ${since}
          AND NOT EXISTS (SELECT 1 FROM users WHERE is_admin AND disabled_at IS NULL)`
      if (claimed.count === 0) return 'refused'
      await tx`INSERT INTO users (id, email, full_name, avatar_url, password_hash, created_at, email_verified, is_admin)
          VALUES (${user.id}, ${user.email}, ${user.fullName}, ${user.avatarUrl}, ${user.passwordHash}, ${now}, ${user.emailVerified}, true)`
      if (passkey)
        await tx`INSERT INTO passkeys (credential_id, user_id, name, public_key, sign_count, transports, created_at, last_used_at)
          VALUES (${passkey.credentialId}, ${passkey.userId}, ${passkey.name}, ${passkey.publicKey}, ${passkey.signCount}, ${JSON.stringify(passkey.transports)}::jsonb, ${passkey.createdAt}, ${passkey.lastUsedAt})`
      return 'done'
    })
  }
}

const LAST_ADMIN = new Error('last admin')

/** What the caches must hear once it committed: the user, and the tokens a disabling deleted; undefined for an unknown user. */
async function disable(tx: Tx, id: string, disabled: boolean, now: number): Promise<Change | undefined> {
  const found = (await tx`UPDATE users SET disabled_at = ${disabled ? now : null} WHERE id = ${id}`).count > 0
  if (!found) return undefined
  if (!disabled) return { users: [id] }
  await tx`DELETE FROM auth_codes WHERE user_id = ${id}`
  await tx`DELETE FROM refresh_families WHERE user_id = ${id}`
  await tx`DELETE FROM refresh_tokens WHERE user_id = ${id}`
  const tokens = await tx`DELETE FROM access_tokens WHERE user_id = ${id} RETURNING id`
  await tx`DELETE FROM sessions WHERE user_id = ${id}`
  return { users: [id], tokens: tokens.map((r: Row) => n(r.id)) }
}

async function remove(tx: Tx, id: string): Promise<boolean> {
  await tx`DELETE FROM auth_codes WHERE user_id = ${id}`
  await tx`DELETE FROM refresh_families WHERE user_id = ${id}`
  return (await tx`DELETE FROM users WHERE id = ${id}`).count > 0
}
