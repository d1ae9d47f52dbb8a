import type { PushedRequest, PushedRequestStore } from '../store'
import type { SqliteContext } from './context'

export class SqlitePushed implements PushedRequestStore {
  constructor(private readonly ctx: SqliteContext) {}

  /** The writer runs one write at a time: the count and the insert are one step. */
  insertPushedRequest(uriHash: string, r: PushedRequest, cap: { max: number; now: number }): Promise<boolean> {
    const { sqlite } = this.ctx.db
    return this.ctx.write(() => {
      const { n } = sqlite.query<{ n: number }, [string, number, number]>('SELECT count(*) AS n FROM pushed_requests WHERE client_id = ? AND expires_at > ? AND expires_at <= ?').get(r.clientId, cap.now, r.expiresAt)!
      if (n >= cap.max) return false
      sqlite.prepare('INSERT INTO pushed_requests (uri_hash, client_id, params, expires_at) VALUES (?, ?, ?, ?)').run(uriHash, r.clientId, JSON.stringify(r.params), r.expiresAt)
      return true
    })
  }

  async findPushedRequest(uriHash: string, now: number): Promise<PushedRequest | undefined> {
    const row = this.ctx.db.sqlite
      .query<{ clientId: string; params: string; expiresAt: number }, [string, number]>('SELECT client_id AS clientId, params, expires_at AS expiresAt FROM pushed_requests WHERE uri_hash = ? AND expires_at > ?')
      .get(uriHash, now)
    return row ? { clientId: row.clientId, params: JSON.parse(row.params), expiresAt: row.expiresAt } : undefined
  }

  redeemPushedRequest(uriHash: string, clientId: string, now: number, redeemedHash: string, redeemedUntil: number): Promise<PushedRequest | undefined> {
    const { sqlite } = this.ctx.db
    return this.ctx.write(() => {
      const row = sqlite
        .query<{ clientId: string; params: string; expiresAt: number }, [string, number, string, string, number]>(
          'UPDATE pushed_requests SET uri_hash = ?, expires_at = ? WHERE uri_hash = ? AND client_id = ? AND expires_at > ? RETURNING client_id AS clientId, params, expires_at AS expiresAt',
        )
        .get(redeemedHash, redeemedUntil, uriHash, clientId, now)
      return row ? { clientId: row.clientId, params: JSON.parse(row.params), expiresAt: row.expiresAt } : undefined
    })
  }

  usePushedRequest(uriHash: string, now: number): Promise<boolean> {
    const { sqlite } = this.ctx.db
    return this.ctx.write(() => sqlite.prepare('DELETE FROM pushed_requests WHERE uri_hash = ? AND expires_at > ?').run(uriHash, now).changes > 0)
  }
}
