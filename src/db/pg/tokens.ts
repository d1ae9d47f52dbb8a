import type { TokenRecord, TokenStore } from '../store'
import { n, toUser, type PgContext } from './context'

export class PgTokens implements TokenStore {
  constructor(private readonly ctx: PgContext) {}

  findToken(id: number): Promise<TokenRecord | undefined> {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`SELECT t.id, t.verifier_hash, t.client_id, t.scope, t.expires_at, t.created_at, t.family_id, t.resource, u.id AS user_id, u.email, u.full_name, u.avatar_url, u.email_verified
        FROM access_tokens t JOIN users u ON u.id = t.user_id WHERE t.id = ${id}`
      if (!row) return undefined
      return {
        id: n(row.id),
        verifierHash: row.verifier_hash as string,
        clientId: row.client_id as string,
        scope: row.scope as string,
        expiresAt: n(row.expires_at),
        createdAt: n(row.created_at),
        familyId: row.family_id as string | null,
        resource: row.resource as string | null,
        user: toUser({ ...row, id: row.user_id }),
      }
    })
  }

  deleteToken(id: number): Promise<boolean> {
    return this.ctx.run(async (sql) => (await sql`DELETE FROM access_tokens WHERE id = ${id}`).count > 0)
  }
}
