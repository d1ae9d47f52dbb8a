import { eq, lt } from 'drizzle-orm'
import type { Change, PurgeWindows, Store, StoreCounts, StoreStats } from '../store'
import { DEVICES_PURGED_PER_RUN, StoreRefusal } from '../store'
import { SqliteChangeFeed } from './change-feed'
import { Checkpointer } from './checkpointer'
import { changes, createDatabaseFile, openDb, type Db } from './client'
import type { SqliteContext } from './context'
import { SqliteClients } from './clients'
import { SqliteGrants } from './grants'
import { SqliteKeys } from './keys'
import { SqliteMail } from './mail'
import { SqliteMfa } from './mfa'
import { SqliteResources } from './resources'
import { SqliteGroups } from './groups'
import { SqliteAudit } from './audit'
import { migrate } from './migrate'
import { accessTokens, loginThrottle, serverSecrets, sessions } from './schema'
import { SqliteSessions } from './sessions'
import { SqliteSettings } from './settings'
import { SqliteSites } from './sites'
import { SqliteProviders } from './providers'
import { SqliteThrottle } from './throttle'
import { SqliteTokens } from './tokens'
import { SqlitePushed } from './pushed'
import { SqliteDevices } from './devices'
import { SqliteUsers } from './users'
import { Writer } from './writer'

/** The server_secrets row holding the ISSUER the server last started with. */
const ISSUER = 'issuer'

/**
 * The store on one SQLite file (the embedded default). Reads run at once on the connection;
 * every write is a job of the group-commit Writer, so writes that arrive together share one
 * COMMIT (one fsync) and run one at a time — which is what makes each operation atomic here.
 * Jobs are synchronous: nothing else runs on the connection while a batch is open.
 * Each domain's queries live in a file of their own (users.ts, grants.ts, …).
 */
export class SqliteStore implements Store, SqliteContext {
  readonly engine = 'sqlite' as const
  readonly changes: SqliteChangeFeed
  readonly writer: Writer
  readonly users = new SqliteUsers(this)
  readonly clients = new SqliteClients(this)
  readonly sessions = new SqliteSessions(this)
  readonly grants = new SqliteGrants(this)
  readonly tokens = new SqliteTokens(this)
  readonly pushed = new SqlitePushed(this)
  readonly devices = new SqliteDevices(this)
  readonly settings = new SqliteSettings(this)
  readonly throttle = new SqliteThrottle(this)
  readonly keys = new SqliteKeys(this)
  readonly mfa = new SqliteMfa(this)
  readonly mail = new SqliteMail(this)
  readonly resources = new SqliteResources(this)
  readonly groups = new SqliteGroups(this)
  readonly audit = new SqliteAudit(this)
  readonly sites = new SqliteSites(this)
  readonly providers = new SqliteProviders(this)

  /** WAL checkpoints off the event loop (a file's server; none for `:memory:` and the CLI). */
  checkpointer?: Checkpointer

  get stats(): StoreStats {
    const { waiting, operations, seconds } = this.writer.stats
    return { inUse: waiting, size: 1, operations, seconds }
  }

  constructor(readonly db: Db) {
    this.changes = new SqliteChangeFeed(db.sqlite)
    this.writer = new Writer(db.sqlite, this.changes)
  }

  /**
   * Opens (creating, 0600) and migrates the file; `:memory:` for tests. A file gets its
   * checkpointer: `now`, or `later` — when `startUpkeep` is called: its worker takes the main
   * thread ~20 ms to start, so a server starts it once it listens — or `off`: a CLI command (a few
   * rows, then close's TRUNCATE checkpoint), whose time the worker's start and stop would be.
   */
  static async open(path: string, opts: { checkpointer?: 'now' | 'later' | 'off' } = {}): Promise<{ store: SqliteStore; applied: string[]; startUpkeep: () => void }> {
    await createDatabaseFile(path)
    const db = openDb(path)
    const { applied } = migrate(db.sqlite)
    const store = new SqliteStore(db)
    const startUpkeep = () => {
      if (path === ':memory:' || opts.checkpointer === 'off' || store.checkpointer) return
      // Rare enough that the store has no logger for it: one JSON line on stderr.
      store.checkpointer = new Checkpointer(db.sqlite, path, store.writer, (message) =>
        console.error(JSON.stringify({ time: new Date().toISOString(), level: 'warn', msg: 'checkpointer failed; the serving connection checkpoints again', error: message })),
      )
    }
    if (opts.checkpointer !== 'later') startUpkeep()
    return { store, applied, startUpkeep }
  }

  /**
   * Moves on with every writer batch and every store transaction (each begun and ended); odd, or
   * -1 in a store transaction, while this connection may be writing (ClientCache).
   */
  get writeEpoch(): number {
    return this.inTransaction ? -1 : this.writer.epoch + 2 * this.transactions
  }

  /** Inside a write job: what it changed, told to the caches once it committed. */
  emit(change: Change): void {
    this.changes.emit(change)
  }

  write<T>(fn: () => T): Promise<T> {
    if (!this.inTransaction) return this.writer.write(fn)
    try {
      return Promise.resolve(fn())
    } catch (error) {
      return Promise.reject(error)
    }
  }

  private inTransaction = false
  /** Store transactions ended (committed or rolled back). */
  private transactions = 0

  /** What was queued is written first; then one BEGIN IMMEDIATE … COMMIT around `fn`, its writes run as they come. */
  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    if (this.inTransaction) throw new Error('store transactions do not nest')
    await this.writer.write(() => undefined)
    this.db.sqlite.run('BEGIN IMMEDIATE')
    this.inTransaction = true
    try {
      const value = await fn()
      this.db.sqlite.run('COMMIT')
      this.changes.committed()
      return value
    } catch (error) {
      if (this.db.sqlite.inTransaction) this.db.sqlite.run('ROLLBACK')
      this.changes.rollbackTo(0)
      throw error
    } finally {
      this.inTransaction = false
      this.transactions++
    }
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

  // server secrets and upkeep

  serverSecret(name: string, make: () => string, now: number): Promise<string> {
    return this.write(() => {
      this.db.orm.insert(serverSecrets).values({ name, value: make(), createdAt: now }).onConflictDoNothing().run()
      return this.db.orm.select({ value: serverSecrets.value }).from(serverSecrets).where(eq(serverSecrets.name, name)).get()!.value
    })
  }

  recordIssuer(issuer: string, now: number): Promise<void> {
    return this.write(() => {
      this.db.orm.insert(serverSecrets).values({ name: ISSUER, value: issuer, createdAt: now }).onConflictDoUpdate({ target: serverSecrets.name, set: { value: issuer, createdAt: now } }).run()
    })
  }

  putServerValue(name: string, value: string, now: number): Promise<void> {
    return this.write(() => {
      this.db.orm.insert(serverSecrets).values({ name, value, createdAt: now }).onConflictDoUpdate({ target: serverSecrets.name, set: { value, createdAt: now } }).run()
    })
  }

  async serverValue(name: string): Promise<{ value: string; createdAt: number } | undefined> {
    return this.db.orm.select({ value: serverSecrets.value, createdAt: serverSecrets.createdAt }).from(serverSecrets).where(eq(serverSecrets.name, name)).get()
  }

  async recordedIssuer(): Promise<string | undefined> {
    return this.db.orm.select({ value: serverSecrets.value }).from(serverSecrets).where(eq(serverSecrets.name, ISSUER)).get()?.value
  }

  async counts(now: number): Promise<StoreCounts> {
    const row = this.db.sqlite
      .query(
        `SELECT (SELECT count(*) FROM users) AS users, (SELECT count(*) FROM clients) AS clients, (SELECT count(*) FROM groups) AS groups,
          (SELECT count(*) FROM sessions WHERE expires_at > ?1 AND pending = 0) AS activeSessions`,
      )
      .get(now) as StoreCounts
    return { users: row.users, clients: row.clients, groups: row.groups, activeSessions: row.activeSessions }
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

  purgeExpired(now: number, keep: PurgeWindows): Promise<number> {
    const run = (query: string, ...params: number[]) => this.db.sqlite.prepare<unknown, number[]>(query).run(...params).changes
    return this.write(() => {
      let removed = 0
      removed += changes(this.db.orm.delete(accessTokens).where(lt(accessTokens.expiresAt, now)).run())
      removed += run('DELETE FROM webauthn_challenges WHERE expires_at < ?1', now)
      removed += run('DELETE FROM email_tokens WHERE expires_at < ?1', now)
      removed += run('DELETE FROM registration_tokens WHERE expires_at < ?1', now)
      removed += run('DELETE FROM stream_tickets WHERE expires_at < ?1', now)
      removed += run('DELETE FROM pushed_requests WHERE expires_at < ?1', now)
      const devices = run('DELETE FROM device_codes WHERE expires_at < ?1', now)
      // The pending codes' cache lets go of them too (on PostgreSQL, drizzle/pg/0027's trigger tells it).
      if (devices > 0) this.emit({ devices: true })
      removed += devices
      removed += run('DELETE FROM used_assertions WHERE expires_at < ?1', now)
      removed += run('DELETE FROM provider_states WHERE expires_at < ?1', now)
      if (keep.audit !== undefined) removed += run('DELETE FROM audit_events WHERE at < ?1', now - keep.audit)
      removed += run('DELETE FROM mail_outbox WHERE sent_at < ?1 OR failed_at < ?1', now - keep.mail)
      removed += run('DELETE FROM logout_deliveries WHERE sent_at < ?1 OR failed_at < ?1', now - keep.mail)
      // A session that timed out sends no back-channel logout (its apps' rows go first, so the trigger finds none).
      const idleSince = keep.sessionIdle === undefined ? 0 : now - keep.sessionIdle
      run('DELETE FROM session_clients WHERE sid IN (SELECT sid FROM sessions WHERE expires_at < ?1 OR last_active_at <= ?2)', now, idleSince)
      removed += run('DELETE FROM sessions WHERE expires_at < ?1 OR last_active_at <= ?2', now, idleSince)
      removed += run('DELETE FROM site_sessions WHERE expires_at < ?1', now)
      removed += run('DELETE FROM site_codes WHERE expires_at < ?1', now)
      if (keep.devices !== undefined)
        removed += run('DELETE FROM user_devices WHERE rowid IN (SELECT rowid FROM user_devices WHERE created_at < ?1 LIMIT ?2)', now - keep.devices, DEVICES_PURGED_PER_RUN)
      removed += changes(this.db.orm.delete(loginThrottle).where(lt(loginThrottle.lastAt, now - keep.throttle)).run())
      // A family lives until the last of its tokens expires; rotated tokens only through the grace.
      removed += run('DELETE FROM refresh_tokens WHERE family_id IN (SELECT family_id FROM refresh_families WHERE expires_at < ?1)', now)
      removed += run('DELETE FROM refresh_families WHERE expires_at < ?1', now)
      removed += run('DELETE FROM refresh_tokens WHERE rotated_at < ?1', now - keep.refreshGrace)
      removed += run('DELETE FROM signing_keys WHERE retired_at < ?1', now - keep.retiredKeys)
      // Tombstones of settings deleted long ago: each (user, app) remembers through which revision they are gone (410 before it).
      run(
        `UPDATE setting_heads SET purged_through = max(purged_through, (SELECT max(t.revision) FROM setting_tombstones t
            WHERE t.user_id = setting_heads.user_id AND t.client_id = setting_heads.client_id AND t.deleted_at < ?1))
          WHERE EXISTS (SELECT 1 FROM setting_tombstones t WHERE t.user_id = setting_heads.user_id AND t.client_id = setting_heads.client_id AND t.deleted_at < ?1)`,
        now - keep.settingChanges,
      )
      removed += run('DELETE FROM setting_tombstones WHERE deleted_at < ?1', now - keep.settingChanges)
      // A used code stays while its family lives, so that its replay can still revoke it.
      removed += run(
        `DELETE FROM auth_codes WHERE expires_at < ?1
          AND (family_id IS NULL OR NOT EXISTS (SELECT 1 FROM refresh_families f WHERE f.family_id = auth_codes.family_id))`,
        now - keep.usedCodes,
      )
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
