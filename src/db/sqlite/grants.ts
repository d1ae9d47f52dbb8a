import { and, eq, isNull, sql } from 'drizzle-orm'
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
import { changes, insertedId } from './client'
import type { SqliteContext } from './context'
import { prepared } from './prepared'
import { accessTokens, authCodes, clients, consents, refreshTokens } from './schema'

const p = (name: string) => sql.placeholder(name)

/** The columns access and refresh tokens share, as placeholders for a prepared INSERT. */
const tokenColumns = {
  verifierHash: p('verifierHash'),
  familyId: p('familyId'),
  clientId: p('clientId'),
  userId: p('userId'),
  scope: p('scope'),
  expiresAt: p('expiresAt'),
  createdAt: p('createdAt'),
}

export class SqliteGrants implements GrantStore {
  constructor(private readonly ctx: SqliteContext) {}

  private get db() {
    return this.ctx.db
  }

  async grantedScope(userId: string, clientId: string): Promise<string[]> {
    const row = this.db.orm
      .select({ scope: consents.scope })
      .from(consents)
      .where(and(eq(consents.userId, userId), eq(consents.clientId, clientId)))
      .get()
    return row ? row.scope.split(' ') : []
  }

  async listAuthorizedApps(userId: string): Promise<AuthorizedApp[]> {
    return this.db.orm
      .select({ clientId: consents.clientId, name: clients.name, scope: consents.scope, grantedAt: consents.updatedAt, lastUsedAt: consents.lastUsedAt })
      .from(consents)
      .innerJoin(clients, eq(clients.id, consents.clientId))
      .where(eq(consents.userId, userId))
      .orderBy(clients.name)
      .all()
      .map((r) => ({ clientId: r.clientId, name: r.name, scopes: r.scope.split(' '), grantedAt: r.grantedAt, lastUsedAt: r.lastUsedAt }))
  }

  issueCode(code: NewCode, remember: { scopes: readonly string[]; canonicalOrder: readonly string[]; now: number } | undefined): Promise<void> {
    return this.ctx.write(() => {
      if (remember) this.rememberConsent(code.userId, code.clientId, remember.scopes, remember.canonicalOrder, remember.now)
      prepared(this.db, 'insertCode', () =>
        this.db.orm
          .insert(authCodes)
          .values({
            codeHash: p('codeHash'),
            clientId: p('clientId'),
            userId: p('userId'),
            redirectUri: p('redirectUri'),
            scope: p('scope'),
            codeChallenge: p('codeChallenge'),
            expiresAt: p('expiresAt'),
            nonce: p('nonce'),
            authTime: p('authTime'),
          })
          .prepare(),
      ).run({ ...code })
    })
  }

  /** The union of what was granted before and now, in canonical order. Runs inside a write job. */
  private rememberConsent(userId: string, clientId: string, scopes: readonly string[], order: readonly string[], now: number): void {
    const row = this.db.orm
      .select({ scope: consents.scope })
      .from(consents)
      .where(and(eq(consents.userId, userId), eq(consents.clientId, clientId)))
      .get()
    const all = new Set([...(row ? row.scope.split(' ') : []), ...scopes])
    const scope = order.filter((s) => all.has(s)).join(' ')
    this.db.orm
      .insert(consents)
      .values({ userId, clientId, scope, createdAt: now, updatedAt: now })
      .onConflictDoUpdate({ target: [consents.userId, consents.clientId], set: { scope, updatedAt: now } })
      .run()
  }

  revokeAccess(userId: string, clientId: string): Promise<boolean> {
    return this.ctx.write(() => {
      const mine = (t: typeof consents | typeof accessTokens | typeof authCodes) => and(eq(t.userId, userId), eq(t.clientId, clientId))
      const removed = changes(this.db.orm.delete(consents).where(mine(consents)).run())
      const revoked = changes(this.db.orm.delete(accessTokens).where(mine(accessTokens)).run())
      this.db.orm.delete(refreshTokens).where(and(eq(refreshTokens.userId, userId), eq(refreshTokens.clientId, clientId))).run()
      this.db.orm.delete(authCodes).where(mine(authCodes)).run()
      return removed + revoked > 0
    })
  }

  exchangeCode(
    codeHash: string,
    now: number,
    check: (code: CodeRecord) => string | undefined,
    issue: (code: CodeRecord) => IssuedTokens,
  ): Promise<ExchangeOutcome> {
    return this.ctx.write((): ExchangeOutcome => {
      const code = prepared(this.db, 'codeByHash', () =>
        this.db.orm.select().from(authCodes).where(eq(authCodes.codeHash, p('codeHash'))).prepare(),
      ).get({ codeHash })
      if (!code) return { ok: false, reason: 'unknown' }
      if (code.usedAt !== null) {
        if (code.familyId !== null) this.deleteFamily(code.familyId)
        else if (code.tokenId !== null) this.db.orm.delete(accessTokens).where(eq(accessTokens.id, code.tokenId)).run()
        return { ok: false, reason: 'used' }
      }
      const refused = check(code)
      if (refused) return { ok: false, reason: 'refused', description: refused }
      const tokens = issue(code)
      const tokenId = this.insertToken(tokens.access)
      const refreshId = this.insertRefreshToken(tokens.refresh)
      // The single writer saw used_at empty above, so this cannot fail; if it ever did, throwing
      // rolls the job (and the tokens) back.
      const used = prepared(this.db, 'useCode', () =>
        this.db.orm
          .update(authCodes)
          .set({ usedAt: p('now') as unknown as number, tokenId: p('tokenId') as unknown as number, familyId: p('familyId') as unknown as string })
          .where(and(eq(authCodes.codeHash, p('codeHash')), isNull(authCodes.usedAt)))
          .prepare(),
      ).run({ codeHash, now, tokenId, familyId: tokens.access.familyId })
      if (changes(used) !== 1) throw new Error('authorization code changed during its exchange')
      this.noteUse(code.userId, code.clientId, now)
      return { ok: true, tokenId, refreshId }
    })
  }

  refresh(id: number, now: number, decide: (token: RefreshRecord) => RefreshDecision): Promise<RefreshOutcome> {
    return this.ctx.write((): RefreshOutcome => {
      const token = this.readRefreshToken(id)
      if (!token) return { ok: false, error: 'invalid_grant', description: 'refresh token is invalid, expired or revoked' }
      const decision = decide(token)
      if ('refuse' in decision) return { ok: false, ...decision.refuse }
      if ('revokeFamily' in decision) {
        this.deleteFamily(token.familyId)
        return { ok: false, error: 'invalid_grant', description: decision.revokeFamily, familyRevoked: true }
      }
      if (decision.markRotated)
        prepared(this.db, 'rotateRefresh', () =>
          this.db.orm
            .update(refreshTokens)
            .set({ rotatedAt: p('now') as unknown as number })
            .where(eq(refreshTokens.id, p('id')))
            .prepare(),
        ).run({ id, now })
      const tokenId = this.insertToken(decision.issue.access)
      const refreshId = this.insertRefreshToken(decision.issue.refresh)
      this.noteUse(token.userId, token.clientId, now)
      return { ok: true, tokenId, refreshId }
    })
  }

  async findRefreshToken(id: number): Promise<RefreshRecord | undefined> {
    return this.readRefreshToken(id)
  }

  revokeFamily(familyId: string): Promise<boolean> {
    return this.ctx.write(() => this.deleteFamily(familyId))
  }

  private readRefreshToken(id: number): RefreshRecord | undefined {
    return prepared(this.db, 'refreshById', () => this.db.orm.select().from(refreshTokens).where(eq(refreshTokens.id, p('id'))).prepare()).get({ id })
  }

  private deleteFamily(familyId: string): boolean {
    const access = changes(this.db.orm.delete(accessTokens).where(eq(accessTokens.familyId, familyId)).run())
    const refresh = changes(this.db.orm.delete(refreshTokens).where(eq(refreshTokens.familyId, familyId)).run())
    return access + refresh > 0
  }

  /** The account page's "last used" of the app. */
  private noteUse(userId: string, clientId: string, now: number): void {
    prepared(this.db, 'noteUse', () =>
      this.db.orm
        .update(consents)
        .set({ lastUsedAt: p('now') as unknown as number })
        .where(and(eq(consents.userId, p('userId')), eq(consents.clientId, p('clientId'))))
        .prepare(),
    ).run({ userId, clientId, now })
  }

  private insertRefreshToken(token: NewRefreshToken): number {
    const insert = prepared(this.db, 'insertRefreshToken', () =>
      this.db.orm
        .insert(refreshTokens)
        .values({ ...tokenColumns, authTime: p('authTime') })
        .prepare(),
    )
    return insertedId(insert.run({ ...token }))
  }

  private insertToken(token: NewToken): number {
    const insert = prepared(this.db, 'insertToken', () => this.db.orm.insert(accessTokens).values(tokenColumns).prepare())
    return insertedId(insert.run({ ...token }))
  }
}
