import { and, eq, gt, sql } from 'drizzle-orm'
import type { ClientKind, ClientLogo, ClientRecord, ClientStore, IdTokenAlg, YourApp } from '../store'
import { changes } from './client'
import { unique, type SqliteContext } from './context'
import { ClientCache } from './client-cache'
import { prepared } from './prepared'
import { clientLogos, clients, registrationTokens } from './schema'

const p = (name: string) => sql.placeholder(name)
const toClient = (row: typeof clients.$inferSelect): ClientRecord => ({
  id: row.id,
  name: row.name,
  secretHash: row.secretHash,
  redirectUris: row.redirectUris,
  postLogoutRedirectUris: row.postLogoutRedirectUris,
  skipConsent: row.skipConsent,
  requireMfa: row.requireMfa,
  kind: row.kind as ClientKind,
  metadataExpiresAt: row.metadataExpiresAt,
  registrationTokenHash: row.registrationTokenHash,
  idTokenAlg: row.idTokenAlg as IdTokenAlg,
  introspects: row.introspects,
  backchannelLogoutUri: row.backchannelLogoutUri,
  backchannelLogoutSessionRequired: row.backchannelLogoutSessionRequired,
  grantTypes: row.grantTypes,
  allowedScopes: row.allowedScopes,
  requirePar: row.requirePar,
  authMethod: row.authMethod === 'private_key_jwt' ? 'private_key_jwt' : null,
  jwks: row.jwks,
  jwksUri: row.jwksUri,
  launchUrl: row.launchUrl,
  logoEtag: row.logoEtag,
})

const RAW_COLUMNS =
  'id, name, secret_hash, redirect_uris, post_logout_redirect_uris, skip_consent, require_mfa, kind, metadata_expires_at, registration_token_hash, id_token_alg, introspects, backchannel_logout_uri, backchannel_logout_session_required, grant_types, allowed_scopes, require_par, auth_method, jwks, jwks_uri, launch_url, logo_etag'
interface RawClient {
  id: string
  name: string
  secret_hash: string | null
  redirect_uris: string
  post_logout_redirect_uris: string
  skip_consent: number
  require_mfa: number
  kind: string
  metadata_expires_at: number | null
  registration_token_hash: string | null
  id_token_alg: string
  introspects: string
  backchannel_logout_uri: string | null
  backchannel_logout_session_required: number
  grant_types: string
  allowed_scopes: string
  require_par: number
  auth_method: string | null
  jwks: string | null
  jwks_uri: string | null
  launch_url: string | null
  logo_etag: string | null
}
const fromRaw = (r: RawClient): ClientRecord => ({
  id: r.id,
  name: r.name,
  secretHash: r.secret_hash,
  redirectUris: JSON.parse(r.redirect_uris),
  postLogoutRedirectUris: JSON.parse(r.post_logout_redirect_uris),
  skipConsent: r.skip_consent === 1,
  requireMfa: r.require_mfa === 1,
  kind: r.kind as ClientKind,
  metadataExpiresAt: r.metadata_expires_at,
  registrationTokenHash: r.registration_token_hash,
  idTokenAlg: r.id_token_alg as IdTokenAlg,
  introspects: JSON.parse(r.introspects),
  backchannelLogoutUri: r.backchannel_logout_uri,
  backchannelLogoutSessionRequired: r.backchannel_logout_session_required === 1,
  grantTypes: JSON.parse(r.grant_types),
  allowedScopes: JSON.parse(r.allowed_scopes),
  requirePar: r.require_par === 1,
  authMethod: r.auth_method === 'private_key_jwt' ? 'private_key_jwt' : null,
  jwks: r.jwks,
  jwksUri: r.jwks_uri,
  launchUrl: r.launch_url,
  logoEtag: r.logo_etag,
})

export class SqliteClients implements ClientStore {
  // Made on first use: the store is still being built when this is.
  private cached?: ClientCache

  constructor(private readonly ctx: SqliteContext) {}

  private get cache(): ClientCache {
    return (this.cached ??= new ClientCache(this.ctx.db.sqlite, this.ctx))
  }

  insertClient(client: ClientRecord, now: number): Promise<void> {
    const { db } = this.ctx
    return this.ctx.write(() => void unique(() => db.orm.insert(clients).values({ ...client, createdAt: now }).run()))
  }

  /**
   * Every token request authenticates its client here: straight through bun:sqlite (a cached
   * statement, the JSON columns parsed by hand), as findToken is — Drizzle's select and row
   * mapping took about half of a device poll's time (bench, issue 38).
   */
  async findClient(id: string): Promise<ClientRecord | undefined> {
    const cached = this.cache.get(id, this.ctx.changes)
    if (cached) return cached
    const row = this.ctx.db.sqlite.query<RawClient, [string]>(`SELECT ${RAW_COLUMNS} FROM clients WHERE id = ?`).get(id)
    if (!row) return undefined
    const record = fromRaw(row)
    this.cache.keep(record)
    return record
  }

  peekClient(id: string): ClientRecord | undefined {
    return this.cache.get(id, this.ctx.changes)
  }

  async lockClient(id: string): Promise<boolean> {
    return this.ctx.db.sqlite.query('SELECT 1 FROM clients WHERE id = ?').get(id) !== null
  }

  async listClients(): Promise<ClientRecord[]> {
    return this.ctx.db.orm.select().from(clients).orderBy(clients.createdAt, clients.id).all().map(toClient)
  }

  deleteClient(id: string): Promise<boolean> {
    const { db } = this.ctx
    const unname = db.sqlite.prepare(
      `UPDATE clients SET introspects = (SELECT json_group_array(value) FROM json_each(clients.introspects) WHERE value <> ?1)
        WHERE EXISTS (SELECT 1 FROM json_each(clients.introspects) WHERE value = ?1)`,
    )
    return this.ctx.write(() => {
      const deleted = this.removed(changes(db.orm.delete(clients).where(eq(clients.id, id)).run())) > 0
      if (deleted) unname.run(id)
      return deleted
    })
  }

  /** Clients deleted take their grants, tokens and settings with them (cascades): the caches drop everything. */
  private removed(count: number): number {
    if (count > 0) this.ctx.emit({})
    return count
  }

  setBackchannelLogout(id: string, uri: string | null, sessionRequired: boolean): Promise<boolean> {
    const { db } = this.ctx
    return this.ctx.write(
      () => changes(db.orm.update(clients).set({ backchannelLogoutUri: uri, backchannelLogoutSessionRequired: sessionRequired }).where(eq(clients.id, id)).run()) > 0,
    )
  }

  setIntrospects(id: string, introspects: readonly string[]): Promise<boolean> {
    const { db } = this.ctx
    return this.ctx.write(() => changes(db.orm.update(clients).set({ introspects: [...introspects] }).where(eq(clients.id, id)).run()) > 0)
  }

  setRequireMfa(id: string, requireMfa: boolean): Promise<boolean> {
    const { db } = this.ctx
    return this.ctx.write(() => changes(db.orm.update(clients).set({ requireMfa }).where(eq(clients.id, id)).run()) > 0)
  }

  saveMetadataClient(client: ClientRecord, now: number): Promise<void> {
    const { name, redirectUris, metadataExpiresAt } = client
    return this.ctx.write(
      () =>
        void this.ctx.db.orm
          .insert(clients)
          .values({ ...client, createdAt: now })
          .onConflictDoUpdate({ target: clients.id, set: { name, redirectUris, metadataExpiresAt }, setWhere: eq(clients.kind, 'metadata') })
          .run(),
    )
  }

  deleteUnusedClients(before: number, now: number): Promise<number> {
    const { db } = this.ctx
    const unused = db.sqlite.prepare(
      `DELETE FROM clients AS c WHERE kind IN ('dynamic', 'metadata') AND NOT EXISTS (SELECT 1 FROM refresh_families f WHERE f.client_id = c.id AND f.used_at >= ?1)
              AND (created_at < ?1 OR (kind = 'metadata' AND metadata_expires_at < ?2
                AND NOT EXISTS (SELECT 1 FROM refresh_families f WHERE f.client_id = c.id)
                AND NOT EXISTS (SELECT 1 FROM consents k WHERE k.client_id = c.id)
                AND NOT EXISTS (SELECT 1 FROM auth_codes a WHERE a.client_id = c.id)))`,
    )
    return this.ctx.write(() => this.removed(changes(unused.run(before, now))))
  }

  insertRegistrationToken(tokenHash: string, now: number, expiresAt: number): Promise<void> {
    return this.ctx.write(() => void this.ctx.db.orm.insert(registrationTokens).values({ tokenHash, createdAt: now, expiresAt }).run())
  }

  async registrationTokenValid(tokenHash: string, now: number): Promise<boolean> {
    const { db } = this.ctx
    return !!db.orm.select({ at: registrationTokens.createdAt }).from(registrationTokens).where(and(eq(registrationTokens.tokenHash, tokenHash), gt(registrationTokens.expiresAt, now))).get()
  }

  updateClient(id: string, fields: Pick<ClientRecord, 'name' | 'redirectUris' | 'postLogoutRedirectUris' | 'skipConsent' | 'requireMfa' | 'idTokenAlg' | 'grantTypes' | 'allowedScopes' | 'requirePar' | 'authMethod' | 'jwks' | 'jwksUri'>): Promise<boolean> {
    const { db } = this.ctx
    return this.ctx.write(() => changes(db.orm.update(clients).set(fields).where(eq(clients.id, id)).run()) > 0)
  }

  useAssertionJti(clientId: string, jti: string, expiresAt: number): Promise<boolean> {
    const { sqlite } = this.ctx.db
    return this.ctx.write(() => sqlite.prepare('INSERT INTO used_assertions (client_id, jti, expires_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING').run(clientId, jti, expiresAt).changes > 0)
  }

  setClientSecret(id: string, secretHash: string): Promise<boolean> {
    const { db } = this.ctx
    return this.ctx.write(
      () => changes(db.orm.update(clients).set({ secretHash }).where(and(eq(clients.id, id), sql`${clients.secretHash} IS NOT NULL`)).run()) > 0,
    )
  }

  setLaunchUrl(id: string, url: string | null): Promise<boolean> {
    const { db } = this.ctx
    return this.ctx.write(() => changes(db.orm.update(clients).set({ launchUrl: url }).where(eq(clients.id, id)).run()) > 0)
  }

  setClientLogo(id: string, logo: ClientLogo | null, now: number): Promise<boolean> {
    const { db } = this.ctx
    return this.ctx.write(() => {
      if (changes(db.orm.update(clients).set({ logoEtag: logo?.etag ?? null }).where(eq(clients.id, id)).run()) === 0) return false
      if (!logo) db.orm.delete(clientLogos).where(eq(clientLogos.clientId, id)).run()
      else {
        const row = { contentType: logo.contentType, bytes: Buffer.from(logo.bytes), etag: logo.etag, updatedAt: now }
        db.orm.insert(clientLogos).values({ clientId: id, ...row }).onConflictDoUpdate({ target: clientLogos.clientId, set: row }).run()
      }
      return true
    })
  }

  async findClientLogo(id: string): Promise<ClientLogo | undefined> {
    const row = this.ctx.db.orm.select().from(clientLogos).where(eq(clientLogos.clientId, id)).get()
    return row && { contentType: row.contentType, bytes: new Uint8Array(row.bytes), etag: row.etag }
  }

  async yourApps(userId: string): Promise<YourApp[]> {
    const rows = this.ctx.db.sqlite.query(YOUR_APPS).all(userId) as Array<{ id: string; name: string; launch_url: string | null; logo_etag: string | null; may_launch: number; authorized: number }>
    return rows.map((r) => ({ clientId: r.id, name: r.name, logoEtag: r.logo_etag, launchUrl: r.may_launch ? r.launch_url : null, authorized: r.authorized === 1 }))
  }
}

/** SPEC "Brand and language": apps with a launch URL the user may use (no allowed groups, or one of theirs), and the apps they authorized. */
const YOUR_APPS = `SELECT * FROM (
  SELECT c.id, c.name, c.launch_url, c.logo_etag,
    c.launch_url IS NOT NULL AND (NOT EXISTS (SELECT 1 FROM client_groups g WHERE g.client_id = c.id)
      OR EXISTS (SELECT 1 FROM client_groups g JOIN group_members m ON m.group_name = g.group_name WHERE g.client_id = c.id AND m.user_id = ?1)) AS may_launch,
    EXISTS (SELECT 1 FROM consents k WHERE k.client_id = c.id AND k.user_id = ?1) AS authorized
  FROM clients c) AS a
WHERE may_launch OR authorized ORDER BY name, id`
