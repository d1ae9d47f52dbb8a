import type { NewSiteCode, SiteCodeRecord, SiteRecord, SiteRule, SiteSessionRecord, SiteStore, UserRecord } from '../store'
import { unique, type SqliteContext } from './context'

type SiteRow = { host: string; name: string; policy: string; allowed_groups: string; jwt: number; rules: string }

const toSite = (r: SiteRow): SiteRecord => ({
  host: r.host,
  name: r.name,
  policy: r.policy as SiteRecord['policy'],
  allowedGroups: JSON.parse(r.allowed_groups) as string[],
  jwt: r.jwt === 1,
  rules: JSON.parse(r.rules) as SiteRule[],
})

const COLUMNS = 'host, name, policy, allowed_groups, jwt, rules'

export class SqliteSites implements SiteStore {
  constructor(private readonly ctx: SqliteContext) {}

  private get sqlite() {
    return this.ctx.db.sqlite
  }

  insertSite(s: SiteRecord, now: number): Promise<void> {
    return this.ctx.write(() =>
      unique(() => {
        this.sqlite
          .prepare('INSERT INTO sites (host, name, policy, allowed_groups, jwt, rules, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
          .run(s.host, s.name, s.policy, JSON.stringify(s.allowedGroups), s.jwt ? 1 : 0, JSON.stringify(s.rules), now)
        this.sitesChanged(true)
      }),
    )
  }

  /** Forward-auth's cache of sites (and their sessions) hears of a site written (src/authz/cache.ts). */
  private sitesChanged(changed: boolean): boolean {
    if (changed) this.ctx.emit({ sites: true })
    return changed
  }

  async findSites(hosts: readonly string[]): Promise<SiteRecord[]> {
    if (hosts.length === 0) return []
    const rows = this.sqlite.query<SiteRow, string[]>(`SELECT ${COLUMNS} FROM sites WHERE host IN (${hosts.map(() => '?').join(', ')})`).all(...hosts)
    return rows.map(toSite)
  }

  async listSites(): Promise<SiteRecord[]> {
    return this.sqlite.query<SiteRow, []>(`SELECT ${COLUMNS} FROM sites ORDER BY created_at, host`).all().map(toSite)
  }

  replaceSite(s: SiteRecord): Promise<boolean> {
    return this.ctx.write(() =>
      this.sitesChanged(
        this.sqlite
          .prepare('UPDATE sites SET name = ?, policy = ?, allowed_groups = ?, jwt = ?, rules = ? WHERE host = ?')
          .run(s.name, s.policy, JSON.stringify(s.allowedGroups), s.jwt ? 1 : 0, JSON.stringify(s.rules), s.host).changes > 0,
      ),
    )
  }

  addRule(host: string, rule: SiteRule): Promise<boolean> {
    return this.ctx.write(() => this.sitesChanged(this.sqlite.prepare("UPDATE sites SET rules = json_insert(rules, '$[#]', json(?)) WHERE host = ?").run(JSON.stringify(rule), host).changes > 0))
  }

  deleteSite(host: string): Promise<boolean> {
    return this.ctx.write(() => {
      const gone = this.sqlite.prepare('DELETE FROM sites WHERE host = ?').run(host).changes > 0
      if (gone) deleteSessionsOfSite(host, (sql, arg) => this.sqlite.prepare(sql).run(arg))
      return this.sitesChanged(gone)
    })
  }

  insertSiteCode(c: NewSiteCode): Promise<void> {
    return this.ctx.write(() => {
      this.sqlite.prepare('INSERT INTO site_codes (code_hash, session_hash, host, return_to, state_hash, expires_at) VALUES (?, ?, ?, ?, ?, ?)').run(c.codeHash, c.sessionHash, c.host, c.returnTo, c.stateHash, c.expiresAt)
    })
  }

  exchangeSiteCode(codeHash: string, accept: (code: SiteCodeRecord) => boolean, session: { idHash: string; expiresAt: number }, now: number): Promise<{ returnTo: string; expiresAt: number } | undefined> {
    return this.ctx.write(() => {
      const code = this.sqlite
        .query<{ session_hash: string; host: string; return_to: string; state_hash: string; expires_at: number }, [string]>('DELETE FROM site_codes WHERE code_hash = ? RETURNING session_hash, host, return_to, state_hash, expires_at')
        .get(codeHash)
      if (!code || code.expires_at <= now || !accept({ host: code.host, returnTo: code.return_to, stateHash: code.state_hash })) return undefined
      const made = this.sqlite
        .query<{ expires_at: number }, [string, string, number, string, number]>(
          `INSERT INTO site_sessions (id_hash, session_hash, host, expires_at)
            SELECT ?, s.id_hash, ?, min(?, s.expires_at) FROM sessions s JOIN users u ON u.id = s.user_id
            WHERE s.id_hash = ? AND s.pending = 0 AND s.expires_at > ? AND u.disabled_at IS NULL RETURNING expires_at`,
        )
        .get(session.idHash, code.host, session.expiresAt, code.session_hash, now)
      return made ? { returnTo: code.return_to, expiresAt: made.expires_at } : undefined
    })
  }

  async findSiteSession(
    idHash: string,
    host: string,
    now: number,
    idleSince: number,
    known?: (userId: string) => { user: UserRecord; groups: string[] } | undefined,
  ): Promise<SiteSessionRecord | undefined> {
    const row = this.sqlite
      .query<Record<string, unknown>, [string, string, number, number]>(
        `SELECT u.id, s.auth_time, s.amr, ss.expires_at, s.id_hash AS session_hash, s.last_active_at
          FROM site_sessions ss JOIN sessions s ON s.id_hash = ss.session_hash JOIN users u ON u.id = s.user_id
          WHERE ss.id_hash = ? AND ss.host = ? AND ss.expires_at > ?3 AND s.expires_at > ?3 AND s.last_active_at > ?4 AND s.pending = 0 AND u.disabled_at IS NULL`,
      )
      .get(idHash, host, now, idleSince)
    if (!row) return undefined
    // Read in the same synchronous step as the row: no write can come between.
    const who = known?.(row.id as string) ?? this.identity(row.id as string)
    return {
      user: who.user,
      groups: who.groups,
      amr: (row.amr as string).split(' '),
      authTime: row.auth_time as number,
      expiresAt: row.expires_at as number,
      sessionHash: row.session_hash as string,
      lastActiveAt: row.last_active_at as number,
    }
  }

  /** A user and their groups (sorted), as a site session's check names them. */
  private identity(id: string): { user: UserRecord; groups: string[] } {
    const row = this.sqlite
      .query<Record<string, unknown>, [string]>(
        `SELECT u.id, u.email, u.full_name, u.avatar_url, u.email_verified,
            (SELECT json_group_array(group_name) FROM (SELECT group_name FROM group_members WHERE user_id = u.id ORDER BY group_name)) AS groups
          FROM users u WHERE u.id = ?`,
      )
      .get(id)!
    return {
      user: { id: row.id as string, email: row.email as string, fullName: row.full_name as string, avatarUrl: row.avatar_url as string | null, emailVerified: row.email_verified === 1 },
      groups: JSON.parse(row.groups as string) as string[],
    }
  }

  endSignInOf(idHash: string, host: string): Promise<boolean> {
    return this.ctx.write(() => {
      const ended = this.sqlite
        .query<{ user_id: string }, [string, string]>('DELETE FROM sessions WHERE id_hash = (SELECT session_hash FROM site_sessions WHERE id_hash = ? AND host = ?) RETURNING user_id')
        .all(idHash, host)
      if (ended.length) this.ctx.emit({ sessions: ended.map((r) => r.user_id) })
      return ended.length > 0
    })
  }
}

/** A deleted site's sessions: its own host's, or every subdomain's of a wildcard. */
export function deleteSessionsOfSite(host: string, run: (sql: string, arg: string) => unknown): void {
  if (host.startsWith('*.')) run("DELETE FROM site_sessions WHERE host LIKE '%' || ?", host.slice(1).replace(/[%_\\]/g, ''))
  else run('DELETE FROM site_sessions WHERE host = ?', host)
}
