import type {
  AuthorizedApp,
  CodeExchange,
  CodeRecord,
  CodeRefusal,
  ExchangeOutcome,
  FoundRefresh,
  GrantStore,
  NewCode,
  NewRefreshToken,
  NewToken,
  RefreshDecision,
  RefreshFamily,
  RefreshLookup,
  RefreshOutcome,
  RefreshRecord,
  SignIn,
} from '../store'
import { emitting, lock, n, type PgContext, type Row, type Tx } from './context'
import type { AuditEvent } from '../store'

/** The parameters of an event not written (its INSERT selects no row): one statement either way. */
export const NO_EVENT: AuditEvent = { at: 0, kind: '', userId: null, clientId: null, address: null, userAgent: null, detail: null }

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
  resource: (r.resource ?? null) as string | null,
})

// to_jsonb rows: parsed by the client, or text on some paths.
const jsonRow = (v: unknown): Row => (typeof v === 'string' ? JSON.parse(v) : v) as Row

const toFamily = (r: Row): RefreshFamily => ({
  id: n(r.id),
  familyId: r.family_id as string,
  clientId: r.client_id as string,
  userId: r.user_id as string,
  keyHash: r.key_hash as string | null,
  authTime: r.auth_time === null ? null : n(r.auth_time),
  amr: r.amr as string | null,
  sid: (r.sid ?? null) as string | null,
  resource: r.resource as string | null,
  usedAt: n(r.used_at),
  expiresAt: n(r.expires_at),
  windowStart: n(r.window_start),
  windowCount: n(r.window_count),
  live: n(r.live),
  allowed: r.allowed as boolean,
})

const FAMILY_COLUMNS = 'f.id, f.family_id, f.client_id, f.user_id, f.key_hash, f.auth_time, f.amr, f.sid, f.resource, f.used_at, f.expires_at, f.window_start, f.window_count'
const LIVE = '(SELECT count(*) FROM refresh_tokens r WHERE r.family_id = f.family_id AND r.rotated_at IS NULL) AS live'
/** groups.mayAuthorize, on the family's row: a refresh reads it in the statement that locks the family. */
const ALLOWED = `(NOT EXISTS (SELECT 1 FROM client_groups c WHERE c.client_id = f.client_id)
  OR EXISTS (SELECT 1 FROM client_groups c JOIN group_members m ON m.group_name = c.group_name WHERE c.client_id = f.client_id AND m.user_id = f.user_id)) AS allowed`

/*
 * One lock order for every write to a grant, on any instance: consent, then codes, then
 * families, then tokens. A code exchange locks its code and inserts; a refresh locks its family
 * and inserts; a revocation deletes in that order; none writes the consent row (a family notes
 * its own last use). Deleting a user or a client removes their families before the row whose
 * key the inserts check. So writes queue, never deadlock; PgStore.tx retries the rare abort.
 */

/**
 * Every consent, code, family and token whose `column` is one of `values`, in that lock order:
 * what deleting a client (or several) or a resource takes with it, before its own row goes.
 */
export async function deleteGrantsWhere(tx: Tx, column: 'client_id' | 'resource', values: readonly string[]): Promise<void> {
  const list = values.map((_, i) => `$${i + 1}`).join(', ')
  for (const table of ['consents', 'auth_codes', 'refresh_families', 'refresh_tokens', 'access_tokens'])
    await tx.unsafe(`DELETE FROM ${table} WHERE ${column} IN (${list})`, values as string[])
}

/** An INSERT … RETURNING id of an access or refresh token, for a WITH clause. */
function insertToken(tx: Tx, table: 'access_tokens' | 'refresh_tokens', t: NewToken | NewRefreshToken) {
  if (table === 'access_tokens')
    return tx`INSERT INTO access_tokens (verifier_hash, family_id, client_id, user_id, scope, expires_at, created_at, resource)
      VALUES (${t.verifierHash}, ${t.familyId}, ${t.clientId}, ${t.userId}, ${t.scope}, ${t.expiresAt}, ${t.createdAt}, ${t.resource}) RETURNING id`
  return tx`INSERT INTO refresh_tokens (verifier_hash, family_id, client_id, user_id, scope, expires_at, created_at, auth_time, resource)
    VALUES (${t.verifierHash}, ${t.familyId}, ${t.clientId}, ${t.userId}, ${t.scope}, ${t.expiresAt}, ${t.createdAt}, ${(t as NewRefreshToken).authTime}, ${t.resource}) RETURNING id`
}

/**
 * Revokes a family: its row first (a refresh holding it is waited for; one that comes later
 * finds none), then, each in a statement of its own and so seeing whatever committed before it,
 * its refresh and access tokens.
 */
async function deleteFamily(tx: Tx, familyId: string, deleted: number[]): Promise<boolean> {
  const family = (await tx`DELETE FROM refresh_families WHERE family_id = ${familyId}`).count
  const refresh = (await tx`DELETE FROM refresh_tokens WHERE family_id = ${familyId}`).count
  const access = await deleteTokens(tx`DELETE FROM access_tokens WHERE family_id = ${familyId} RETURNING id`, deleted)
  return family + refresh + access > 0
}

/** Runs a DELETE … RETURNING id of access tokens, noting their ids for the caches (told once it committed); how many. */
async function deleteTokens(statement: Promise<Row[]>, deleted: number[]): Promise<number> {
  const rows = await statement
  for (const row of rows) deleted.push(n(row.id))
  return rows.length
}

/** The change to emit for access tokens a committed write deleted. */
const tokensGone = (ids: number[]) => (ids.length ? { tokens: ids } : undefined)


const toCode = (row: Row): CodeRecord => ({
  clientId: row.client_id as string,
  userId: row.user_id as string,
  redirectUri: row.redirect_uri as string,
  scope: row.scope as string,
  codeChallenge: row.code_challenge as string | null,
  expiresAt: n(row.expires_at),
  usedAt: null,
  nonce: row.nonce as string | null,
  authTime: row.auth_time === null ? null : n(row.auth_time),
  amr: row.amr as string | null,
  resource: row.resource as string | null,
  sid: (row.sid ?? null) as string | null,
})

type Remember = { scopes: readonly string[]; canonicalOrder: readonly string[]; now: number }

const insertCode = (sql: Tx, code: NewCode) => sql`INSERT INTO auth_codes (code_hash, client_id, user_id, redirect_uri, scope, code_challenge, expires_at, nonce, auth_time, amr, resource, sid)
  VALUES (${code.codeHash}, ${code.clientId}, ${code.userId}, ${code.redirectUri}, ${code.scope}, ${code.codeChallenge}, ${code.expiresAt}, ${code.nonce}, ${code.authTime}, ${code.amr}, ${code.resource}, ${code.sid ?? null})`

/**
 * A code, and with `remember` the user's consent grown by its scopes, inside the caller's
 * transaction: the grant's own, or a device decision's (the consent counts only with the decision).
 */
export async function writeCode(tx: Tx, code: NewCode, remember: Remember | undefined): Promise<void> {
  if (remember) {
    // Two consents for one user and app at once must both count: the union is taken under a lock.
    const resource = code.resource ?? ''
    await lock(tx, `consent:${code.userId}:${code.clientId}:${resource}`)
    const [row] = await tx`SELECT scope FROM consents WHERE user_id = ${code.userId} AND client_id = ${code.clientId} AND resource = ${resource}`
    const all = new Set([...(row?.scope ? (row.scope as string).split(' ') : []), ...remember.scopes])
    const scope = remember.canonicalOrder.filter((s) => all.has(s)).join(' ')
    await tx`INSERT INTO consents (user_id, client_id, resource, scope, created_at, updated_at)
      VALUES (${code.userId}, ${code.clientId}, ${resource}, ${scope}, ${remember.now}, ${remember.now})
      ON CONFLICT (user_id, client_id, resource) DO UPDATE SET scope = excluded.scope, updated_at = excluded.updated_at`
  }
  await insertCode(tx, code)
}

export class PgGrants implements GrantStore {
  constructor(private readonly ctx: PgContext) {}

  grantedScope(userId: string, clientId: string, resource: string | null): Promise<string[]> {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`SELECT scope FROM consents WHERE user_id = ${userId} AND client_id = ${clientId} AND resource = ${resource ?? ''}`
      return row ? (row.scope as string).split(' ') : []
    })
  }

  listAuthorizedApps(userId: string): Promise<AuthorizedApp[]> {
    // A family notes its own last use: exchanges and refreshes never write the consent row.
    return this.ctx.run(async (sql) =>
      (
        await sql`SELECT c.client_id, k.name, c.scope, c.resource, c.updated_at,
            nullif(greatest(coalesce(c.last_used_at, 0),
              coalesce((SELECT max(f.used_at) FROM refresh_families f WHERE f.user_id = c.user_id AND f.client_id = c.client_id), 0)), 0) AS last_used_at
          FROM consents c JOIN clients k ON k.id = c.client_id
          WHERE c.user_id = ${userId} ORDER BY k.name COLLATE "C", c.client_id, c.resource COLLATE "C"`
      ).map((r: Row) => ({
        clientId: r.client_id as string,
        name: r.name as string,
        scopes: (r.scope as string).split(' '),
        resource: (r.resource as string) || null,
        grantedAt: n(r.updated_at),
        lastUsedAt: r.last_used_at === null ? null : n(r.last_used_at),
      })),
    )
  }

  issueCode(code: NewCode, remember: Remember | undefined): Promise<void> {
    if (!remember) return this.ctx.run(async (sql) => void (await insertCode(sql, code)))
    return this.ctx.tx((tx) => writeCode(tx, code, remember))
  }

  async revokeAccess(userId: string, clientId: string): Promise<boolean> {
    let deleted: number[] = []
    const found = await this.ctx.tx(async (tx) => {
      deleted = []
      const removed = (await tx`DELETE FROM consents WHERE user_id = ${userId} AND client_id = ${clientId}`).count
      await tx`DELETE FROM auth_codes WHERE user_id = ${userId} AND client_id = ${clientId}`
      await tx`DELETE FROM refresh_families WHERE user_id = ${userId} AND client_id = ${clientId}`
      await tx`DELETE FROM refresh_tokens WHERE user_id = ${userId} AND client_id = ${clientId}`
      const revoked = await deleteTokens(tx`DELETE FROM access_tokens WHERE user_id = ${userId} AND client_id = ${clientId} RETURNING id`, deleted)
      return removed + revoked > 0
    })
    return emitting(this.ctx, found, tokensGone(deleted))
  }

  /**
   * One round trip where there were four (BEGIN, SELECT … FOR UPDATE, the inserts, COMMIT): one
   * statement (a transaction of its own) reads the code and decides `codeRefusal` on it, then
   * locks it *still unused* and writes the tokens with the code's grant, or writes nothing. A
   * second exchange of the same code, on any instance, waits on the row lock and then finds it
   * used; that, or a code already used when read, goes the replay path below.
   */
  async exchangeCode(exchange: CodeExchange): Promise<ExchangeOutcome> {
    const { codeHash, now, expect, tokens } = exchange
    const { familyId, access, refresh, keyHash } = tokens
    const audit = exchange.audit ?? NO_EVENT
    const [row] = await this.ctx.atomic(
      (sql) => sql`WITH c AS (SELECT client_id, user_id, redirect_uri, scope, code_challenge, expires_at, nonce, auth_time, amr, resource, sid,
            CASE WHEN used_at IS NOT NULL THEN 'used'
              WHEN expires_at <= ${now} THEN 'expired'
              WHEN client_id <> ${expect.clientId} THEN 'client'
              WHEN redirect_uri IS DISTINCT FROM ${expect.redirectUri ?? null} THEN 'redirect_uri'
              WHEN code_challenge IS NOT NULL AND code_challenge IS DISTINCT FROM ${expect.challenge} THEN 'pkce'
              WHEN code_challenge IS NULL AND ${expect.challenge}::text IS NOT NULL THEN 'verifier'
              WHEN ${expect.audience !== undefined} AND resource IS DISTINCT FROM ${expect.audience ?? null} THEN 'audience' END AS refusal
            FROM auth_codes WHERE code_hash = ${codeHash}),
          g AS (SELECT code_hash, user_id, scope, resource, auth_time, amr, sid FROM auth_codes
            WHERE code_hash = ${codeHash} AND used_at IS NULL AND (SELECT refusal FROM c) IS NULL FOR UPDATE),
          f AS (INSERT INTO refresh_families (family_id, client_id, user_id, key_hash, created_at, used_at, expires_at, auth_time, amr, resource, sid)
            SELECT ${familyId}, ${expect.clientId}, user_id, ${keyHash}, ${now}, ${now}, ${refresh.expiresAt}, auth_time, amr, resource, sid FROM g RETURNING id),
          a AS (INSERT INTO access_tokens (verifier_hash, family_id, client_id, user_id, scope, expires_at, created_at, resource)
            SELECT ${access.verifierHash}, ${familyId}, ${expect.clientId}, user_id, scope, ${access.expiresAt}, ${access.createdAt}, resource FROM g RETURNING id),
          r AS (INSERT INTO refresh_tokens (verifier_hash, family_id, client_id, user_id, scope, expires_at, created_at, auth_time, resource)
            SELECT ${refresh.verifierHash}, ${familyId}, ${expect.clientId}, user_id, scope, ${refresh.expiresAt}, ${refresh.createdAt}, auth_time, resource FROM g),
          u AS (UPDATE auth_codes SET used_at = ${now}, token_id = (SELECT id FROM a), family_id = ${familyId} WHERE code_hash IN (SELECT code_hash FROM g)),
          e AS (INSERT INTO audit_events (at, kind, user_id, client_id, address, user_agent, detail)
            SELECT ${audit.at}, ${audit.kind}, user_id, ${audit.clientId}, ${audit.address}, ${audit.userAgent}, (${audit.detail ?? '{}'}::text::jsonb || jsonb_build_object('scope', scope))::text
            FROM g WHERE ${exchange.audit !== undefined})
        SELECT c.*, (SELECT id FROM a) AS token_id, (SELECT id FROM f) AS family_ref FROM c`,
    )
    if (!row) return { ok: false, reason: 'unknown' }
    if (row.refusal === 'used' || (row.refusal === null && row.token_id === null)) return this.replayed(codeHash)
    const code = toCode(row)
    if (row.refusal !== null) return { ok: false, reason: 'refused', refusal: row.refusal as CodeRefusal, code }
    return { ok: true, tokenId: n(row.token_id), familyRef: n(row.family_ref), code }
  }

  /** A used code presented again (§4.1.2): what it issued is revoked — this commits although the request fails. */
  private async replayed(codeHash: string): Promise<ExchangeOutcome> {
    let deleted: number[] = []
    const outcome = await this.ctx.tx(async (tx): Promise<ExchangeOutcome> => {
      deleted = []
      const [row] = await tx`SELECT used_at, token_id, family_id FROM auth_codes WHERE code_hash = ${codeHash} FOR UPDATE`
      if (!row || row.used_at === null) return { ok: false, reason: 'unknown' }
      if (row.family_id !== null) await deleteFamily(tx, row.family_id as string, deleted)
      else if (row.token_id !== null) await deleteTokens(tx`DELETE FROM access_tokens WHERE id = ${row.token_id} RETURNING id`, deleted)
      return { ok: false, reason: 'used' }
    })
    return emitting(this.ctx, outcome, tokensGone(deleted))
  }

  async refresh(lookup: RefreshLookup, now: number, decide: (found: FoundRefresh) => RefreshDecision): Promise<RefreshOutcome> {
    let deleted: number[] = []
    const outcome = await this.ctx.tx(async (tx): Promise<RefreshOutcome> => {
      deleted = []
      // Every refresh of the family, on any instance, queues on its row; a revoked one is gone.
      const found = await this.find(tx, lookup, 'FOR UPDATE')
      if (!found) return { ok: false, error: 'invalid_grant', description: 'refresh token is invalid, expired or revoked' }
      const decision = decide(found)
      if ('refuse' in decision) return { ok: false, ...decision.refuse }
      const { family, token } = found
      if ('revokeFamily' in decision) {
        await deleteFamily(tx, family.familyId, deleted)
        return { ok: false, error: 'invalid_grant', description: decision.revokeFamily, familyRevoked: decision.reuse }
      }
      const { access, refresh, keyHash } = decision.issue
      const rotate = decision.markRotated && token !== undefined
      const audit = decision.audit ?? NO_EVENT
      const [ids] = await tx`WITH a AS (${insertToken(tx, 'access_tokens', access)}), r AS (${insertToken(tx, 'refresh_tokens', refresh)}),
          m AS (UPDATE refresh_tokens SET rotated_at = ${now} WHERE id = ${token?.id ?? 0} AND rotated_at IS NULL AND ${rotate}),
          p AS (DELETE FROM refresh_tokens WHERE family_id = ${family.familyId} AND rotated_at < ${decision.pruneRotatedBefore}),
          f AS (UPDATE refresh_families SET used_at = ${now}, expires_at = greatest(expires_at, ${refresh.expiresAt}), key_hash = ${keyHash},
            window_start = ${decision.window.start}, window_count = ${decision.window.count} WHERE id = ${family.id}),
          e AS (INSERT INTO audit_events (at, kind, user_id, client_id, address, user_agent, detail)
            SELECT ${audit.at}, ${audit.kind}, ${audit.userId}, ${audit.clientId}, ${audit.address}, ${audit.userAgent}, ${audit.detail} WHERE ${decision.audit !== undefined})
        SELECT (SELECT id FROM a) AS token_id`
      return { ok: true, tokenId: n(ids!.token_id), familyRef: family.id }
    })
    return emitting(this.ctx, outcome, tokensGone(deleted))
  }

  findRefreshToken(lookup: RefreshLookup): Promise<FoundRefresh | undefined> {
    return this.ctx.run((sql) => this.find(sql, lookup, ''))
  }

  /**
   * The family a presented token names and its row (by the verifier's hash, or by its own id for
   * an old token). Locking, both rows are locked in the one statement: a refresh that waited for
   * another's lock then reads both rows as that one committed them (never its own older
   * snapshot), so the second of two refreshes of one token sees it rotated.
   */
  private async find(tx: Tx, lookup: RefreshLookup, locking: '' | 'FOR UPDATE'): Promise<FoundRefresh | undefined> {
    const byId = 'tokenId' in lookup
    const [pair] = await tx.unsafe(
      `SELECT ${FAMILY_COLUMNS}, ${LIVE}, ${ALLOWED}, to_jsonb(t) AS token FROM refresh_families f JOIN refresh_tokens t ON t.family_id = f.family_id
        WHERE ${byId ? 't.id = $1' : 'f.id = $1 AND t.verifier_hash = $2'} ${locking && 'FOR UPDATE OF f, t'}`,
      byId ? [lookup.tokenId] : [lookup.family, lookup.verifierHash],
    )
    if (pair) return { family: toFamily(pair), token: toRefresh(jsonRow(pair.token)) }
    if (byId) return undefined
    // No live row for this verifier: an old (or forged) token of the family, if the family exists.
    const [family] = await tx.unsafe(`SELECT ${FAMILY_COLUMNS}, ${LIVE}, ${ALLOWED} FROM refresh_families f WHERE f.id = $1 ${locking && 'FOR UPDATE OF f'}`, [lookup.family])
    return family && { family: toFamily(family), token: undefined }
  }

  async revokeFamily(familyId: string): Promise<boolean> {
    let deleted: number[] = []
    const found = await this.ctx.tx((tx) => deleteFamily(tx, familyId, (deleted = [])))
    return emitting(this.ctx, found, tokensGone(deleted))
  }

  signInOf(familyId: string): Promise<SignIn | undefined> {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`SELECT auth_time, amr FROM refresh_families WHERE family_id = ${familyId}`
      return row && { authTime: row.auth_time === null ? null : n(row.auth_time), amr: row.amr as string | null }
    })
  }
}
