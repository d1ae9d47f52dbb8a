import type { AuditEvent, NewClientToken, TokenRecord, TokenStore } from '../store'
import { emitting, n, toUser, type PgContext } from './context'
import { NO_EVENT } from './grants'

export class PgTokens implements TokenStore {
  constructor(private readonly ctx: PgContext) {}

  findToken(id: number): Promise<TokenRecord | undefined> {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`SELECT t.id, t.verifier_hash, t.client_id, t.scope, t.expires_at, t.created_at, t.family_id, t.resource, t.user_id AS token_user, u.id AS user_id, u.email, u.full_name, u.avatar_url, u.email_verified
        FROM access_tokens t LEFT JOIN users u ON u.id = t.user_id WHERE t.id = ${id}`
      // A token whose user is gone is as good as gone; one without a user is a client's own (client_credentials).
      if (!row || (row.token_user !== null && row.user_id === null)) return undefined
      return {
        id: n(row.id),
        verifierHash: row.verifier_hash as string,
        clientId: row.client_id as string,
        scope: row.scope as string,
        expiresAt: n(row.expires_at),
        createdAt: n(row.created_at),
        familyId: row.family_id as string | null,
        resource: row.resource as string | null,
        user: row.token_user === null ? null : toUser({ ...row, id: row.user_id }),
      }
    })
  }

  existingTokens(ids: readonly number[]): Promise<Set<number>> {
    if (ids.length === 0) return Promise.resolve(new Set())
    return this.ctx.run(async (sql) => {
      const rows = await sql.unsafe(`SELECT id FROM access_tokens WHERE id IN (${ids.map((_, i) => `$${i + 1}`).join(', ')})`, ids as number[])
      return new Set(rows.map((r: { id: unknown }) => n(r.id)))
    })
  }

  insertStreamTicket(ticketHash: string, tokenId: number, expiresAt: number): Promise<void> {
    return this.ctx.run(async (sql) => void (await sql`INSERT INTO stream_tickets (ticket_hash, token_id, expires_at) VALUES (${ticketHash}, ${tokenId}, ${expiresAt})`))
  }

  /** DELETE … RETURNING: of two instances given one ticket at once, one gets the row. */
  useStreamTicket(ticketHash: string, now: number): Promise<number | undefined> {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`DELETE FROM stream_tickets WHERE ticket_hash = ${ticketHash} AND expires_at > ${now} RETURNING token_id`
      return row ? n(row.token_id) : undefined
    })
  }

  /**
   * One statement (a transaction of its own): the jti (when given), the token and its event commit
   * together or not at all. A jti another transaction inserted first (ON CONFLICT waits for it to
   * commit) leaves `j` empty: nothing else is inserted.
   */
  insertClientToken(t: NewClientToken, audit?: AuditEvent, jti?: { clientId: string; jti: string; expiresAt: number }): Promise<number | undefined> {
    const e = audit ?? NO_EVENT
    const checked = jti !== undefined
    return this.ctx.run(async (sql) => {
      const [row] = await sql`WITH j AS (INSERT INTO used_assertions (client_id, jti, expires_at)
          SELECT ${jti?.clientId ?? ''}, ${jti?.jti ?? ''}, ${jti?.expiresAt ?? 0} WHERE ${checked} ON CONFLICT DO NOTHING RETURNING 1),
        a AS (INSERT INTO access_tokens (verifier_hash, client_id, user_id, scope, expires_at, created_at, family_id, resource)
          SELECT ${t.verifierHash}, ${t.clientId}, NULL, ${t.scope}, ${t.expiresAt}, ${t.createdAt}, NULL, ${t.resource} WHERE NOT ${checked} OR EXISTS (SELECT 1 FROM j) RETURNING id),
        e AS (INSERT INTO audit_events (at, kind, user_id, client_id, address, user_agent, detail)
          SELECT ${e.at}, ${e.kind}, ${e.userId}, ${e.clientId}, ${e.address}, ${e.userAgent}, ${e.detail} WHERE ${audit !== undefined} AND (NOT ${checked} OR EXISTS (SELECT 1 FROM j)))
        SELECT id FROM a`
      return row ? n(row.id) : undefined
    })
  }

  async deleteToken(id: number): Promise<boolean> {
    const found = await this.ctx.run(async (sql) => (await sql`DELETE FROM access_tokens WHERE id = ${id}`).count > 0)
    return emitting(this.ctx, found, found ? { tokens: [id] } : undefined)
  }
}
