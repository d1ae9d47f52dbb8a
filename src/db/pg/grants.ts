import type { SQL } from 'bun'
import type {
  AuthorizedApp,
  CodeRecord,
  ExchangeOutcome,
  GrantStore,
  IssuedTokens,
  NewCode,
  NewRefreshToken,
  NewToken,
  RefreshDecision,
  RefreshOutcome,
  RefreshRecord,
} from '../store'
import { lock, n, type PgContext, type Row, type Tx } from './context'

const toRefresh = (r: Row): RefreshRecord => ({
  id: n(r.id),
  verifierHash: r.verifier_hash as string,
  familyId: r.family_id as string,
  clientId: r.client_id as string,
  userId: r.user_id as string,
  scope: r.scope as string,
  expiresAt: n(r.expires_at),
  createdAt: n(r.created_at),
  rotatedAt: r.rotated_at === null ? null : n(r.rotated_at),
  authTime: r.auth_time === null ? null : n(r.auth_time),
})

/** An INSERT … RETURNING id of an access or refresh token, for a WITH clause. */
function insertToken(tx: Tx, table: 'access_tokens' | 'refresh_tokens', t: NewToken | NewRefreshToken) {
  if (table === 'access_tokens')
    return tx`INSERT INTO access_tokens (verifier_hash, family_id, client_id, user_id, scope, expires_at, created_at)
      VALUES (${t.verifierHash}, ${t.familyId}, ${t.clientId}, ${t.userId}, ${t.scope}, ${t.expiresAt}, ${t.createdAt}) RETURNING id`
  return tx`INSERT INTO refresh_tokens (verifier_hash, family_id, client_id, user_id, scope, expires_at, created_at, auth_time)
    VALUES (${t.verifierHash}, ${t.familyId}, ${t.clientId}, ${t.userId}, ${t.scope}, ${t.expiresAt}, ${t.createdAt}, ${(t as NewRefreshToken).authTime}) RETURNING id`
}

async function deleteFamily(tx: Tx, familyId: string): Promise<boolean> {
  const access = (await tx`DELETE FROM access_tokens WHERE family_id = ${familyId}`).count
  const refresh = (await tx`DELETE FROM refresh_tokens WHERE family_id = ${familyId}`).count
  return access + refresh > 0
}

export class PgGrants implements GrantStore {
  constructor(private readonly ctx: PgContext) {}

  grantedScope(userId: string, clientId: string): Promise<string[]> {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`SELECT scope FROM consents WHERE user_id = ${userId} AND client_id = ${clientId}`
      return row ? (row.scope as string).split(' ') : []
    })
  }

  listAuthorizedApps(userId: string): Promise<AuthorizedApp[]> {
    return this.ctx.run(async (sql) =>
      (
        await sql`SELECT c.client_id, k.name, c.scope, c.updated_at, c.last_used_at FROM consents c JOIN clients k ON k.id = c.client_id
          WHERE c.user_id = ${userId} ORDER BY k.name COLLATE "C"`
      ).map((r: Row) => ({
        clientId: r.client_id as string,
        name: r.name as string,
        scopes: (r.scope as string).split(' '),
        grantedAt: n(r.updated_at),
        lastUsedAt: r.last_used_at === null ? null : n(r.last_used_at),
      })),
    )
  }

  issueCode(code: NewCode, remember: { scopes: readonly string[]; canonicalOrder: readonly string[]; now: number } | undefined): Promise<void> {
    const insert = (sql: SQL) => sql`INSERT INTO auth_codes (code_hash, client_id, user_id, redirect_uri, scope, code_challenge, expires_at, nonce, auth_time)
      VALUES (${code.codeHash}, ${code.clientId}, ${code.userId}, ${code.redirectUri}, ${code.scope}, ${code.codeChallenge}, ${code.expiresAt}, ${code.nonce}, ${code.authTime})`
    if (!remember) return this.ctx.run(async (sql) => void (await insert(sql)))
    return this.ctx.tx(async (tx) => {
      // Two consents for one user and app at once must both count: the union is taken under a lock.
      await lock(tx, `consent:${code.userId}:${code.clientId}`)
      const [row] = await tx`SELECT scope FROM consents WHERE user_id = ${code.userId} AND client_id = ${code.clientId}`
      const all = new Set([...(row?.scope ? (row.scope as string).split(' ') : []), ...remember.scopes])
      const scope = remember.canonicalOrder.filter((s) => all.has(s)).join(' ')
      await tx`INSERT INTO consents (user_id, client_id, scope, created_at, updated_at)
        VALUES (${code.userId}, ${code.clientId}, ${scope}, ${remember.now}, ${remember.now})
        ON CONFLICT (user_id, client_id) DO UPDATE SET scope = excluded.scope, updated_at = excluded.updated_at`
      await insert(tx)
    })
  }

  revokeAccess(userId: string, clientId: string): Promise<boolean> {
    return this.ctx.tx(async (tx) => {
      const removed = (await tx`DELETE FROM consents WHERE user_id = ${userId} AND client_id = ${clientId}`).count
      const revoked = (await tx`DELETE FROM access_tokens WHERE user_id = ${userId} AND client_id = ${clientId}`).count
      await tx`DELETE FROM refresh_tokens WHERE user_id = ${userId} AND client_id = ${clientId}`
      await tx`DELETE FROM auth_codes WHERE user_id = ${userId} AND client_id = ${clientId}`
      return removed + revoked > 0
    })
  }

  exchangeCode(
    codeHash: string,
    now: number,
    check: (code: CodeRecord) => string | undefined,
    issue: (code: CodeRecord) => IssuedTokens,
  ): Promise<ExchangeOutcome> {
    return this.ctx.tx(async (tx): Promise<ExchangeOutcome> => {
      // The row lock makes a second exchange of the same code, on any instance, wait for the
      // first and then see it used.
      const [row] = await tx`SELECT client_id, user_id, redirect_uri, scope, code_challenge, expires_at, used_at, token_id, family_id, nonce, auth_time
        FROM auth_codes WHERE code_hash = ${codeHash} FOR UPDATE`
      if (!row) return { ok: false, reason: 'unknown' }
      if (row.used_at !== null) {
        // §4.1.2: the replay revokes what the code issued; this commits although the request fails.
        if (row.family_id !== null) await deleteFamily(tx, row.family_id as string)
        else if (row.token_id !== null) await tx`DELETE FROM access_tokens WHERE id = ${row.token_id}`
        return { ok: false, reason: 'used' }
      }
      const code: CodeRecord = {
        clientId: row.client_id as string,
        userId: row.user_id as string,
        redirectUri: row.redirect_uri as string,
        scope: row.scope as string,
        codeChallenge: row.code_challenge as string | null,
        expiresAt: n(row.expires_at),
        usedAt: null,
        nonce: row.nonce as string | null,
        authTime: row.auth_time === null ? null : n(row.auth_time),
      }
      const refused = check(code)
      if (refused) return { ok: false, reason: 'refused', description: refused }
      const { access, refresh } = issue(code)
      const [ids] = await tx`WITH a AS (${insertToken(tx, 'access_tokens', access)}), r AS (${insertToken(tx, 'refresh_tokens', refresh)}),
          u AS (UPDATE auth_codes SET used_at = ${now}, token_id = (SELECT id FROM a), family_id = ${access.familyId} WHERE code_hash = ${codeHash}),
          c AS (UPDATE consents SET last_used_at = ${now} WHERE user_id = ${code.userId} AND client_id = ${code.clientId})
        SELECT (SELECT id FROM a) AS token_id, (SELECT id FROM r) AS refresh_id`
      return { ok: true, tokenId: n(ids!.token_id), refreshId: n(ids!.refresh_id) }
    })
  }

  refresh(id: number, now: number, decide: (token: RefreshRecord) => RefreshDecision): Promise<RefreshOutcome> {
    return this.ctx.tx(async (tx): Promise<RefreshOutcome> => {
      // Two refreshes of one token, on any instances, queue on its row.
      const [row] = await tx`SELECT * FROM refresh_tokens WHERE id = ${id} FOR UPDATE`
      if (!row) return { ok: false, error: 'invalid_grant', description: 'refresh token is invalid, expired or revoked' }
      const token = toRefresh(row)
      const decision = decide(token)
      if ('refuse' in decision) return { ok: false, ...decision.refuse }
      if ('revokeFamily' in decision) {
        await deleteFamily(tx, token.familyId)
        return { ok: false, error: 'invalid_grant', description: decision.revokeFamily, familyRevoked: true }
      }
      const { access, refresh } = decision.issue
      const [ids] = await tx`WITH a AS (${insertToken(tx, 'access_tokens', access)}), r AS (${insertToken(tx, 'refresh_tokens', refresh)}),
          m AS (UPDATE refresh_tokens SET rotated_at = ${now} WHERE id = ${id} AND rotated_at IS NULL AND ${decision.markRotated}),
          c AS (UPDATE consents SET last_used_at = ${now} WHERE user_id = ${token.userId} AND client_id = ${token.clientId})
        SELECT (SELECT id FROM a) AS token_id, (SELECT id FROM r) AS refresh_id`
      return { ok: true, tokenId: n(ids!.token_id), refreshId: n(ids!.refresh_id) }
    })
  }

  findRefreshToken(id: number): Promise<RefreshRecord | undefined> {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`SELECT * FROM refresh_tokens WHERE id = ${id}`
      return row && toRefresh(row)
    })
  }

  revokeFamily(familyId: string): Promise<boolean> {
    return this.ctx.tx((tx) => deleteFamily(tx, familyId))
  }
}
