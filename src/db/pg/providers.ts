import { ProviderMoved, countWaysIn, reachOf, sameOrigin, type ProviderReach, type IdentityRecord, type NewMail, type NewUser, type ProviderOrigin, type ProviderRecord, type ProviderState, type ProviderStore } from '../store'
import { json, n, type PgContext, type Row, type Tx } from './context'
import { insertMail } from './mail'
import { lockWaysIn } from './mfa'

const toProvider = (r: Row): ProviderRecord => ({
  id: r.id as string,
  name: r.name as string,
  kind: r.kind as ProviderRecord['kind'],
  issuer: r.issuer as string,
  apiUrl: r.api_url as string | null,
  clientId: r.client_id as string,
  clientSecretSealed: r.client_secret_sealed as string,
  scope: r.scope as string,
  allowCreate: r.allow_create as boolean,
  allowedDomains: json(r.allowed_domains),
  linkVerifiedEmail: r.link_verified_email as boolean,
  trustMfa: r.trust_mfa as boolean,
  updatedAt: n(r.updated_at),
})

const toState = (r: Row): ProviderState => ({
  stateHash: r.state_hash as string,
  providerId: r.provider_id as string,
  browserHash: r.browser_hash as string,
  nonce: r.nonce as string,
  returnTo: r.return_to as string | null,
  userId: r.user_id as string | null,
  expiresAt: n(r.expires_at),
})

export class PgProviders implements ProviderStore {
  constructor(private readonly ctx: PgContext) {}

  insertProvider(p: ProviderRecord, now: number): Promise<void> {
    return this.ctx.run(
      async (sql) =>
        void (await sql`INSERT INTO providers (id, name, kind, issuer, api_url, client_id, client_secret_sealed, scope, allow_create, allowed_domains, link_verified_email, trust_mfa, created_at, updated_at)
          VALUES (${p.id}, ${p.name}, ${p.kind}, ${p.issuer}, ${p.apiUrl}, ${p.clientId}, ${p.clientSecretSealed}, ${p.scope}, ${p.allowCreate}, ${JSON.stringify(p.allowedDomains)}::text::jsonb,
            ${p.linkVerifiedEmail}, ${p.trustMfa}, ${now}, ${p.updatedAt})`),
    )
  }

  /**
   * The provider's row FOR UPDATE, then its identities counted (a statement after the lock: it sees
   * what an identity write that held the row FOR SHARE committed), then the write.
   */
  updateProvider(p: ProviderRecord): Promise<'updated' | 'unknown' | { connected: number }> {
    return this.ctx.tx(async (tx) => {
      const [old] = await tx`SELECT kind, issuer, api_url FROM providers WHERE id = ${p.id} FOR UPDATE`
      if (!old) return 'unknown'
      if (!sameOrigin({ kind: old.kind, issuer: old.issuer, apiUrl: old.api_url }, p)) {
        const connected = n((await tx`SELECT count(*) AS n FROM user_identities WHERE provider_id = ${p.id}`)[0].n)
        if (connected > 0) return { connected }
      }
      await tx`UPDATE providers SET name = ${p.name}, kind = ${p.kind}, issuer = ${p.issuer}, api_url = ${p.apiUrl}, client_id = ${p.clientId},
          client_secret_sealed = ${p.clientSecretSealed}, scope = ${p.scope}, allow_create = ${p.allowCreate}, allowed_domains = ${JSON.stringify(p.allowedDomains)}::text::jsonb,
          link_verified_email = ${p.linkVerifiedEmail}, trust_mfa = ${p.trustMfa}, updated_at = ${p.updatedAt} WHERE id = ${p.id}`
      return 'updated'
    })
  }

  providerReach(id: string): Promise<ProviderReach | undefined> {
    return this.ctx.run(async (sql) => ((await sql`SELECT 1 FROM providers WHERE id = ${id}`).length ? reachIn(sql, id) : undefined))
  }

  /**
   * The provider's row FOR UPDATE (an identity written at once holds it FOR SHARE, or its key),
   * then its people's rows (as a removal of a password or passkey does, lockWaysIn), then the
   * count, in a statement after both locks, then the delete.
   */
  deleteProvider(id: string, opts: { refuseStranding?: boolean } = {}): Promise<(ProviderReach & { deleted: boolean }) | undefined> {
    return this.ctx.tx(async (tx) => {
      if (!(await tx`SELECT 1 FROM providers WHERE id = ${id} FOR UPDATE`).length) return undefined
      await tx`SELECT count(*) FROM (SELECT id FROM users WHERE id IN (SELECT user_id FROM user_identities WHERE provider_id = ${id}) ORDER BY id FOR UPDATE) locked`
      const reach = await reachIn(tx, id)
      if (opts.refuseStranding && reach.stranded > 0) return { ...reach, deleted: false }
      await tx`DELETE FROM providers WHERE id = ${id}`
      return { ...reach, deleted: true }
    })
  }

  findProvider(id: string): Promise<ProviderRecord | undefined> {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`SELECT * FROM providers WHERE id = ${id}`
      return row ? toProvider(row) : undefined
    })
  }

  listProviders(): Promise<ProviderRecord[]> {
    return this.ctx.run(async (sql) => (await sql`SELECT * FROM providers ORDER BY created_at, id`).map(toProvider))
  }

  insertState(s: ProviderState): Promise<void> {
    return this.ctx.run(
      async (sql) =>
        void (await sql`INSERT INTO provider_states (state_hash, provider_id, browser_hash, nonce, return_to, user_id, expires_at)
          VALUES (${s.stateHash}, ${s.providerId}, ${s.browserHash}, ${s.nonce}, ${s.returnTo}, ${s.userId}, ${s.expiresAt})`),
    )
  }

  /** One DELETE … RETURNING: of two callbacks with one state (two instances), one gets the row. */
  takeState(stateHash: string, now: number): Promise<ProviderState | undefined> {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`DELETE FROM provider_states WHERE state_hash = ${stateHash} RETURNING *`
      return row && n(row.expires_at) > now ? toState(row) : undefined
    })
  }

  useIdentity(i: { providerId: string; subject: string; email: string | null; origin: ProviderOrigin }, now: number): Promise<string | undefined> {
    return this.ctx.tx(async (tx) => {
      await holdOrigin(tx, i.providerId, i.origin)
      const [row] = await tx`UPDATE user_identities SET email = ${i.email}, last_used_at = ${now} WHERE provider_id = ${i.providerId} AND subject = ${i.subject} RETURNING user_id`
      return row?.user_id as string | undefined
    })
  }

  linkIdentity(i: { providerId: string; subject: string; userId: string; email: string | null; origin: ProviderOrigin; session?: string }, now: number, mail?: NewMail): Promise<'linked' | 'taken' | 'signed-out'> {
    return this.ctx.tx(async (tx) => {
      await holdOrigin(tx, i.providerId, i.origin)
      // FOR SHARE: a recovery deleting the session waits for this link (then deletes it), or ended it first.
      if (i.session !== undefined && (await tx`SELECT 1 FROM sessions WHERE id_hash = ${i.session} AND user_id = ${i.userId} FOR SHARE`).length === 0) return 'signed-out'
      const made = await tx`INSERT INTO user_identities (provider_id, subject, user_id, email, created_at, last_used_at)
        SELECT ${i.providerId}, ${i.subject}, id, ${i.email}, ${now}, ${now} FROM users WHERE id = ${i.userId} ON CONFLICT DO NOTHING`
      if (made.count === 0) return 'taken'
      if (mail) await insertMail(tx, [mail], now)
      return 'linked'
    })
  }

  /** FOR SHARE: an email change or a verification racing the link is waited for, then seen. */
  linkByVerifiedEmail(i: { providerId: string; subject: string; email: string; origin: ProviderOrigin }, now: number, mail: (to: string) => NewMail | null): Promise<string | undefined> {
    return this.ctx.tx(async (tx) => {
      await holdOrigin(tx, i.providerId, i.origin)
      const [row] = await tx`WITH u AS (SELECT id FROM users WHERE email = ${i.email} AND email_verified AND disabled_at IS NULL FOR SHARE)
        INSERT INTO user_identities (provider_id, subject, user_id, email, created_at, last_used_at)
        SELECT ${i.providerId}, ${i.subject}, id, ${i.email}, ${now}, ${now} FROM u ON CONFLICT DO NOTHING RETURNING user_id`
      if (!row) return undefined
      const message = mail(i.email)
      if (message) await insertMail(tx, [message], now)
      return row.user_id as string
    })
  }

  createWithIdentity(user: NewUser, i: { providerId: string; subject: string; email: string | null; origin: ProviderOrigin }, now: number): Promise<void> {
    return this.ctx.tx(async (tx) => {
      await holdOrigin(tx, i.providerId, i.origin)
      await tx`INSERT INTO users (id, email, full_name, avatar_url, password_hash, created_at, email_verified)
          VALUES (${user.id}, ${user.email}, ${user.fullName}, ${user.avatarUrl}, ${user.passwordHash}, ${now}, ${user.emailVerified})`
      await tx`INSERT INTO user_identities (provider_id, subject, user_id, email, created_at, last_used_at) VALUES (${i.providerId}, ${i.subject}, ${user.id}, ${i.email}, ${now}, ${now})`
    })
  }

  listIdentities(userId: string): Promise<IdentityRecord[]> {
    return this.ctx.run(async (sql) =>
      (await sql`SELECT provider_id, subject, user_id, email, created_at, last_used_at FROM user_identities WHERE user_id = ${userId} ORDER BY created_at, provider_id`).map((r: Row) => ({
        providerId: r.provider_id as string,
        subject: r.subject as string,
        userId: r.user_id as string,
        email: r.email as string | null,
        createdAt: n(r.created_at),
        lastUsedAt: r.last_used_at === null ? null : n(r.last_used_at),
      })),
    )
  }

  countIdentities(providerId: string): Promise<number> {
    return this.ctx.run(async (sql) => n((await sql`SELECT count(*) AS n FROM user_identities WHERE provider_id = ${providerId}`)[0].n))
  }

  /** Under a lock on the user's row: two removals at once (disconnects, a passkey) cannot both take the last two ways in. */
  unlinkIdentity(userId: string, providerId: string): Promise<'done' | 'unknown' | 'last'> {
    return this.ctx.tx(async (tx) => {
      const ways = await lockWaysIn(tx, userId)
      if (!ways || (await tx`SELECT 1 FROM user_identities WHERE user_id = ${userId} AND provider_id = ${providerId}`).length === 0) return 'unknown'
      if (countWaysIn(ways) <= 1) return 'last'
      await tx`DELETE FROM user_identities WHERE user_id = ${userId} AND provider_id = ${providerId}`
      return 'done'
    })
  }
}

/**
 * The provider's row FOR SHARE, still at `origin`, until the identity write commits: an operator's
 * move (updateProvider, FOR UPDATE) waits for it and then counts the identity, or came first and
 * this finds the row moved (READ COMMITTED re-checks the condition on the row it waited for).
 */
async function holdOrigin(tx: Tx, providerId: string, origin: ProviderOrigin): Promise<void> {
  const held = await tx`SELECT 1 FROM providers WHERE id = ${providerId} AND kind = ${origin.kind} AND issuer = ${origin.issuer} AND api_url IS NOT DISTINCT FROM ${origin.apiUrl} FOR SHARE`
  if (held.length === 0) throw new ProviderMoved(providerId)
}

/** The connected people's ways in (WaysIn), one row per kind of person (ProviderReach). */
async function reachIn(sql: Tx, providerId: string): Promise<ProviderReach> {
  const rows = await sql`SELECT password, passkeys, identities, count(*) AS people FROM (
      SELECT u.password_hash <> '' AS password, (SELECT count(*) FROM passkeys p WHERE p.user_id = u.id) AS passkeys,
        (SELECT count(*) FROM user_identities o WHERE o.user_id = u.id) AS identities
      FROM user_identities i JOIN users u ON u.id = i.user_id WHERE i.provider_id = ${providerId}) w
    GROUP BY password, passkeys, identities`
  return reachOf(rows.map((r: Row) => ({ password: r.password as boolean, passkeys: n(r.passkeys), identities: n(r.identities), people: n(r.people) })))
}
