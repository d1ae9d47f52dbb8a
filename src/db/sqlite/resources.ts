import { asc, eq } from 'drizzle-orm'
import type { ResourceRecord, ResourceStore } from '../store'
import { changes } from './client'
import { unique, type SqliteContext } from './context'
import { resources } from './schema'

const toResource = (row: typeof resources.$inferSelect): ResourceRecord => ({
  uri: row.uri,
  name: row.name,
  scopes: row.scopes,
  tokenFormat: row.tokenFormat as ResourceRecord['tokenFormat'],
  introspectors: row.introspectors,
})

export class SqliteResources implements ResourceStore {
  constructor(private readonly ctx: SqliteContext) {}

  insertResource(resource: ResourceRecord, now: number): Promise<void> {
    // A new resource changes what a scope-only client_credentials request finds (ResourceDirectory.list).
    return this.ctx.write(() => {
      unique(() => this.ctx.db.orm.insert(resources).values({ ...resource, createdAt: now }).run())
      this.changed(true)
    })
  }

  async findResource(uri: string): Promise<ResourceRecord | undefined> {
    const row = this.ctx.db.orm.select().from(resources).where(eq(resources.uri, uri)).get()
    return row && toResource(row)
  }

  async listResources(): Promise<ResourceRecord[]> {
    return this.ctx.db.orm.select().from(resources).orderBy(asc(resources.createdAt), asc(resources.uri)).all().map(toResource)
  }

  updateResource(r: ResourceRecord): Promise<boolean> {
    const { name, scopes, tokenFormat, introspectors } = r
    return this.ctx.write(() => this.changed(changes(this.ctx.db.orm.update(resources).set({ name, scopes, tokenFormat, introspectors }).where(eq(resources.uri, r.uri)).run()) > 0))
  }

  deleteResource(uri: string): Promise<boolean> {
    const { sqlite } = this.ctx.db
    return this.ctx.write(() => {
      for (const table of ['consents', 'auth_codes', 'refresh_families', 'refresh_tokens', 'access_tokens']) sqlite.prepare(`DELETE FROM ${table} WHERE resource = ?`).run(uri)
      return this.changed(changes(this.ctx.db.orm.delete(resources).where(eq(resources.uri, uri)).run()) > 0)
    })
  }

  /** A resource registered, changed or deleted (with its grants and tokens): the caches drop everything. */
  private changed(found: boolean): boolean {
    if (found) this.ctx.emit({})
    return found
  }
}
