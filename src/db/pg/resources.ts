import type { ResourceRecord, ResourceScopes, ResourceStore } from '../store'
import { emitting, json, type PgContext, type Row } from './context'
import { deleteGrantsWhere } from './grants'

const toResource = (r: Row): ResourceRecord => ({
  uri: r.uri as string,
  name: r.name as string,
  scopes: (typeof r.scopes === 'string' ? JSON.parse(r.scopes) : r.scopes) as ResourceScopes,
  tokenFormat: r.token_format as ResourceRecord['tokenFormat'],
  introspectors: json(r.introspectors),
})

export class PgResources implements ResourceStore {
  constructor(private readonly ctx: PgContext) {}

  /** Heard by this instance's caches at once, by the others through the insert trigger (0026). */
  async insertResource(r: ResourceRecord, now: number): Promise<void> {
    await this.ctx.run(
      async (sql) =>
        void (await sql`INSERT INTO resources (uri, name, scopes, token_format, introspectors, created_at)
          VALUES (${r.uri}, ${r.name}, ${JSON.stringify(r.scopes)}::jsonb, ${r.tokenFormat}, ${JSON.stringify(r.introspectors)}::jsonb, ${now})`),
    )
    emitting(this.ctx, undefined, {})
  }

  findResource(uri: string): Promise<ResourceRecord | undefined> {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`SELECT * FROM resources WHERE uri = ${uri}`
      return row && toResource(row)
    })
  }

  listResources(): Promise<ResourceRecord[]> {
    return this.ctx.run(async (sql) => (await sql`SELECT * FROM resources ORDER BY created_at, uri`).map(toResource))
  }

  async updateResource(r: ResourceRecord): Promise<boolean> {
    const found = await this.ctx.run(
      async (sql) =>
        (
          await sql`UPDATE resources SET name = ${r.name}, scopes = ${JSON.stringify(r.scopes)}::jsonb, token_format = ${r.tokenFormat}, introspectors = ${JSON.stringify(r.introspectors)}::jsonb
            WHERE uri = ${r.uri}`
        ).count > 0,
    )
    return emitting(this.ctx, found, found ? {} : undefined)
  }

  /** Its consents, codes and tokens go first, in the order every grant write locks them. */
  async deleteResource(uri: string): Promise<boolean> {
    const found = await this.ctx.tx(async (tx) => {
      await deleteGrantsWhere(tx, 'resource', [uri])
      return (await tx`DELETE FROM resources WHERE uri = ${uri}`).count > 0
    })
    // Its grants and tokens went with it: the caches drop everything.
    return emitting(this.ctx, found, found ? {} : undefined)
  }
}
