import { and, eq, sql } from 'drizzle-orm'
import type { ClientRecord, ClientStore } from '../store'
import { changes } from './client'
import { unique, type SqliteContext } from './context'
import { prepared } from './prepared'
import { clients } from './schema'

const p = (name: string) => sql.placeholder(name)
const toClient = (row: typeof clients.$inferSelect): ClientRecord => ({
  id: row.id,
  name: row.name,
  secretHash: row.secretHash,
  redirectUris: row.redirectUris,
  postLogoutRedirectUris: row.postLogoutRedirectUris,
  skipConsent: row.skipConsent,
  requireMfa: row.requireMfa,
})

export class SqliteClients implements ClientStore {
  constructor(private readonly ctx: SqliteContext) {}

  insertClient(client: ClientRecord, now: number): Promise<void> {
    const { db } = this.ctx
    return this.ctx.write(() => void unique(() => db.orm.insert(clients).values({ ...client, createdAt: now }).run()))
  }

  async findClient(id: string): Promise<ClientRecord | undefined> {
    const { db } = this.ctx
    const row = prepared(db, 'clientById', () => db.orm.select().from(clients).where(eq(clients.id, p('id'))).prepare()).get({ id })
    return row && toClient(row)
  }

  async listClients(): Promise<ClientRecord[]> {
    return this.ctx.db.orm.select().from(clients).orderBy(clients.createdAt, clients.id).all().map(toClient)
  }

  deleteClient(id: string): Promise<boolean> {
    const { db } = this.ctx
    return this.ctx.write(() => changes(db.orm.delete(clients).where(eq(clients.id, id)).run()) > 0)
  }

  setRequireMfa(id: string, requireMfa: boolean): Promise<boolean> {
    const { db } = this.ctx
    return this.ctx.write(() => changes(db.orm.update(clients).set({ requireMfa }).where(eq(clients.id, id)).run()) > 0)
  }

  setClientSecret(id: string, secretHash: string): Promise<boolean> {
    const { db } = this.ctx
    return this.ctx.write(
      () => changes(db.orm.update(clients).set({ secretHash }).where(and(eq(clients.id, id), sql`${clients.secretHash} IS NOT NULL`)).run()) > 0,
    )
  }
}
