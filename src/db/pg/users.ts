import type { EmailToken, NewMail, NewUser, UserRecord, UserStore } from '../store'
import { toUser, type PgContext } from './context'
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

  listUsers(): Promise<UserRecord[]> {
    return this.ctx.run(async (sql) => (await sql`SELECT id, email, full_name, avatar_url, email_verified FROM users ORDER BY created_at, id`).map(toUser))
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
