import type { PushedRequest, PushedRequestStore } from '../store'
import { lock, n, type PgContext } from './context'

export class PgPushed implements PushedRequestStore {
  constructor(private readonly ctx: PgContext) {}

  /** Under the client's advisory lock: two instances pushing at once cannot both take the last place. */
  insertPushedRequest(uriHash: string, r: PushedRequest, cap: { max: number; now: number }): Promise<boolean> {
    return this.ctx.tx(async (tx) => {
      await lock(tx, `pushed:${r.clientId}`)
      const [{ n: count }] = await tx`SELECT count(*)::int AS n FROM pushed_requests WHERE client_id = ${r.clientId} AND expires_at > ${cap.now} AND expires_at <= ${r.expiresAt}`
      if (count >= cap.max) return false
      await tx`INSERT INTO pushed_requests (uri_hash, client_id, params, expires_at) VALUES (${uriHash}, ${r.clientId}, ${JSON.stringify(r.params)}, ${r.expiresAt})`
      return true
    })
  }

  findPushedRequest(uriHash: string, now: number): Promise<PushedRequest | undefined> {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`SELECT client_id, params, expires_at FROM pushed_requests WHERE uri_hash = ${uriHash} AND expires_at > ${now}`
      return row ? { clientId: row.client_id as string, params: JSON.parse(row.params as string), expiresAt: n(row.expires_at) } : undefined
    })
  }

  /** One UPDATE: of two instances given one request_uri at once, one redeems it. */
  redeemPushedRequest(uriHash: string, clientId: string, now: number, redeemedHash: string, redeemedUntil: number): Promise<PushedRequest | undefined> {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`UPDATE pushed_requests SET uri_hash = ${redeemedHash}, expires_at = ${redeemedUntil}
        WHERE uri_hash = ${uriHash} AND client_id = ${clientId} AND expires_at > ${now} RETURNING client_id, params, expires_at`
      return row ? { clientId: row.client_id as string, params: JSON.parse(row.params as string), expiresAt: n(row.expires_at) } : undefined
    })
  }

  /** DELETE … of two instances given one request_uri at once, one deletes the row. */
  usePushedRequest(uriHash: string, now: number): Promise<boolean> {
    return this.ctx.run(async (sql) => (await sql`DELETE FROM pushed_requests WHERE uri_hash = ${uriHash} AND expires_at > ${now}`).count > 0)
  }
}
