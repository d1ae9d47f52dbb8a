import type { NewSiteCode, SiteCodeRecord, SiteRecord, SiteRule, SiteSessionRecord, SiteStore } from '../store'
import { emitting, json, n, toUser, type PgContext, type Row } from './context'

const toSite = (r: Row): SiteRecord => ({
  host: r.host as string,
  name: r.name as string,
  policy: r.policy as SiteRecord['policy'],
  allowedGroups: json(r.allowed_groups),
  jwt: r.jwt as boolean,
  // jsonb keeps object keys in its own order: back to the port's.
  rules: ((typeof r.rules === 'string' ? JSON.parse(r.rules) : r.rules) as SiteRule[]).map((x) => ({ paths: x.paths, methods: x.methods, networks: x.networks, clients: x.clients, policy: x.policy })),
})

export class PgSites implements SiteStore {
  constructor(private readonly ctx: PgContext) {}

  insertSite(s: SiteRecord, now: number): Promise<void> {
    return this.ctx
      .run(
        async (sql) =>
          void (await sql`INSERT INTO sites (host, name, policy, allowed_groups, jwt, rules, created_at)
          VALUES (${s.host}, ${s.name}, ${s.policy}, ${JSON.stringify(s.allowedGroups)}::text::jsonb, ${s.jwt}, ${JSON.stringify(s.rules)}::text::jsonb, ${now})`),
      )
      .then(() => void this.sitesChanged(true))
  }

  /** Forward-auth's cache here hears of a site written at once; other instances through the trigger (drizzle/pg/0021). */
  private sitesChanged(changed: boolean): boolean {
    return emitting(this.ctx, changed, changed ? { sites: true } : undefined)
  }

  findSites(hosts: readonly string[]): Promise<SiteRecord[]> {
    if (hosts.length === 0) return Promise.resolve([])
    return this.ctx.run(async (sql) => (await sql`SELECT host, name, policy, allowed_groups, jwt, rules FROM sites WHERE host IN ${sql(hosts as string[])}`).map(toSite))
  }

  listSites(): Promise<SiteRecord[]> {
    return this.ctx.run(async (sql) => (await sql`SELECT host, name, policy, allowed_groups, jwt, rules FROM sites ORDER BY created_at, host`).map(toSite))
  }

  replaceSite(s: SiteRecord): Promise<boolean> {
    return this.ctx
      .run(
        async (sql) =>
          (
            await sql`UPDATE sites SET name = ${s.name}, policy = ${s.policy}, allowed_groups = ${JSON.stringify(s.allowedGroups)}::text::jsonb, jwt = ${s.jwt},
            rules = ${JSON.stringify(s.rules)}::text::jsonb WHERE host = ${s.host}`
          ).count > 0,
      )
      .then((found) => this.sitesChanged(found))
  }

  /** One statement: two instances adding rules at once both land, in commit order. */
  addRule(host: string, rule: SiteRule): Promise<boolean> {
    return this.ctx.run(async (sql) => (await sql`UPDATE sites SET rules = rules || ${JSON.stringify([rule])}::text::jsonb WHERE host = ${host}`).count > 0).then((found) => this.sitesChanged(found))
  }

  deleteSite(host: string): Promise<boolean> {
    return this.ctx.tx(async (tx) => {
      if ((await tx`DELETE FROM sites WHERE host = ${host}`).count === 0) return false
      if (host.startsWith('*.')) await tx`DELETE FROM site_sessions WHERE host LIKE ${'%' + host.slice(1)}`
      else await tx`DELETE FROM site_sessions WHERE host = ${host}`
      return true
    }).then((found) => this.sitesChanged(found))
  }

  insertSiteCode(c: NewSiteCode): Promise<void> {
    return this.ctx.run(
      async (sql) =>
        void (await sql`INSERT INTO site_codes (code_hash, session_hash, host, return_to, state_hash, expires_at) VALUES (${c.codeHash}, ${c.sessionHash}, ${c.host}, ${c.returnTo}, ${c.stateHash}, ${c.expiresAt})`),
    )
  }

  /**
   * The code is deleted (so used once, whichever instance is first) and the site session inserted
   * in one transaction; the sign-in session's row is read FOR SHARE, so a sign-out racing it
   * either ends the new site session too (cascade) or is waited for and seen.
   */
  exchangeSiteCode(codeHash: string, accept: (code: SiteCodeRecord) => boolean, session: { idHash: string; expiresAt: number }, now: number): Promise<{ returnTo: string; expiresAt: number } | undefined> {
    return this.ctx.tx(async (tx) => {
      const [code] = await tx`DELETE FROM site_codes WHERE code_hash = ${codeHash} RETURNING session_hash, host, return_to, state_hash, expires_at`
      if (!code || n(code.expires_at) <= now || !accept({ host: code.host as string, returnTo: code.return_to as string, stateHash: code.state_hash as string })) return undefined
      const [made] = await tx`WITH s AS (SELECT s.id_hash, s.expires_at FROM sessions s JOIN users u ON u.id = s.user_id
            WHERE s.id_hash = ${code.session_hash} AND NOT s.pending AND s.expires_at > ${now} AND u.disabled_at IS NULL FOR SHARE OF s)
        INSERT INTO site_sessions (id_hash, session_hash, host, expires_at)
        SELECT ${session.idHash}, id_hash, ${code.host as string}, LEAST(${session.expiresAt}::int8, expires_at) FROM s RETURNING expires_at`
      return made ? { returnTo: code.return_to as string, expiresAt: n(made.expires_at) } : undefined
    })
  }

  findSiteSession(idHash: string, host: string, now: number, idleSince: number): Promise<SiteSessionRecord | undefined> {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`SELECT u.id, u.email, u.full_name, u.avatar_url, u.email_verified, s.auth_time, s.amr, ss.expires_at, s.id_hash AS session_hash, s.last_active_at,
          COALESCE((SELECT jsonb_agg(group_name ORDER BY group_name COLLATE "C") FROM group_members WHERE user_id = u.id), '[]'::jsonb) AS groups
        FROM site_sessions ss JOIN sessions s ON s.id_hash = ss.session_hash JOIN users u ON u.id = s.user_id
        WHERE ss.id_hash = ${idHash} AND ss.host = ${host} AND ss.expires_at > ${now} AND s.expires_at > ${now} AND s.last_active_at > ${idleSince} AND NOT s.pending AND u.disabled_at IS NULL`
      return row && { user: toUser(row), groups: json(row.groups), amr: (row.amr as string).split(' '), authTime: n(row.auth_time), expiresAt: n(row.expires_at), sessionHash: row.session_hash as string, lastActiveAt: n(row.last_active_at) }
    })
  }

  endSignInOf(idHash: string, host: string): Promise<boolean> {
    return this.ctx
      .run(async (sql) => await sql`DELETE FROM sessions WHERE id_hash = (SELECT session_hash FROM site_sessions WHERE id_hash = ${idHash} AND host = ${host}) RETURNING user_id`)
      .then((rows: Row[]) => emitting(this.ctx, rows.length > 0, rows.length ? { sessions: rows.map((r) => r.user_id as string) } : undefined))
  }
}
