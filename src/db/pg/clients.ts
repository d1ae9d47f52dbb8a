import type { ClientRecord, ClientStore } from '../store'
import { json, type PgContext, type Row } from './context'

const toClient = (r: Row): ClientRecord => ({
  id: r.id as string,
  name: r.name as string,
  secretHash: r.secret_hash as string | null,
  redirectUris: json(r.redirect_uris),
  postLogoutRedirectUris: json(r.post_logout_redirect_uris),
  skipConsent: r.skip_consent as boolean,
  requireMfa: r.require_mfa as boolean,
})

export class PgClients implements ClientStore {
  constructor(private readonly ctx: PgContext) {}

  insertClient(client: ClientRecord, now: number): Promise<void> {
    return this.ctx.run(
      async (sql) =>
        void (await sql`INSERT INTO clients (id, name, secret_hash, redirect_uris, post_logout_redirect_uris, skip_consent, require_mfa, created_at)
          VALUES (${client.id}, ${client.name}, ${client.secretHash}, ${JSON.stringify(client.redirectUris)}::jsonb,
            ${JSON.stringify(client.postLogoutRedirectUris)}::jsonb, ${client.skipConsent}, ${client.requireMfa}, ${now})`),
    )
  }

  findClient(id: string): Promise<ClientRecord | undefined> {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`SELECT id, name, secret_hash, redirect_uris, post_logout_redirect_uris, skip_consent, require_mfa FROM clients WHERE id = ${id}`
      return row && toClient(row)
    })
  }

  listClients(): Promise<ClientRecord[]> {
    return this.ctx.run(async (sql) => (await sql`SELECT id, name, secret_hash, redirect_uris, post_logout_redirect_uris, skip_consent, require_mfa FROM clients ORDER BY created_at, id`).map(toClient))
  }

  /**
   * The client's grants go first, in the order every grant write locks them (consents, codes,
   * families, tokens), and the client row last: an exchange or a refresh that holds a code or a
   * family while its insert checks the client row is waited for, never deadlocked.
   */
  deleteClient(id: string): Promise<boolean> {
    return this.ctx.tx(async (tx) => {
      await tx`DELETE FROM consents WHERE client_id = ${id}`
      await tx`DELETE FROM auth_codes WHERE client_id = ${id}`
      await tx`DELETE FROM refresh_families WHERE client_id = ${id}`
      await tx`DELETE FROM refresh_tokens WHERE client_id = ${id}`
      await tx`DELETE FROM access_tokens WHERE client_id = ${id}`
      return (await tx`DELETE FROM clients WHERE id = ${id}`).count > 0
    })
  }

  setRequireMfa(id: string, requireMfa: boolean): Promise<boolean> {
    return this.ctx.run(async (sql) => (await sql`UPDATE clients SET require_mfa = ${requireMfa} WHERE id = ${id}`).count > 0)
  }

  setClientSecret(id: string, secretHash: string): Promise<boolean> {
    return this.ctx.run(async (sql) => (await sql`UPDATE clients SET secret_hash = ${secretHash} WHERE id = ${id} AND secret_hash IS NOT NULL`).count > 0)
  }
}
