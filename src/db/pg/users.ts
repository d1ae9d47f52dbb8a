import type { EmailToken, NewMail, NewUser, UserListing, UserRecord, UserStore } from '../store'
import { toUser, type PgContext, type Row } from './context'
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
      const [row] = await sql`SELECT id, email, full_name, avatar_url, email_verified FROM users WHERE id = ${id}`
      return row && toUser(row)
    })
  }

  findUserByEmail(email: string) {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`SELECT id, email, full_name, avatar_url, email_verified, password_hash FROM users WHERE email = ${email}`
      return row && { ...toUser(row), passwordHash: row.password_hash as string }
    })
  }

  listUsers(): Promise<UserListing[]> {
    return this.ctx.run(async (sql) =>
      (await sql`SELECT id, email, full_name, avatar_url, email_verified, is_admin, disabled_at FROM users ORDER BY created_at, id`).map((r: Row) => ({
        ...toUser(r),
        admin: r.is_admin as boolean,
        disabled: r.disabled_at !== null,
      })),
    )
  }

  setFullName(id: string, fullName: string): Promise<boolean> {
    return this.ctx.run(async (sql) => (await sql`UPDATE users SET full_name = ${fullName} WHERE id = ${id}`).count > 0)
  }

  setAdmin(id: string, admin: boolean): Promise<boolean> {
    return this.ctx.run(async (sql) => (await sql`UPDATE users SET is_admin = ${admin} WHERE id = ${id}`).count > 0)
  }

  /** The user's row first (a session insert waits on it), then their grants in the lock order, then their sessions. */
  setDisabled(id: string, disabled: boolean, now: number): Promise<boolean> {
    return this.ctx.tx(async (tx) => {
      const found = (await tx`UPDATE users SET disabled_at = ${disabled ? now : null} WHERE id = ${id}`).count > 0
      if (found && disabled) {
        await tx`DELETE FROM auth_codes WHERE user_id = ${id}`
        await tx`DELETE FROM refresh_families WHERE user_id = ${id}`
        await tx`DELETE FROM refresh_tokens WHERE user_id = ${id}`
        await tx`DELETE FROM access_tokens WHERE user_id = ${id}`
        await tx`DELETE FROM sessions WHERE user_id = ${id}`
      }
      return found
    })
  }

  /**
   * The user's codes and families go first (the grant lock order): an exchange or a refresh
   * holding one while its insert checks the user row is waited for, never deadlocked with the
   * cascade.
   */
  deleteUser(id: string): Promise<boolean> {
    return this.ctx.tx(async (tx) => {
      await tx`DELETE FROM auth_codes WHERE user_id = ${id}`
      await tx`DELETE FROM refresh_families WHERE user_id = ${id}`
      return (await tx`DELETE FROM users WHERE id = ${id}`).count > 0
    })
  }
}
