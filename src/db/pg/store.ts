import type { SQL } from 'bun'
import type { Change, PurgeWindows, Store, StoreCounts, StoreStats } from '../store'
import { DEVICES_PURGED_PER_RUN, DatabaseUnavailable, StoreRefusal } from '../store'
import { PgChangeFeed } from './change-feed'
import { PgClients } from './clients'
import { connect } from './connect'
import { portError, type PgContext, type Tx } from './context'
import { PgGrants } from './grants'
import { PgKeys } from './keys'
import { PgMail } from './mail'
import { PgMfa } from './mfa'
import { PgResources } from './resources'
import { PgGroups } from './groups'
import { PgAudit } from './audit'
import { migrate } from './migrate'
import { PgSessions } from './sessions'
import { PgSettings } from './settings'
import { PgSites } from './sites'
import { PgProviders } from './providers'
import { PgThrottle } from './throttle'
import { PgTokens } from './tokens'
import { PgPushed } from './pushed'
import { PgDevices } from './devices'
import { PgUsers } from './users'

const TX_ATTEMPTS = 5

function isRetryable(error: unknown): boolean {
  const state = (error as { errno?: string } | undefined)?.errno
  return state === '40P01' || state === '40001'
}

/**
 * The store on PostgreSQL, for several instances behind a load balancer. Every operation is
 * one statement or one transaction; read-check-write operations lock what they decide on
 * (SELECT … FOR UPDATE, or an advisory transaction lock when the row may not exist yet), so
 * they hold when instances run them at the same moment.
 *
 * The tables are Drizzle's (src/db/pg/schema.ts, migrations by drizzle-kit); the queries go
 * straight through Bun's SQL client: measured here, drizzle-orm/bun-sql spent ~50 µs of CPU per
 * query on top of the client's ~13 µs, which made a settings write cost 450 µs instead of 150.
 */
export class PgStore implements Store, PgContext {
  readonly engine = 'postgres' as const
  readonly changes: PgChangeFeed
  readonly users = new PgUsers(this)
  readonly clients = new PgClients(this, () => this.changes)
  readonly sessions = new PgSessions(this)
  readonly grants = new PgGrants(this)
  readonly tokens = new PgTokens(this)
  readonly pushed = new PgPushed(this)
  readonly devices = new PgDevices(this, () => this.changes)
  // Half the pool for settings writes in flight (see SettingsWrites); reads keep the rest.
  readonly settings = new PgSettings(this, () => this.changes, () => Math.max(1, Math.floor(this.stats.size / 2)))
  readonly throttle = new PgThrottle(this)
  readonly keys = new PgKeys(this)
  readonly mfa = new PgMfa(this)
  readonly mail = new PgMail(this)
  readonly resources = new PgResources(this)
  readonly groups = new PgGroups(this)
  readonly audit = new PgAudit(this)
  readonly sites = new PgSites(this)
  readonly providers = new PgProviders(this)

  readonly stats: StoreStats

  private constructor(
    /** The connection pool (tests run assertions on it). */
    readonly client: SQL,
    url: string,
    poolSize: number,
  ) {
    this.stats = { inUse: 0, size: poolSize, operations: 0, seconds: 0 }
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
    const store = new PgStore(client, url, poolSize)
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
  async run<T>(fn: (sql: SQL) => Promise<T>): Promise<T> {
    const started = this.began()
    try {
      return await fn(this.current ?? this.client)
    } catch (error) {
      throw portError(error)
    } finally {
      this.ended(started)
    }
  }

  /** The transaction every operation joins while `transaction` runs. */
  private current: Tx | undefined
  /** What the open store transaction changed, told at its COMMIT. */
  private pending: Change[] = []

  emit(change: Change): void {
    if (this.current) this.pending.push(change)
    else this.changes.changed(change)
  }

  get inTransaction(): boolean {
    return this.current !== undefined
  }

  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    if (this.current) throw new Error('store transactions do not nest')
    this.pending = []
    try {
      const value = (await this.client.begin(async (tx) => {
        this.current = tx as unknown as Tx
        try {
          return await fn()
        } finally {
          this.current = undefined
        }
      })) as T
      const changes = this.pending
      this.pending = []
      for (const change of changes) this.changes.changed(change)
      return value
    } catch (error) {
      this.pending = []
      throw portError(error)
    }
  }

  /** The pool's use, as the metrics read it: an operation holds a connection from here to `ended`. */
  private began(): number {
    this.stats.inUse++
    return performance.now()
  }

  private ended(started: number): void {
    this.stats.inUse--
    this.stats.operations++
    this.stats.seconds += (performance.now() - started) / 1000
  }

  /**
   * A transaction; one that PostgreSQL aborted as a deadlock or a serialization failure
   * (SQLSTATE 40P01, 40001) runs again, a few times, after a short random pause. Grant writes
   * take their locks in one order, so this is a backstop: never a 500 for it (503 if it persists).
   */
  async tx<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    // Inside `transaction`: a savepoint of it (a retry would be the whole transaction's to make).
    if (this.current) return (await (this.current as unknown as { savepoint(f: (sp: Tx) => Promise<T>): Promise<T> }).savepoint(fn).catch((e) => Promise.reject(portError(e)))) as T
    return this.retrying(() => this.client.begin((tx) => fn(tx as unknown as Tx)) as Promise<T>)
  }

  /**
   * One statement that is a transaction of its own (a function call, or a statement of CTEs):
   * one round trip where `tx` takes three or more, retried as `tx` is. Inside `transaction`,
   * it joins it.
   */
  atomic<T>(fn: (sql: SQL) => Promise<T>): Promise<T> {
    if (this.current) return this.run(fn)
    return this.retrying(() => fn(this.client))
  }

  private async retrying<T>(attempt: () => Promise<T>): Promise<T> {
    for (let n = 1; ; n++) {
      const started = this.began()
      try {
        return await attempt()
      } catch (error) {
        if (!isRetryable(error)) throw portError(error)
        if (n >= TX_ATTEMPTS) throw new DatabaseUnavailable(error)
      } finally {
        this.ended(started)
      }
      await Bun.sleep(n * 5 + Math.random() * 20)
    }
  }

  ping(): Promise<void> {
    return this.run(async (sql) => void (await sql`SELECT 1`))
  }

  async close(): Promise<void> {
    await this.changes.stop().catch(() => {})
    await this.client.close().catch(() => {})
  }

  // server secrets and upkeep

  serverSecret(name: string, make: () => string, now: number): Promise<string> {
    return this.run(async (sql) => {
      await sql`INSERT INTO server_secrets (name, value, created_at) VALUES (${name}, ${make()}, ${now}) ON CONFLICT (name) DO NOTHING`
      const [row] = await sql`SELECT value FROM server_secrets WHERE name = ${name}`
      return row!.value as string
    })
  }

  recordIssuer(issuer: string, now: number): Promise<void> {
    return this.run(async (sql) => {
      await sql`INSERT INTO server_secrets (name, value, created_at) VALUES ('issuer', ${issuer}, ${now}) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, created_at = EXCLUDED.created_at`
    })
  }

  putServerValue(name: string, value: string, now: number): Promise<void> {
    return this.run(async (sql) => {
      await sql`INSERT INTO server_secrets (name, value, created_at) VALUES (${name}, ${value}, ${now}) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, created_at = EXCLUDED.created_at`
    })
  }

  serverValue(name: string): Promise<{ value: string; createdAt: number } | undefined> {
    return this.run(async (sql) => {
      const [row] = await sql`SELECT value, created_at FROM server_secrets WHERE name = ${name}`
      return row && { value: row.value as string, createdAt: Number(row.created_at) }
    })
  }

  recordedIssuer(): Promise<string | undefined> {
    return this.run(async (sql) => {
      const [row] = await sql`SELECT value FROM server_secrets WHERE name = 'issuer'`
      return row?.value as string | undefined
    })
  }

  counts(now: number): Promise<StoreCounts> {
    return this.run(async (sql) => {
      const [row] = await sql`SELECT (SELECT count(*) FROM users)::int AS users, (SELECT count(*) FROM clients)::int AS clients, (SELECT count(*) FROM groups)::int AS groups,
        (SELECT count(*) FROM sessions WHERE expires_at > ${now} AND NOT pending)::int AS "activeSessions"`
      return { users: row!.users, clients: row!.clients, groups: row!.groups, activeSessions: row!.activeSessions } as StoreCounts
    })
  }

  async backupTo(): Promise<void> {
    throw new StoreRefusal('backup copies a SQLite database; on PostgreSQL use pg_dump')
  }

  purgeExpired(now: number, keep: PurgeWindows): Promise<number> {
    return this.run(async (sql) => {
      let removed = 0
      removed += (await sql`DELETE FROM access_tokens WHERE expires_at < ${now}`).count
      removed += (await sql`DELETE FROM webauthn_challenges WHERE expires_at < ${now}`).count
      removed += (await sql`DELETE FROM email_tokens WHERE expires_at < ${now}`).count
      removed += (await sql`DELETE FROM registration_tokens WHERE expires_at < ${now}`).count
      removed += (await sql`DELETE FROM stream_tickets WHERE expires_at < ${now}`).count
      removed += (await sql`DELETE FROM pushed_requests WHERE expires_at < ${now}`).count
      removed += (await sql`DELETE FROM device_codes WHERE expires_at < ${now}`).count
      removed += (await sql`DELETE FROM used_assertions WHERE expires_at < ${now}`).count
      removed += (await sql`DELETE FROM provider_states WHERE expires_at < ${now}`).count
      if (keep.audit !== undefined) removed += (await sql`DELETE FROM audit_events WHERE at < ${now - keep.audit}`).count
      // Tombstones of settings deleted long ago: each (user, app) remembers through which revision they are gone (410 before it).
      removed += (
        await sql`WITH gone AS (DELETE FROM setting_tombstones WHERE deleted_at < ${now - keep.settingChanges} RETURNING user_id, client_id, revision),
            last AS (SELECT user_id, client_id, max(revision) AS revision FROM gone GROUP BY user_id, client_id),
            heads AS (UPDATE setting_heads h SET purged_through = greatest(h.purged_through, last.revision) FROM last
              WHERE h.user_id = last.user_id AND h.client_id = last.client_id)
          SELECT 1 FROM gone`
      ).count
      removed += (await sql`DELETE FROM mail_outbox WHERE sent_at < ${now - keep.mail} OR failed_at < ${now - keep.mail}`).count
      removed += (await sql`DELETE FROM logout_deliveries WHERE sent_at < ${now - keep.mail} OR failed_at < ${now - keep.mail}`).count
      // A session that timed out sends no back-channel logout (its apps' rows go first, so the trigger finds none).
      const idleSince = keep.sessionIdle === undefined ? 0 : now - keep.sessionIdle
      await sql`DELETE FROM session_clients WHERE sid IN (SELECT sid FROM sessions WHERE expires_at < ${now} OR last_active_at <= ${idleSince})`
      removed += (await sql`DELETE FROM sessions WHERE expires_at < ${now} OR last_active_at <= ${idleSince}`).count
      removed += (await sql`DELETE FROM site_sessions WHERE expires_at < ${now}`).count
      removed += (await sql`DELETE FROM site_codes WHERE expires_at < ${now}`).count
      if (keep.devices !== undefined)
        removed += (
          await sql`DELETE FROM user_devices WHERE (user_id, device_hash) IN
            (SELECT user_id, device_hash FROM user_devices WHERE created_at < ${now - keep.devices} LIMIT ${DEVICES_PURGED_PER_RUN})`
        ).count
      removed += (await sql`DELETE FROM login_throttle WHERE last_at < ${now - keep.throttle}`).count
      // A family lives until the last of its tokens expires; rotated tokens only through the grace.
      removed += (await sql`DELETE FROM refresh_tokens WHERE family_id IN (SELECT family_id FROM refresh_families WHERE expires_at < ${now})`).count
      removed += (await sql`DELETE FROM refresh_families WHERE expires_at < ${now}`).count
      removed += (await sql`DELETE FROM refresh_tokens WHERE rotated_at < ${now - keep.refreshGrace}`).count
      removed += (await sql`DELETE FROM signing_keys WHERE retired_at < ${now - keep.retiredKeys}`).count
      // A used code stays while its family lives, so that its replay can still revoke it.
      removed += (
        await sql`DELETE FROM auth_codes WHERE expires_at < ${now - keep.usedCodes}
          AND (family_id IS NULL OR NOT EXISTS (SELECT 1 FROM refresh_families f WHERE f.family_id = auth_codes.family_id))`
      ).count
      return removed
    })
  }

}
