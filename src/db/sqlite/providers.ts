import { ProviderMoved, countWaysIn, reachOf, sameOrigin, type ProviderReach, type IdentityRecord, type NewMail, type NewUser, type ProviderKind, type ProviderOrigin, type ProviderRecord, type ProviderState, type ProviderStore } from '../store'
import { insertMail } from './mail'
import { waysIn } from './mfa'
import { unique, type SqliteContext } from './context'

type ProviderRow = Record<string, unknown>

const toProvider = (r: ProviderRow): ProviderRecord => ({
  id: r.id as string,
  name: r.name as string,
  kind: r.kind as ProviderRecord['kind'],
  issuer: r.issuer as string,
  apiUrl: r.api_url as string | null,
  clientId: r.client_id as string,
  clientSecretSealed: r.client_secret_sealed as string,
  scope: r.scope as string,
  allowCreate: r.allow_create === 1,
  allowedDomains: JSON.parse(r.allowed_domains as string) as string[],
  linkVerifiedEmail: r.link_verified_email === 1,
  trustMfa: r.trust_mfa === 1,
  updatedAt: r.updated_at as number,
})

const toState = (r: Record<string, unknown>): ProviderState => ({
  stateHash: r.state_hash as string,
  providerId: r.provider_id as string,
  browserHash: r.browser_hash as string,
  nonce: r.nonce as string,
  returnTo: r.return_to as string | null,
  userId: r.user_id as string | null,
  expiresAt: r.expires_at as number,
})

const COLUMNS = 'id, name, kind, issuer, api_url, client_id, client_secret_sealed, scope, allow_create, allowed_domains, link_verified_email, trust_mfa, updated_at'
const values = (p: ProviderRecord) =>
  [p.name, p.kind, p.issuer, p.apiUrl, p.clientId, p.clientSecretSealed, p.scope, p.allowCreate ? 1 : 0, JSON.stringify(p.allowedDomains), p.linkVerifiedEmail ? 1 : 0, p.trustMfa ? 1 : 0, p.updatedAt] as const

export class SqliteProviders implements ProviderStore {
  constructor(private readonly ctx: SqliteContext) {}

  private get sqlite() {
    return this.ctx.db.sqlite
  }

  insertProvider(p: ProviderRecord, now: number): Promise<void> {
    return this.ctx.write(() =>
      unique(() => {
        this.sqlite.prepare(`INSERT INTO providers (${COLUMNS}, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(p.id, ...values(p), now)
      }),
    )
  }

  /** The origin's check and the write in one job of the writer: an identity written at once is before or after both. */
  updateProvider(p: ProviderRecord): Promise<'updated' | 'unknown' | { connected: number }> {
    return this.ctx.write(() => {
      const old = this.sqlite.query<ProviderRow, [string]>('SELECT kind, issuer, api_url FROM providers WHERE id = ?').get(p.id)
      if (!old) return 'unknown'
      if (!sameOrigin({ kind: old.kind as ProviderKind, issuer: old.issuer as string, apiUrl: old.api_url as string | null }, p)) {
        const connected = this.sqlite.query<{ n: number }, [string]>('SELECT count(*) AS n FROM user_identities WHERE provider_id = ?').get(p.id)!.n
        if (connected > 0) return { connected }
      }
      this.sqlite
        .prepare(
          `UPDATE providers SET name = ?, kind = ?, issuer = ?, api_url = ?, client_id = ?, client_secret_sealed = ?, scope = ?, allow_create = ?,
            allowed_domains = ?, link_verified_email = ?, trust_mfa = ?, updated_at = ? WHERE id = ?`,
        )
        .run(...values(p), p.id)
      return 'updated'
    })
  }

  async providerReach(id: string): Promise<ProviderReach | undefined> {
    return this.sqlite.query('SELECT 1 FROM providers WHERE id = ?').get(id) ? this.reachIn(id) : undefined
  }

  /** The count and the delete in one job of the writer: a removal of a way in is before or after both. */
  deleteProvider(id: string, opts: { refuseStranding?: boolean } = {}): Promise<(ProviderReach & { deleted: boolean }) | undefined> {
    return this.ctx.write(() => {
      if (!this.sqlite.query('SELECT 1 FROM providers WHERE id = ?').get(id)) return undefined
      const reach = this.reachIn(id)
      if (opts.refuseStranding && reach.stranded > 0) return { ...reach, deleted: false }
      this.sqlite.prepare('DELETE FROM providers WHERE id = ?').run(id)
      return { ...reach, deleted: true }
    })
  }

  /** The connected people's ways in (WaysIn), one row per kind of person (ProviderReach). */
  private reachIn(providerId: string): ProviderReach {
    const rows = this.sqlite
      .query<{ password: number; passkeys: number; identities: number; people: number }, [string]>(
        `SELECT password, passkeys, identities, count(*) AS people FROM (
          SELECT u.password_hash <> '' AS password, (SELECT count(*) FROM passkeys p WHERE p.user_id = u.id) AS passkeys,
            (SELECT count(*) FROM user_identities o WHERE o.user_id = u.id) AS identities
          FROM user_identities i JOIN users u ON u.id = i.user_id WHERE i.provider_id = ?) w
        GROUP BY password, passkeys, identities`,
      )
      .all(providerId)
    return reachOf(rows.map((r) => ({ password: r.password === 1, passkeys: r.passkeys, identities: r.identities, people: r.people })))
  }

  async findProvider(id: string): Promise<ProviderRecord | undefined> {
    const row = this.sqlite.query<ProviderRow, [string]>(`SELECT ${COLUMNS} FROM providers WHERE id = ?`).get(id)
    return row ? toProvider(row) : undefined
  }

  async listProviders(): Promise<ProviderRecord[]> {
    return this.sqlite.query<ProviderRow, []>(`SELECT ${COLUMNS} FROM providers ORDER BY created_at, id`).all().map(toProvider)
  }

  insertState(s: ProviderState): Promise<void> {
    return this.ctx.write(() => {
      this.sqlite
        .prepare('INSERT INTO provider_states (state_hash, provider_id, browser_hash, nonce, return_to, user_id, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
        .run(s.stateHash, s.providerId, s.browserHash, s.nonce, s.returnTo, s.userId, s.expiresAt)
    })
  }

  takeState(stateHash: string, now: number): Promise<ProviderState | undefined> {
    return this.ctx.write(() => {
      const row = this.sqlite.query<Record<string, unknown>, [string]>('DELETE FROM provider_states WHERE state_hash = ? RETURNING *').get(stateHash)
      return row && (row.expires_at as number) > now ? toState(row) : undefined
    })
  }

  /** Inside the writer's job that writes: an operator's move is before or after it, never between. */
  private checkOrigin(providerId: string, origin: ProviderOrigin): void {
    const found = this.sqlite.query('SELECT 1 FROM providers WHERE id = ? AND kind = ? AND issuer = ? AND api_url IS ?').get(providerId, origin.kind, origin.issuer, origin.apiUrl)
    if (!found) throw new ProviderMoved(providerId)
  }

  useIdentity(i: { providerId: string; subject: string; email: string | null; origin: ProviderOrigin }, now: number): Promise<string | undefined> {
    return this.ctx.write(() => {
      this.checkOrigin(i.providerId, i.origin)
      const row = this.sqlite
        .query<{ user_id: string }, [string | null, number, string, string]>('UPDATE user_identities SET email = ?, last_used_at = ? WHERE provider_id = ? AND subject = ? RETURNING user_id')
        .get(i.email, now, i.providerId, i.subject)
      return row?.user_id
    })
  }

  linkIdentity(i: { providerId: string; subject: string; userId: string; email: string | null; origin: ProviderOrigin; session?: string }, now: number, mail?: NewMail): Promise<'linked' | 'taken' | 'signed-out'> {
    return this.ctx.write(() => {
      this.checkOrigin(i.providerId, i.origin)
      if (i.session !== undefined && !this.sqlite.query('SELECT 1 FROM sessions WHERE id_hash = ? AND user_id = ?').get(i.session, i.userId)) return 'signed-out'
      const made = this.sqlite
        .prepare('INSERT INTO user_identities (provider_id, subject, user_id, email, created_at, last_used_at) SELECT ?1, ?2, id, ?3, ?4, ?4 FROM users WHERE id = ?5 ON CONFLICT DO NOTHING')
        .run(i.providerId, i.subject, i.email, now, i.userId).changes
      if (made === 0) return 'taken'
      if (mail) insertMail(this.ctx.db, [mail], now)
      return 'linked'
    })
  }

  linkByVerifiedEmail(i: { providerId: string; subject: string; email: string; origin: ProviderOrigin }, now: number, mail: (to: string) => NewMail | null): Promise<string | undefined> {
    return this.ctx.write(() => {
      this.checkOrigin(i.providerId, i.origin)
      const row = this.sqlite
        .query<{ user_id: string }, [string, string, string, number]>(
          `INSERT INTO user_identities (provider_id, subject, user_id, email, created_at, last_used_at)
            SELECT ?1, ?2, id, ?3, ?4, ?4 FROM users WHERE email = ?3 AND email_verified = 1 AND disabled_at IS NULL ON CONFLICT DO NOTHING RETURNING user_id`,
        )
        .get(i.providerId, i.subject, i.email, now)
      if (!row) return undefined
      const message = mail(i.email)
      if (message) insertMail(this.ctx.db, [message], now)
      return row.user_id
    })
  }

  createWithIdentity(user: NewUser, i: { providerId: string; subject: string; email: string | null; origin: ProviderOrigin }, now: number): Promise<void> {
    return this.ctx.write(() =>
      unique(() => {
        this.checkOrigin(i.providerId, i.origin)
        this.sqlite
          .prepare('INSERT INTO users (id, email, full_name, avatar_url, password_hash, created_at, email_verified) VALUES (?, ?, ?, ?, ?, ?, ?)')
          .run(user.id, user.email, user.fullName, user.avatarUrl, user.passwordHash, now, user.emailVerified ? 1 : 0)
        this.sqlite.prepare('INSERT INTO user_identities (provider_id, subject, user_id, email, created_at, last_used_at) VALUES (?1, ?2, ?3, ?4, ?5, ?5)').run(i.providerId, i.subject, user.id, i.email, now)
      }),
    )
  }

  async listIdentities(userId: string): Promise<IdentityRecord[]> {
    return this.sqlite
      .query<Record<string, unknown>, [string]>('SELECT provider_id, subject, user_id, email, created_at, last_used_at FROM user_identities WHERE user_id = ? ORDER BY created_at, provider_id')
      .all(userId)
      .map((r) => ({ providerId: r.provider_id as string, subject: r.subject as string, userId: r.user_id as string, email: r.email as string | null, createdAt: r.created_at as number, lastUsedAt: r.last_used_at as number | null }))
  }

  async countIdentities(providerId: string): Promise<number> {
    return this.sqlite.query<{ n: number }, [string]>('SELECT count(*) AS n FROM user_identities WHERE provider_id = ?').get(providerId)!.n
  }

  unlinkIdentity(userId: string, providerId: string): Promise<'done' | 'unknown' | 'last'> {
    return this.ctx.write(() => {
      const ways = waysIn(this.sqlite, userId)
      if (!ways || !this.sqlite.query('SELECT 1 FROM user_identities WHERE user_id = ? AND provider_id = ?').get(userId, providerId)) return 'unknown'
      if (countWaysIn(ways) <= 1) return 'last'
      this.sqlite.prepare('DELETE FROM user_identities WHERE user_id = ? AND provider_id = ?').run(userId, providerId)
      return 'done'
    })
  }
}
