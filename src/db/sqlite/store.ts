import { and, asc, desc, eq, gt, isNull, lt, sql } from 'drizzle-orm'
import type {
  AuthorizedApp,
  ClientRecord,
  CodeRecord,
  ExchangeOutcome,
  IssuedTokens,
  NewCode,
  NewRefreshToken,
  NewToken,
  RefreshDecision,
  RefreshOutcome,
  RefreshRecord,
  NewUser,
  SessionRecord,
  SettingsUsage,
  SigningKeyRecord,
  Store,
  StoredSetting,
  ThrottleRow,
  TokenRecord,
  UserRecord,
} from '../store'
import { StoreRefusal, UniqueViolation } from '../store'
import { ExternalWrites } from './change-feed'
import { Checkpointer } from './checkpointer'
import { changes, createDatabaseFile, insertedId, openDb, type Db } from './client'
import { migrate } from './migrate'
import { prepared } from './prepared'
import { accessTokens, authCodes, clients, consents, loginThrottle, refreshTokens, serverSecrets, sessions, settingCounts, settings, signingKeys, users } from './schema'
import { Writer } from './writer'

const p = (name: string) => sql.placeholder(name)
const toUser = (row: typeof users.$inferSelect): UserRecord => ({
  id: row.id,
  email: row.email,
  fullName: row.fullName,
  avatarUrl: row.avatarUrl,
  emailVerified: row.emailVerified,
})
const toClient = (row: typeof clients.$inferSelect): ClientRecord => ({
  id: row.id,
  name: row.name,
  secretHash: row.secretHash,
  redirectUris: row.redirectUris,
  postLogoutRedirectUris: row.postLogoutRedirectUris,
  skipConsent: row.skipConsent,
})

/** SQLite's unique-constraint failure, as the port's error. */
function unique<T>(fn: () => T): T {
  try {
    return fn()
  } catch (error) {
    const e = error as { code?: string; message?: string }
    if (e.code === 'SQLITE_CONSTRAINT_UNIQUE' || e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY') throw new UniqueViolation(e.message ?? '')
    throw error
  }
}

/**
 * The store on one SQLite file (the embedded default). Reads run at once on the connection;
 * every write is a job of the group-commit Writer, so writes that arrive together share one
 * COMMIT (one fsync) and run one at a time — which is what makes each operation atomic here.
 * Jobs are synchronous: nothing else runs on the connection while a batch is open.
 */
export class SqliteStore implements Store {
  readonly engine = 'sqlite' as const
  readonly changes: ExternalWrites
  readonly writer: Writer

  private checkpointer?: Checkpointer

  constructor(readonly db: Db) {
    this.changes = new ExternalWrites(db.sqlite)
    this.writer = new Writer(db.sqlite)
  }

  /** Opens (creating, 0600) and migrates the file; `:memory:` for tests. A file gets its checkpointer. */
  static async open(path: string): Promise<{ store: SqliteStore; applied: string[] }> {
    await createDatabaseFile(path)
    const db = openDb(path)
    const { applied } = migrate(db.sqlite)
    const store = new SqliteStore(db)
    if (path !== ':memory:')
      // Rare enough that the store has no logger for it: one JSON line on stderr.
      store.checkpointer = new Checkpointer(db.sqlite, path, store.writer, (message) =>
        console.error(JSON.stringify({ time: new Date().toISOString(), level: 'warn', msg: 'checkpointer failed; the serving connection checkpoints again', error: message })),
      )
    return { store, applied }
  }

  private write<T>(fn: () => T): Promise<T> {
    return this.writer.write(fn)
  }

  async ping(): Promise<void> {
    this.db.sqlite.query('SELECT 1').get()
  }

  async close(): Promise<void> {
    this.writer.flush()
    await this.checkpointer?.stop()
    if (this.db.path !== ':memory:') this.db.sqlite.run('PRAGMA wal_checkpoint(TRUNCATE)')
    this.db.sqlite.close()
  }

  // users

  insertUser(user: NewUser, now: number): Promise<void> {
    return this.write(() => void unique(() => this.db.orm.insert(users).values({ ...user, createdAt: now }).run()))
  }

  async findUser(id: string): Promise<UserRecord | undefined> {
    const row = prepared(this.db, 'userById', () => this.db.orm.select().from(users).where(eq(users.id, p('id'))).prepare()).get({ id })
    return row && toUser(row)
  }

  async findUserByEmail(email: string) {
    const row = prepared(this.db, 'userByEmail', () => this.db.orm.select().from(users).where(eq(users.email, p('email'))).prepare()).get({ email })
    return row && { ...toUser(row), passwordHash: row.passwordHash }
  }

  async listUsers(): Promise<UserRecord[]> {
    return this.db.orm.select().from(users).orderBy(users.createdAt, users.id).all().map(toUser)
  }

  deleteUser(id: string): Promise<boolean> {
    return this.write(() => changes(this.db.orm.delete(users).where(eq(users.id, id)).run()) > 0)
  }

  // clients

  insertClient(client: ClientRecord, now: number): Promise<void> {
    return this.write(() => void unique(() => this.db.orm.insert(clients).values({ ...client, createdAt: now }).run()))
  }

  async findClient(id: string): Promise<ClientRecord | undefined> {
    const row = prepared(this.db, 'clientById', () => this.db.orm.select().from(clients).where(eq(clients.id, p('id'))).prepare()).get({ id })
    return row && toClient(row)
  }

  async listClients(): Promise<ClientRecord[]> {
    return this.db.orm.select().from(clients).orderBy(clients.createdAt, clients.id).all().map(toClient)
  }

  deleteClient(id: string): Promise<boolean> {
    return this.write(() => changes(this.db.orm.delete(clients).where(eq(clients.id, id)).run()) > 0)
  }

  setClientSecret(id: string, secretHash: string): Promise<boolean> {
    return this.write(
      () => changes(this.db.orm.update(clients).set({ secretHash }).where(and(eq(clients.id, id), sql`${clients.secretHash} IS NOT NULL`)).run()) > 0,
    )
  }

  // sessions

  createSession(idHash: string, userId: string, expiresAt: number, authTime: number, replacing?: string): Promise<void> {
    return this.write(() => {
      if (replacing) this.db.orm.delete(sessions).where(eq(sessions.idHash, replacing)).run()
      this.db.orm.insert(sessions).values({ idHash, userId, expiresAt, authTime }).run()
    })
  }

  async findSession(idHash: string, now: number): Promise<SessionRecord | undefined> {
    const row = prepared(this.db, 'sessionByHash', () =>
      this.db.orm
        .select({ user: users, authTime: sessions.authTime })
        .from(sessions)
        .innerJoin(users, eq(users.id, sessions.userId))
        .where(and(eq(sessions.idHash, p('hash')), gt(sessions.expiresAt, p('now'))))
        .prepare(),
    ).get({ hash: idHash, now })
    return row && { user: toUser(row.user), authTime: row.authTime }
  }

  deleteSession(idHash: string): Promise<void> {
    return this.write(() => void this.db.orm.delete(sessions).where(eq(sessions.idHash, idHash)).run())
  }

  deleteSessionsOf(userId: string): Promise<void> {
    return this.write(() => void this.db.orm.delete(sessions).where(eq(sessions.userId, userId)).run())
  }

  // consent and codes

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
    return this.write(() => {
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
    return this.write(() => {
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
    return this.write((): ExchangeOutcome => {
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
    return this.write((): RefreshOutcome => {
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
    return this.write(() => this.deleteFamily(familyId))
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

  /** The columns access and refresh tokens share, as placeholders for a prepared INSERT. */
  private static readonly tokenColumns = {
    verifierHash: p('verifierHash'),
    familyId: p('familyId'),
    clientId: p('clientId'),
    userId: p('userId'),
    scope: p('scope'),
    expiresAt: p('expiresAt'),
    createdAt: p('createdAt'),
  }

  private insertRefreshToken(token: NewRefreshToken): number {
    const insert = prepared(this.db, 'insertRefreshToken', () =>
      this.db.orm
        .insert(refreshTokens)
        .values({ ...SqliteStore.tokenColumns, authTime: p('authTime') })
        .prepare(),
    )
    return insertedId(insert.run({ ...token }))
  }

  private insertToken(token: NewToken): number {
    const insert = prepared(this.db, 'insertToken', () => this.db.orm.insert(accessTokens).values(SqliteStore.tokenColumns).prepare())
    return insertedId(insert.run({ ...token }))
  }

  // access tokens

  /**
   * Two lookups by key, straight through bun:sqlite: the hot miss path of token validation. As
   * one JOIN the same read took 12.5 µs against 4.2 + 1.5 µs apart (1M tokens; SQLite plans
   * the join with more machinery than two point lookups need), and Drizzle's row mapping added
   * ~3 µs more (`bun run bench -- --scale`, distinct tokens). Synchronous, as every read on
   * the serving connection is: the caller skips a promise per miss.
   */
  findToken(id: number, knownUser?: (userId: string) => UserRecord | undefined): TokenRecord | undefined {
    const token = prepared(this.db, 'tokenById', () =>
      this.db.sqlite.prepare<{ id: number; verifierHash: string; clientId: string; userId: string; scope: string; expiresAt: number; createdAt: number }, [number]>(
        'SELECT id, verifier_hash AS verifierHash, client_id AS clientId, user_id AS userId, scope, expires_at AS expiresAt, created_at AS createdAt FROM access_tokens WHERE id = ?',
      ),
    ).get(id)
    if (!token) return undefined
    const user = knownUser?.(token.userId) ?? this.tokenUser(token.userId)
    // Deleting a user deletes its tokens: a token whose user is gone is as good as gone.
    if (!user) return undefined
    return { id: token.id, verifierHash: token.verifierHash, clientId: token.clientId, scope: token.scope, expiresAt: token.expiresAt, createdAt: token.createdAt, user }
  }

  private tokenUser(userId: string): UserRecord | undefined {
    const user = prepared(this.db, 'tokenUser', () =>
      this.db.sqlite.prepare<{ id: string; email: string; fullName: string; avatarUrl: string | null; emailVerified: number }, [string]>(
        'SELECT id, email, full_name AS fullName, avatar_url AS avatarUrl, email_verified AS emailVerified FROM users WHERE id = ?',
      ),
    ).get(userId)
    if (!user) return undefined
    return { id: user.id, email: user.email, fullName: user.fullName, avatarUrl: user.avatarUrl, emailVerified: user.emailVerified !== 0 }
  }

  deleteToken(id: number): Promise<boolean> {
    return this.write(() => changes(this.db.orm.delete(accessTokens).where(eq(accessTokens.id, id)).run()) > 0)
  }

  // settings

  async listSettings(userId: string, clientId: string): Promise<StoredSetting[]> {
    // Raw rows (`values`) skip Drizzle's per-row object mapping on this hot path.
    const rows = prepared(this.db, 'settingsList', () =>
      this.db.orm
        .select({ key: settings.key, value: settings.value, updatedAt: settings.updatedAt })
        .from(settings)
        .where(and(eq(settings.userId, p('userId')), eq(settings.clientId, p('clientId'))))
        .orderBy(asc(settings.key))
        .prepare(),
    ).values({ userId, clientId }) as unknown as Array<[string, string, number]>
    return rows.map(([key, value, updatedAt]) => ({ key, value, updatedAt }))
  }

  async getSetting(userId: string, clientId: string, key: string): Promise<StoredSetting | undefined> {
    return this.readSetting(userId, clientId, key)
  }

  private readSetting(userId: string, clientId: string, key: string): StoredSetting | undefined {
    return prepared(this.db, 'settingsGet', () =>
      this.db.orm
        .select({ key: settings.key, value: settings.value, updatedAt: settings.updatedAt })
        .from(settings)
        .where(and(eq(settings.userId, p('userId')), eq(settings.clientId, p('clientId')), eq(settings.key, p('key'))))
        .prepare(),
    ).get({ userId, clientId, key })
  }

  /** Keys in this app and bytes in all of them, from the rows the triggers keep (drizzle/sqlite/0002, 0004). */
  private usage(userId: string, clientId: string): SettingsUsage {
    const row = prepared(this.db, 'settingsUsage', () =>
      this.db.orm
        .select({
          keys: sql<number>`coalesce(sum(CASE WHEN ${settingCounts.clientId} = ${p('clientId')} THEN ${settingCounts.n} END), 0)`,
          bytes: sql<number>`coalesce(sum(${settingCounts.bytes}), 0)`,
        })
        .from(settingCounts)
        .where(eq(settingCounts.userId, p('userId')))
        .prepare(),
    ).get({ userId, clientId })
    return row ?? { keys: 0, bytes: 0 }
  }

  saveSetting(
    userId: string,
    clientId: string,
    key: string,
    value: string,
    decide: (current: StoredSetting | undefined, usage: SettingsUsage) => number,
  ): Promise<StoredSetting> {
    return this.write(() => {
      const current = this.readSetting(userId, clientId, key)
      // Usage is read only if asked for: most writes replace a value with one no larger.
      let cached: SettingsUsage | undefined
      const usage = () => (cached ??= this.usage(userId, clientId))
      const updatedAt = decide(current, {
        get keys() {
          return usage().keys
        },
        get bytes() {
          return usage().bytes
        },
      })
      prepared(this.db, 'settingsUpsert', () =>
        this.db.orm
          .insert(settings)
          .values({ userId: p('userId'), clientId: p('clientId'), key: p('key'), value: p('value'), updatedAt: p('updatedAt') })
          .onConflictDoUpdate({
            target: [settings.userId, settings.clientId, settings.key],
            set: { value: sql`excluded.value`, updatedAt: sql`excluded.updated_at` },
          })
          .prepare(),
      ).run({ userId, clientId, key, value, updatedAt })
      return { key, value, updatedAt }
    })
  }

  deleteSetting(userId: string, clientId: string, key: string, check: (current: StoredSetting | undefined) => void): Promise<boolean> {
    return this.write(() => {
      const current = this.readSetting(userId, clientId, key)
      check(current)
      if (!current) return false
      const deleted = prepared(this.db, 'settingsDelete', () =>
        this.db.orm
          .delete(settings)
          .where(and(eq(settings.userId, p('userId')), eq(settings.clientId, p('clientId')), eq(settings.key, p('key'))))
          .prepare(),
      ).run({ userId, clientId, key })
      return changes(deleted) > 0
    })
  }

  // the sign-in throttle

  updateThrottle<T>(key: string, decide: (row: ThrottleRow | undefined) => { row: ThrottleRow | null; result: T }): Promise<T> {
    return this.write(() => {
      const row: ThrottleRow | undefined = this.db.orm
        .select({ count: loginThrottle.count, startedAt: loginThrottle.startedAt, lastAt: loginThrottle.lastAt })
        .from(loginThrottle)
        .where(eq(loginThrottle.key, key))
        .get()
      const next = decide(row)
      if (next.row === row) return next.result
      if (next.row === null) {
        if (row) this.db.orm.delete(loginThrottle).where(eq(loginThrottle.key, key)).run()
      } else {
        this.db.orm
          .insert(loginThrottle)
          .values({ key, ...next.row })
          .onConflictDoUpdate({ target: loginThrottle.key, set: next.row })
          .run()
      }
      return next.result
    })
  }

  // ID-token signing keys

  async listSigningKeys(): Promise<SigningKeyRecord[]> {
    return this.db.orm.select().from(signingKeys).orderBy(desc(signingKeys.createdAt), desc(signingKeys.kid)).all()
  }

  rotateSigningKey(key: SigningKeyRecord): Promise<void> {
    return this.write(() => {
      this.db.orm.update(signingKeys).set({ retiredAt: key.createdAt }).where(isNull(signingKeys.retiredAt)).run()
      this.db.orm.insert(signingKeys).values(key).run()
    })
  }

  ensureSigningKey(key: SigningKeyRecord): Promise<void> {
    return this.write(() => {
      if (!this.db.orm.select({ kid: signingKeys.kid }).from(signingKeys).limit(1).get()) this.db.orm.insert(signingKeys).values(key).run()
    })
  }

  // server secrets and upkeep

  serverSecret(name: string, make: () => string, now: number): Promise<string> {
    return this.write(() => {
      this.db.orm.insert(serverSecrets).values({ name, value: make(), createdAt: now }).onConflictDoNothing().run()
      return this.db.orm.select({ value: serverSecrets.value }).from(serverSecrets).where(eq(serverSecrets.name, name)).get()!.value
    })
  }

  async backupTo(path: string, shownAs: string): Promise<void> {
    claimBackupFile(path, shownAs)
    try {
      // VACUUM INTO fills an empty file: the one just created, 0600.
      this.db.sqlite.query('VACUUM INTO ?').run(path)
    } catch (error) {
      ;(require('node:fs') as typeof import('node:fs')).rmSync(path, { force: true })
      throw error
    }
  }

  purgeExpired(now: number, keepUsedCodesMs: number, throttleForgetMs: number): Promise<number> {
    return this.write(() => {
      let removed = 0
      removed += changes(this.db.orm.delete(accessTokens).where(lt(accessTokens.expiresAt, now)).run())
      removed += changes(this.db.orm.delete(sessions).where(lt(sessions.expiresAt, now)).run())
      removed += changes(this.db.orm.delete(authCodes).where(lt(authCodes.expiresAt, now - keepUsedCodesMs)).run())
      removed += changes(this.db.orm.delete(loginThrottle).where(lt(loginThrottle.lastAt, now - throttleForgetMs)).run())
      removed += changes(this.db.orm.delete(refreshTokens).where(lt(refreshTokens.expiresAt, now)).run())
      return removed
    })
  }
}

/**
 * Claims the backup file: created here, mode 0600, failing if anything — a file, a directory or
 * a symlink, dangling or not — is already at that path (O_CREAT|O_EXCL never follows a link).
 */
function claimBackupFile(path: string, shown: string): void {
  const fs = require('node:fs') as typeof import('node:fs')
  try {
    fs.closeSync(fs.openSync(path, 'wx', 0o600))
  } catch (error) {
    const code = (error as { code?: string }).code
    if (code === 'EEXIST') throw new StoreRefusal(`"${shown}" already exists (or is a link); choose a new file`)
    throw new StoreRefusal(`cannot create "${shown}": ${code ?? 'error'}`)
  }
}
