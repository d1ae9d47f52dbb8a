import type { SQL } from 'bun'
import { and, asc, eq, gt, isNull, lt, sql } from 'drizzle-orm'
import { drizzle } from 'drizzle-orm/bun-sql'
import type {
  AuthorizedApp,
  ClientRecord,
  CodeRecord,
  ExchangeOutcome,
  NewCode,
  NewToken,
  NewUser,
  SettingsUsage,
  Store,
  StoredSetting,
  ThrottleRow,
  TokenRecord,
  UserRecord,
} from '../store'
import { DatabaseUnavailable, StoreRefusal, UniqueViolation } from '../store'
import { PgChangeFeed } from './change-feed'
import { connect } from './connect'
import { migrate } from './migrate'
import * as schema from './schema'

const { accessTokens, authCodes, clients, consents, loginThrottle, serverSecrets, sessions, settingCounts, settings, users } = schema

type Db = ReturnType<typeof drizzle<typeof schema>>
type Tx = Parameters<Parameters<Db['transaction']>[0]>[0]

const toUser = (row: typeof users.$inferSelect): UserRecord => ({ id: row.id, email: row.email, fullName: row.fullName, avatarUrl: row.avatarUrl })
const toClient = (row: typeof clients.$inferSelect): ClientRecord => ({
  id: row.id,
  name: row.name,
  secretHash: row.secretHash,
  redirectUris: row.redirectUris,
  skipConsent: row.skipConsent,
})

/** Errors as the port names them: a unique violation, or a database out of reach (SQLSTATE 08…, 57P…). */
function portError(error: unknown): unknown {
  let e = error as { code?: string; errno?: string; cause?: unknown } | undefined
  for (let i = 0; i < 3 && e && !e.errno && e.cause; i++) e = e.cause as typeof e
  const code = e?.code ?? ''
  const state = e?.errno ?? ''
  if (state === '23505') return new UniqueViolation(String((e as { constraint?: string }).constraint ?? ''))
  if (/CONNECTION|ECONN|TIMEOUT|ENOTFOUND|EHOSTUNREACH|EPIPE/.test(code) || state.startsWith('08') || state.startsWith('57P'))
    return new DatabaseUnavailable(error)
  return error
}

/** A transaction-scoped advisory lock on a name: writers of one user's settings, one consent, one throttle row queue on it. */
function lock(tx: Tx, name: string) {
  return tx.execute(sql`SELECT pg_advisory_xact_lock(hashtextextended(${name}, 0))`)
}

/**
 * The store on PostgreSQL, for several instances behind a load balancer. Every operation is
 * one statement or one transaction; read-check-write operations lock what they decide on
 * (SELECT … FOR UPDATE, or an advisory lock when the row may not exist yet), so they hold when
 * instances run them at the same moment.
 */
export class PgStore implements Store {
  readonly engine = 'postgres' as const
  readonly changes: PgChangeFeed

  private constructor(
    /** The connection pool (tests run assertions on it). */
    readonly client: SQL,
    private readonly db: Db,
    url: string,
  ) {
    this.changes = new PgChangeFeed(url)
  }

  /**
   * Connects, migrates (once, under an advisory lock) and starts listening for changes. An
   * unreachable database fails fast with DatabaseUnavailable. `searchPath` gives tests a schema each.
   */
  static async open(
    url: string,
    poolSize: number,
    opts: { searchPath?: string; idleTimeout?: number } = {},
  ): Promise<{ store: PgStore; applied: string[] }> {
    const client = connect(url, {
      max: poolSize,
      connectionTimeout: 2,
      idleTimeout: opts.idleTimeout ?? 30,
      ...(opts.searchPath ? { connection: { search_path: opts.searchPath } } : {}),
    })
    const store = new PgStore(client, drizzle({ client, schema }), url)
    try {
      const applied = await migrate(client)
      await store.changes.start()
      return { store, applied }
    } catch (error) {
      await store.close()
      throw portError(error)
    }
  }

  /** Every operation: errors mapped to the port's. */
  private async run<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn()
    } catch (error) {
      throw portError(error)
    }
  }

  private tx<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.run(() => this.db.transaction(fn))
  }

  ping(): Promise<void> {
    return this.run(async () => void (await this.client`SELECT 1`))
  }

  async close(): Promise<void> {
    await this.changes.stop().catch(() => {})
    await this.client.close().catch(() => {})
  }

  // users

  insertUser(user: NewUser, now: number): Promise<void> {
    return this.run(async () => void (await this.db.insert(users).values({ ...user, createdAt: now })))
  }

  findUser(id: string): Promise<UserRecord | undefined> {
    return this.run(async () => {
      const [row] = await this.db.select().from(users).where(eq(users.id, id))
      return row && toUser(row)
    })
  }

  findUserByEmail(email: string) {
    return this.run(async () => {
      const [row] = await this.db.select().from(users).where(eq(users.email, email))
      return row && { ...toUser(row), passwordHash: row.passwordHash }
    })
  }

  listUsers(): Promise<UserRecord[]> {
    return this.run(async () => (await this.db.select().from(users).orderBy(users.createdAt, users.id)).map(toUser))
  }

  deleteUser(id: string): Promise<boolean> {
    return this.run(async () => (await this.db.delete(users).where(eq(users.id, id)).returning({ id: users.id })).length > 0)
  }

  // clients

  insertClient(client: ClientRecord, now: number): Promise<void> {
    return this.run(async () => void (await this.db.insert(clients).values({ ...client, createdAt: now })))
  }

  findClient(id: string): Promise<ClientRecord | undefined> {
    return this.run(async () => {
      const [row] = await this.db.select().from(clients).where(eq(clients.id, id))
      return row && toClient(row)
    })
  }

  listClients(): Promise<ClientRecord[]> {
    return this.run(async () => (await this.db.select().from(clients).orderBy(clients.createdAt, clients.id)).map(toClient))
  }

  deleteClient(id: string): Promise<boolean> {
    return this.run(async () => (await this.db.delete(clients).where(eq(clients.id, id)).returning({ id: clients.id })).length > 0)
  }

  setClientSecret(id: string, secretHash: string): Promise<boolean> {
    return this.run(
      async () =>
        (await this.db
          .update(clients)
          .set({ secretHash })
          .where(and(eq(clients.id, id), sql`${clients.secretHash} IS NOT NULL`))
          .returning({ id: clients.id })).length > 0,
    )
  }

  // sessions

  createSession(idHash: string, userId: string, expiresAt: number, replacing?: string): Promise<void> {
    return this.tx(async (tx) => {
      if (replacing) await tx.delete(sessions).where(eq(sessions.idHash, replacing))
      await tx.insert(sessions).values({ idHash, userId, expiresAt })
    })
  }

  findSessionUser(idHash: string, now: number): Promise<UserRecord | undefined> {
    return this.run(async () => {
      const [row] = await this.db
        .select({ user: users })
        .from(sessions)
        .innerJoin(users, eq(users.id, sessions.userId))
        .where(and(eq(sessions.idHash, idHash), gt(sessions.expiresAt, now)))
      return row && toUser(row.user)
    })
  }

  deleteSession(idHash: string): Promise<void> {
    return this.run(async () => void (await this.db.delete(sessions).where(eq(sessions.idHash, idHash))))
  }

  deleteSessionsOf(userId: string): Promise<void> {
    return this.run(async () => void (await this.db.delete(sessions).where(eq(sessions.userId, userId))))
  }

  // consent and codes

  grantedScope(userId: string, clientId: string): Promise<string[]> {
    return this.run(async () => {
      const [row] = await this.db
        .select({ scope: consents.scope })
        .from(consents)
        .where(and(eq(consents.userId, userId), eq(consents.clientId, clientId)))
      return row ? row.scope.split(' ') : []
    })
  }

  listAuthorizedApps(userId: string): Promise<AuthorizedApp[]> {
    return this.run(async () =>
      (
        await this.db
          .select({ clientId: consents.clientId, name: clients.name, scope: consents.scope, grantedAt: consents.updatedAt })
          .from(consents)
          .innerJoin(clients, eq(clients.id, consents.clientId))
          .where(eq(consents.userId, userId))
          .orderBy(clients.name)
      ).map((r) => ({ clientId: r.clientId, name: r.name, scopes: r.scope.split(' '), grantedAt: r.grantedAt })),
    )
  }

  issueCode(code: NewCode, remember: { scopes: readonly string[]; canonicalOrder: readonly string[]; now: number } | undefined): Promise<void> {
    return this.tx(async (tx) => {
      if (remember) {
        // Two consents for one user and app at once must both count: the union is taken under a lock.
        await lock(tx, `consent:${code.userId}:${code.clientId}`)
        const [row] = await tx
          .select({ scope: consents.scope })
          .from(consents)
          .where(and(eq(consents.userId, code.userId), eq(consents.clientId, code.clientId)))
        const all = new Set([...(row ? row.scope.split(' ') : []), ...remember.scopes])
        const scope = remember.canonicalOrder.filter((s) => all.has(s)).join(' ')
        await tx
          .insert(consents)
          .values({ userId: code.userId, clientId: code.clientId, scope, createdAt: remember.now, updatedAt: remember.now })
          .onConflictDoUpdate({ target: [consents.userId, consents.clientId], set: { scope, updatedAt: remember.now } })
      }
      await tx.insert(authCodes).values(code)
    })
  }

  revokeAccess(userId: string, clientId: string): Promise<boolean> {
    return this.tx(async (tx) => {
      const removed = await tx
        .delete(consents)
        .where(and(eq(consents.userId, userId), eq(consents.clientId, clientId)))
        .returning({ userId: consents.userId })
      const revoked = await tx
        .delete(accessTokens)
        .where(and(eq(accessTokens.userId, userId), eq(accessTokens.clientId, clientId)))
        .returning({ id: accessTokens.id })
      await tx.delete(authCodes).where(and(eq(authCodes.userId, userId), eq(authCodes.clientId, clientId)))
      return removed.length + revoked.length > 0
    })
  }

  exchangeCode(
    codeHash: string,
    now: number,
    check: (code: CodeRecord) => string | undefined,
    token: (code: CodeRecord) => NewToken,
  ): Promise<ExchangeOutcome> {
    return this.tx(async (tx): Promise<ExchangeOutcome> => {
      // The row lock makes a second exchange of the same code, on any instance, wait for the
      // first and then see it used.
      const [code] = await tx.select().from(authCodes).where(eq(authCodes.codeHash, codeHash)).for('update')
      if (!code) return { ok: false, reason: 'unknown' }
      if (code.usedAt !== null) {
        // §4.1.2: the replay revokes what the code issued; this commits although the request fails.
        if (code.tokenId !== null) await tx.delete(accessTokens).where(eq(accessTokens.id, code.tokenId))
        return { ok: false, reason: 'used' }
      }
      const refused = check(code)
      if (refused) return { ok: false, reason: 'refused', description: refused }
      const [inserted] = await tx.insert(accessTokens).values(token(code)).returning({ id: accessTokens.id })
      await tx
        .update(authCodes)
        .set({ usedAt: now, tokenId: inserted!.id })
        .where(and(eq(authCodes.codeHash, codeHash), isNull(authCodes.usedAt)))
      return { ok: true, tokenId: inserted!.id }
    })
  }

  // access tokens

  findToken(id: number): Promise<TokenRecord | undefined> {
    return this.run(async () => {
      const [row] = await this.db
        .select({
          id: accessTokens.id,
          verifierHash: accessTokens.verifierHash,
          clientId: accessTokens.clientId,
          scope: accessTokens.scope,
          expiresAt: accessTokens.expiresAt,
          user: { id: users.id, email: users.email, fullName: users.fullName, avatarUrl: users.avatarUrl },
        })
        .from(accessTokens)
        .innerJoin(users, eq(users.id, accessTokens.userId))
        .where(eq(accessTokens.id, id))
      return row
    })
  }

  deleteToken(id: number): Promise<boolean> {
    return this.run(async () => (await this.db.delete(accessTokens).where(eq(accessTokens.id, id)).returning({ id: accessTokens.id })).length > 0)
  }

  // settings

  listSettings(userId: string, clientId: string): Promise<StoredSetting[]> {
    return this.run(() =>
      this.db
        .select({ key: settings.key, value: settings.value, updatedAt: settings.updatedAt })
        .from(settings)
        .where(and(eq(settings.userId, userId), eq(settings.clientId, clientId)))
        .orderBy(asc(settings.key)),
    )
  }

  getSetting(userId: string, clientId: string, key: string): Promise<StoredSetting | undefined> {
    return this.run(async () => (await this.readSetting(this.db, userId, clientId, key))[0])
  }

  private readSetting(db: Db | Tx, userId: string, clientId: string, key: string) {
    return db
      .select({ key: settings.key, value: settings.value, updatedAt: settings.updatedAt })
      .from(settings)
      .where(and(eq(settings.userId, userId), eq(settings.clientId, clientId), eq(settings.key, key)))
  }

  saveSetting(
    userId: string,
    clientId: string,
    key: string,
    value: string,
    decide: (current: StoredSetting | undefined, usage: SettingsUsage) => number,
  ): Promise<StoredSetting> {
    return this.tx(async (tx) => {
      // One writer per user at a time, on every instance: quotas span the user's applications.
      await lock(tx, `settings:${userId}`)
      const [current] = await this.readSetting(tx, userId, clientId, key)
      const [usage] = await tx
        .select({
          keys: sql<number>`coalesce(sum(CASE WHEN ${settingCounts.clientId} = ${clientId} THEN ${settingCounts.n} END), 0)::int`,
          bytes: sql<number>`coalesce(sum(${settingCounts.bytes}), 0)::int8`.mapWith(Number),
        })
        .from(settingCounts)
        .where(eq(settingCounts.userId, userId))
      const updatedAt = decide(current, usage ?? { keys: 0, bytes: 0 })
      await tx
        .insert(settings)
        .values({ userId, clientId, key, value, updatedAt })
        .onConflictDoUpdate({ target: [settings.userId, settings.clientId, settings.key], set: { value, updatedAt } })
      return { key, value, updatedAt }
    })
  }

  deleteSetting(userId: string, clientId: string, key: string, check: (current: StoredSetting | undefined) => void): Promise<boolean> {
    return this.tx(async (tx) => {
      await lock(tx, `settings:${userId}`)
      const [current] = await this.readSetting(tx, userId, clientId, key)
      check(current)
      if (!current) return false
      await tx.delete(settings).where(and(eq(settings.userId, userId), eq(settings.clientId, clientId), eq(settings.key, key)))
      return true
    })
  }

  // the sign-in throttle

  updateThrottle<T>(key: string, decide: (row: ThrottleRow | undefined) => { row: ThrottleRow | null; result: T }): Promise<T> {
    return this.tx(async (tx) => {
      await lock(tx, `throttle:${key}`)
      const [row] = await tx
        .select({ count: loginThrottle.count, startedAt: loginThrottle.startedAt, lastAt: loginThrottle.lastAt })
        .from(loginThrottle)
        .where(eq(loginThrottle.key, key))
      const next = decide(row)
      if (next.row === row) return next.result
      if (next.row === null) {
        if (row) await tx.delete(loginThrottle).where(eq(loginThrottle.key, key))
      } else {
        await tx.insert(loginThrottle).values({ key, ...next.row }).onConflictDoUpdate({ target: loginThrottle.key, set: next.row })
      }
      return next.result
    })
  }

  // server secrets and upkeep

  serverSecret(name: string, make: () => string, now: number): Promise<string> {
    return this.run(async () => {
      await this.db.insert(serverSecrets).values({ name, value: make(), createdAt: now }).onConflictDoNothing()
      const [row] = await this.db.select({ value: serverSecrets.value }).from(serverSecrets).where(eq(serverSecrets.name, name))
      return row!.value
    })
  }

  async backupTo(): Promise<void> {
    throw new StoreRefusal('backup copies a SQLite database; on PostgreSQL use pg_dump')
  }

  purgeExpired(now: number, keepUsedCodesMs: number, throttleForgetMs: number): Promise<number> {
    return this.run(async () => {
      const counted = async (q: Promise<unknown[]>) => (await q).length
      let removed = 0
      removed += await counted(this.db.delete(accessTokens).where(lt(accessTokens.expiresAt, now)).returning({ id: accessTokens.id }))
      removed += await counted(this.db.delete(sessions).where(lt(sessions.expiresAt, now)).returning({ id: sessions.idHash }))
      removed += await counted(this.db.delete(authCodes).where(lt(authCodes.expiresAt, now - keepUsedCodesMs)).returning({ id: authCodes.codeHash }))
      removed += await counted(this.db.delete(loginThrottle).where(lt(loginThrottle.lastAt, now - throttleForgetMs)).returning({ id: loginThrottle.key }))
      return removed
    })
  }
}
