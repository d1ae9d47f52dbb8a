import type { ChangeFeed, ClientKind, ClientLogo, ClientRecord, ClientStore, IdTokenAlg, YourApp } from '../store'
import { PgClientCache } from './client-cache'
import { emitting, json, n, type PgContext, type Row } from './context'
import { deleteGrantsWhere } from './grants'

const toClient = (r: Row): ClientRecord => ({
  id: r.id as string,
  name: r.name as string,
  secretHash: r.secret_hash as string | null,
  redirectUris: json(r.redirect_uris),
  postLogoutRedirectUris: json(r.post_logout_redirect_uris),
  skipConsent: r.skip_consent as boolean,
  requireMfa: r.require_mfa as boolean,
  kind: r.kind as ClientKind,
  metadataExpiresAt: r.metadata_expires_at === null ? null : n(r.metadata_expires_at),
  registrationTokenHash: r.registration_token_hash as string | null,
  idTokenAlg: r.id_token_alg as IdTokenAlg,
  introspects: json(r.introspects),
  backchannelLogoutUri: (r.backchannel_logout_uri ?? null) as string | null,
  backchannelLogoutSessionRequired: r.backchannel_logout_session_required as boolean,
  grantTypes: json(r.grant_types),
  allowedScopes: json(r.allowed_scopes),
  requirePar: r.require_par as boolean,
  authMethod: r.auth_method === 'private_key_jwt' ? 'private_key_jwt' : null,
  jwks: r.jwks as string | null,
  jwksUri: r.jwks_uri as string | null,
  launchUrl: r.launch_url as string | null,
  logoEtag: r.logo_etag as string | null,
})

const COLUMNS = 'id, name, secret_hash, redirect_uris, post_logout_redirect_uris, skip_consent, require_mfa, kind, metadata_expires_at, registration_token_hash, id_token_alg, introspects, backchannel_logout_uri, backchannel_logout_session_required, grant_types, allowed_scopes, require_par, auth_method, jwks, jwks_uri, launch_url, logo_etag'

export class PgClients implements ClientStore {
  // Made on first use: the store's change feed is made after this.
  private cached?: PgClientCache

  constructor(
    private readonly ctx: PgContext,
    private readonly changes: () => ChangeFeed,
  ) {}

  private get cache(): PgClientCache {
    return (this.cached ??= new PgClientCache(this.changes()))
  }

  /** `changed` (a row count or a found flag) after its write committed: this instance's cache drops the client at once (the others through NOTIFY, drizzle/pg/0026). */
  private wrote<T extends boolean | number>(id: string, changed: T): T {
    return emitting(this.ctx, changed, changed ? { clients: [id] } : undefined)
  }

  /** A new id was never cached (nothing absent is kept): no change to tell but the trigger's. */
  insertClient(client: ClientRecord, now: number): Promise<void> {
    return this.ctx.run(
      async (sql) =>
        void (await sql`INSERT INTO clients (id, name, secret_hash, redirect_uris, post_logout_redirect_uris, skip_consent, require_mfa, kind, metadata_expires_at, registration_token_hash, id_token_alg, introspects, backchannel_logout_uri, backchannel_logout_session_required, grant_types, allowed_scopes, require_par, auth_method, jwks, jwks_uri, launch_url, created_at)
          VALUES (${client.id}, ${client.name}, ${client.secretHash}, ${JSON.stringify(client.redirectUris)}::jsonb,
            ${JSON.stringify(client.postLogoutRedirectUris)}::jsonb, ${client.skipConsent}, ${client.requireMfa}, ${client.kind}, ${client.metadataExpiresAt}, ${client.registrationTokenHash}, ${client.idTokenAlg},
            ${JSON.stringify(client.introspects)}::jsonb, ${client.backchannelLogoutUri ?? null}, ${client.backchannelLogoutSessionRequired ?? false}, ${JSON.stringify(client.grantTypes)}::jsonb, ${JSON.stringify(client.allowedScopes)}::jsonb, ${client.requirePar}, ${client.authMethod}, ${client.jwks}, ${client.jwksUri}, ${client.launchUrl ?? null}, ${now})`),
    )
  }

  setBackchannelLogout(id: string, uri: string | null, sessionRequired: boolean): Promise<boolean> {
    return this.ctx.run(
      async (sql) => this.wrote(id, (await sql`UPDATE clients SET backchannel_logout_uri = ${uri}, backchannel_logout_session_required = ${sessionRequired} WHERE id = ${id}`).count > 0),
    )
  }

  /** Every token, introspection, PAR, device and authorize request reads its client here: from the cache while it may be trusted (PgClientCache). */
  findClient(id: string): Promise<ClientRecord | undefined> {
    const cache = this.ctx.inTransaction ? undefined : this.cache
    const hit = cache?.get(id)
    if (hit) return Promise.resolve(hit)
    const generation = cache?.read()
    return this.ctx.run(async (sql) => {
      const [row] = await sql.unsafe(`SELECT ${COLUMNS} FROM clients WHERE id = $1`, [id])
      if (!row) return undefined
      const record = toClient(row)
      if (cache && !this.ctx.inTransaction) cache.keep(record, generation)
      return record
    })
  }

  peekClient(id: string): ClientRecord | undefined {
    return this.ctx.inTransaction ? undefined : this.cache.get(id)
  }

  lockClient(id: string): Promise<boolean> {
    return this.ctx.run(async (sql) => (await sql`SELECT 1 FROM clients WHERE id = ${id} FOR UPDATE`).length > 0)
  }

  listClients(): Promise<ClientRecord[]> {
    return this.ctx.run(async (sql) => (await sql.unsafe(`SELECT ${COLUMNS} FROM clients ORDER BY created_at, id`)).map(toClient))
  }

  /**
   * The client's grants go first, in the order every grant write locks them (consents, codes,
   * families, tokens), and the client row last: an exchange or a refresh that holds a code or a
   * family while its insert checks the client row is waited for, never deadlocked.
   */
  async deleteClient(id: string): Promise<boolean> {
    const found = await this.ctx.tx(async (tx) => {
      await deleteGrantsWhere(tx, 'client_id', [id])
      const deleted = (await tx`DELETE FROM clients WHERE id = ${id}`).count > 0
      // A later client of this id gains no one's right. (The lists are stored as JSON text in jsonb, as every list here.)
      if (deleted)
        for (const r of await tx`SELECT id, introspects FROM clients WHERE position(${JSON.stringify(id)} in introspects #>> '{}') > 0 FOR UPDATE`)
          await tx`UPDATE clients SET introspects = ${JSON.stringify(json(r.introspects).filter((x) => x !== id))}::jsonb WHERE id = ${r.id}`
      return deleted
    })
    // Its grants, tokens and settings went with it: the caches drop everything.
    return emitting(this.ctx, found, found ? {} : undefined)
  }

  setIntrospects(id: string, introspects: readonly string[]): Promise<boolean> {
    return this.ctx.run(async (sql) => this.wrote(id, (await sql`UPDATE clients SET introspects = ${JSON.stringify(introspects)}::jsonb WHERE id = ${id}`).count > 0))
  }

  setRequireMfa(id: string, requireMfa: boolean): Promise<boolean> {
    return this.ctx.run(async (sql) => this.wrote(id, (await sql`UPDATE clients SET require_mfa = ${requireMfa} WHERE id = ${id}`).count > 0))
  }

  saveMetadataClient(client: ClientRecord, now: number): Promise<void> {
    const uris = JSON.stringify(client.redirectUris)
    return this.ctx.run(
      async (sql) =>
        void this.wrote(client.id, (await sql`INSERT INTO clients (id, name, secret_hash, redirect_uris, post_logout_redirect_uris, skip_consent, require_mfa, kind, metadata_expires_at, created_at)
          VALUES (${client.id}, ${client.name}, NULL, ${uris}::jsonb, '[]'::jsonb, false, false, 'metadata', ${client.metadataExpiresAt}, ${now})
          ON CONFLICT (id) DO UPDATE SET name = excluded.name, redirect_uris = excluded.redirect_uris, metadata_expires_at = excluded.metadata_expires_at
          WHERE clients.kind = 'metadata'`).count),
    )
  }

  /** Each client's grants go before its row, as deleteClient does (one lock order). */
  async deleteUnusedClients(before: number, now: number): Promise<number> {
    const removed = await this.ctx.tx(async (tx) => {
      const ids: string[] = (
        await tx.unsafe(`SELECT id FROM clients c WHERE kind IN ('dynamic', 'metadata') AND NOT EXISTS (SELECT 1 FROM refresh_families f WHERE f.client_id = c.id AND f.used_at >= $1)
              AND (created_at < $1 OR (kind = 'metadata' AND metadata_expires_at < $2
                AND NOT EXISTS (SELECT 1 FROM refresh_families f WHERE f.client_id = c.id)
                AND NOT EXISTS (SELECT 1 FROM consents k WHERE k.client_id = c.id)
                AND NOT EXISTS (SELECT 1 FROM auth_codes a WHERE a.client_id = c.id))) FOR UPDATE`, [before, now])
      ).map((r: Row) => r.id as string)
      if (ids.length === 0) return 0
      await deleteGrantsWhere(tx, 'client_id', ids)
      return (await tx.unsafe(`DELETE FROM clients WHERE id IN (${ids.map((_, i) => `$${i + 1}`).join(', ')})`, ids)).count
    })
    return emitting(this.ctx, removed, removed > 0 ? {} : undefined)
  }

  insertRegistrationToken(tokenHash: string, now: number, expiresAt: number): Promise<void> {
    return this.ctx.run(async (sql) => void (await sql`INSERT INTO registration_tokens (token_hash, created_at, expires_at) VALUES (${tokenHash}, ${now}, ${expiresAt})`))
  }

  registrationTokenValid(tokenHash: string, now: number): Promise<boolean> {
    return this.ctx.run(async (sql) => (await sql`SELECT 1 FROM registration_tokens WHERE token_hash = ${tokenHash} AND expires_at > ${now}`).length > 0)
  }

  updateClient(id: string, f: Pick<ClientRecord, 'name' | 'redirectUris' | 'postLogoutRedirectUris' | 'skipConsent' | 'requireMfa' | 'idTokenAlg' | 'grantTypes' | 'allowedScopes' | 'requirePar' | 'authMethod' | 'jwks' | 'jwksUri'>): Promise<boolean> {
    return this.ctx.run(
      async (sql) =>
        this.wrote(id, (
          await sql`UPDATE clients SET name = ${f.name}, redirect_uris = ${JSON.stringify(f.redirectUris)}::jsonb, post_logout_redirect_uris = ${JSON.stringify(f.postLogoutRedirectUris)}::jsonb,
            skip_consent = ${f.skipConsent}, require_mfa = ${f.requireMfa}, id_token_alg = ${f.idTokenAlg}, grant_types = ${JSON.stringify(f.grantTypes)}::jsonb,
            allowed_scopes = ${JSON.stringify(f.allowedScopes)}::jsonb, require_par = ${f.requirePar}, auth_method = ${f.authMethod}, jwks = ${f.jwks}, jwks_uri = ${f.jwksUri} WHERE id = ${id}`
        ).count > 0),
    )
  }

  /** INSERT … ON CONFLICT DO NOTHING: of two instances given one assertion at once, one inserts the row. */
  useAssertionJti(clientId: string, jti: string, expiresAt: number): Promise<boolean> {
    return this.ctx.run(async (sql) => (await sql`INSERT INTO used_assertions (client_id, jti, expires_at) VALUES (${clientId}, ${jti}, ${expiresAt}) ON CONFLICT DO NOTHING`).count > 0)
  }

  setClientSecret(id: string, secretHash: string): Promise<boolean> {
    return this.ctx.run(async (sql) => this.wrote(id, (await sql`UPDATE clients SET secret_hash = ${secretHash} WHERE id = ${id} AND secret_hash IS NOT NULL`).count > 0))
  }

  setLaunchUrl(id: string, url: string | null): Promise<boolean> {
    return this.ctx.run(async (sql) => this.wrote(id, (await sql`UPDATE clients SET launch_url = ${url} WHERE id = ${id}`).count > 0))
  }

  /** One transaction: the client's version and the bytes change together (or neither, for an unknown client). */
  async setClientLogo(id: string, logo: ClientLogo | null, now: number): Promise<boolean> {
    return this.wrote(id, await this.ctx.tx(async (sql) => {
        if ((await sql`UPDATE clients SET logo_etag = ${logo?.etag ?? null} WHERE id = ${id}`).count === 0) return false
        if (!logo) await sql`DELETE FROM client_logos WHERE client_id = ${id}`
        else
          await sql`INSERT INTO client_logos (client_id, content_type, bytes, etag, updated_at) VALUES (${id}, ${logo.contentType}, ${Buffer.from(logo.bytes)}, ${logo.etag}, ${now})
            ON CONFLICT (client_id) DO UPDATE SET content_type = excluded.content_type, bytes = excluded.bytes, etag = excluded.etag, updated_at = excluded.updated_at`
        return true
    }))
  }

  findClientLogo(id: string): Promise<ClientLogo | undefined> {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`SELECT content_type, bytes, etag FROM client_logos WHERE client_id = ${id}`
      return row && { contentType: row.content_type as string, bytes: new Uint8Array(row.bytes as Uint8Array), etag: row.etag as string }
    })
  }

  yourApps(userId: string): Promise<YourApp[]> {
    return this.ctx.run(async (sql) => {
      const rows = await sql`SELECT * FROM (
        SELECT c.id, c.name, c.launch_url, c.logo_etag,
          c.launch_url IS NOT NULL AND (NOT EXISTS (SELECT 1 FROM client_groups g WHERE g.client_id = c.id)
            OR EXISTS (SELECT 1 FROM client_groups g JOIN group_members m ON m.group_name = g.group_name WHERE g.client_id = c.id AND m.user_id = ${userId})) AS may_launch,
          EXISTS (SELECT 1 FROM consents k WHERE k.client_id = c.id AND k.user_id = ${userId}) AS authorized
        FROM clients c) AS a
      WHERE may_launch OR authorized ORDER BY name COLLATE "C", id`
      return rows.map((r: Row) => ({ clientId: r.id as string, name: r.name as string, logoEtag: r.logo_etag as string | null, launchUrl: r.may_launch ? (r.launch_url as string) : null, authorized: r.authorized as boolean }))
    })
  }
}
