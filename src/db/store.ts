/**
 * The store: the one port every feature uses to reach the database, whichever engine runs
 * (Ory Hydra's persister idea). Features ask for "claim this code", "save this setting if the
 * rules allow it", never for SQL. Each operation is atomic on its own — one transaction, or one
 * job of SQLite's group commit — and correct when several instances run it at the same moment.
 * Where an operation needs a feature's rule in the middle (PKCE, preconditions, quotas, the
 * throttle), the feature passes it as a synchronous `decide` callback that the store runs inside
 * the transaction, on rows it has locked.
 *
 * The port is split by domain (port/*.ts), and so is each engine (sqlite/*.ts beside pg/*.ts):
 * a feature's tables get a file of their own instead of growing one that everybody edits.
 *
 * Times are milliseconds since the epoch. Every secret column holds a SHA-256 hash.
 */
import type { ClientStore } from './port/clients'
import type { GroupStore } from './port/groups'
import type { AuditStore } from './port/audit'
import type { GrantStore } from './port/grants'
import type { KeyStore } from './port/keys'
import type { MailStore } from './port/mail'
import type { MfaStore } from './port/mfa'
import type { ResourceStore } from './port/resources'
import type { SessionStore } from './port/sessions'
import type { SettingsStore } from './port/settings'
import type { SiteStore } from './port/sites'
import type { ProviderStore } from './port/providers'
import type { ThrottleStore } from './port/throttle'
import type { TokenStore } from './port/tokens'
import type { PushedRequestStore } from './port/pushed'
import type { DeviceCodeStore } from './port/devices'
import type { UserStore } from './port/users'

export type * from './port/clients'
export type * from './port/grants'
export { codeRefusal, tokensForCode } from './port/grants'
export type * from './port/groups'
export type * from './port/audit'
export type * from './port/keys'
export { signerOf } from './port/keys'
export type * from './port/mail'
export type * from './port/mfa'
export { countConfirmingWays, countWaysIn } from './port/mfa'
export type * from './port/resources'
export type * from './port/sessions'
export type * from './port/settings'
export type * from './port/sites'
export type * from './port/providers'
export { originOf, reachOf, sameOrigin } from './port/providers'
export { etagList, etagMatches, etagOf, judgePreconditions, judgeSave } from './port/settings'
export type * from './port/throttle'
export type * from './port/tokens'
export type * from './port/pushed'
export type * from './port/devices'
export { decidePoll, intervalOf, pollAnswer, SLOW_DOWN_SECONDS, type LastPoll } from './port/devices'
export type * from './port/users'

/** A unique constraint refused a write (an email or id that already exists). */
export class UniqueViolation extends Error {
  constructor(readonly constraint: string) {
    super(`unique constraint ${constraint}`)
  }
}

/**
 * A provider's identity was to be written for an origin (issuer, kind, GitHub API) the provider no
 * longer has — an operator moved or deleted it since the sign-in was checked: nothing was written.
 */
export class ProviderMoved extends Error {
  constructor(readonly providerId: string) {
    super(`provider ${providerId} moved or was deleted during the sign-in`)
  }
}

/** A request the store cannot carry out as asked (e.g. a backup path that exists): its message is for the user. */
export class StoreRefusal extends Error {}

/** The database cannot be reached (SPEC: 503 temporarily_unavailable with Retry-After). */
export class DatabaseUnavailable extends Error {
  constructor(cause?: unknown) {
    super('the database is unavailable', { cause })
  }
}

/**
 * What a commit changed, when the feed can tell: these access tokens (row ids) were deleted,
 * these users' rows changed (name, avatar, email, email_verified, admin, disabled), these users'
 * sign-in sessions ended or group memberships changed (`'all'`: too many to name), sites or their
 * rules changed (forward-auth's site-session cache, src/authz/cache.ts), these clients' rows were
 * inserted or updated (`'all'`: too many to name; the PostgreSQL client cache), device codes were
 * decided, polled too fast, used or deleted (the pending device codes' cache, src/db/device-cache.ts).
 * A change naming none of them — or none at all — means anything may have changed.
 */
export interface Change {
  tokens?: readonly number[]
  users?: readonly string[]
  sessions?: readonly string[] | 'all'
  sites?: true
  clients?: readonly string[] | 'all'
  devices?: true
}

/** Whether a change may concern anything (it names nothing). */
export const isWhole = (change: Change | undefined): boolean => !change?.tokens && !change?.users && !change?.sessions && !change?.sites && !change?.clients && !change?.devices

/**
 * Tells in-process caches of every write that changed what they hold — this process's own
 * (the store emits them once they committed), another instance's, the CLI's. A cache may only
 * be trusted while `check()` is true: on SQLite always (PRAGMA data_version, read before each
 * use, tells other processes' commits); on PostgreSQL only while the LISTEN connection is alive
 * (triggers NOTIFY every instance, this one included).
 */
export interface ChangeFeed {
  onChange(listener: (change?: Change) => void): void
  /** Call before trusting a cache: delivers pending changes; false when the feed is down. */
  check(): boolean
}

/** How long the purge keeps what has expired (milliseconds). */
export interface PurgeWindows {
  /** A used code whose family is gone, past its expiry. */
  usedCodes: number
  /** A throttle row since its last event. */
  throttle: number
  /** A rotated refresh token since its rotation: REFRESH_TOKEN_REUSE_GRACE. */
  refreshGrace: number
  /** A retired signing key since it stopped signing: as long as an ID token it signed lives. */
  retiredKeys: number
  /** A sent or failed message (or back-channel logout) since then (a week). */
  mail: number
  /** SESSION_IDLE_TTL: a session idle that long is gone (absent: only its expiry counts). */
  sessionIdle?: number
  /** A settings change since it was made: SETTINGS_CHANGES_DAYS. */
  settingChanges: number
  /** An audit event since it happened: AUDIT_DAYS (absent: kept). */
  audit?: number
  /** A known device (user_devices) since it first signed in: the device cookie's life (absent: kept). */
  devices?: number
}

/** Known devices deleted by one purge at most: the writer is held for one short statement (a minute later, the next batch). */
export const DEVICES_PURGED_PER_RUN = 10_000

/**
 * What the metrics read of the database at scrape time (plain numbers, so counting costs a
 * write path an addition): connections in use and the pool's size — on SQLite, writes waiting for
 * the one writer, of one — and the operations done and the seconds they took (on SQLite, the
 * writes, timed by the group commit they were in).
 */
export interface StoreCounts {
  users: number
  clients: number
  groups: number
  activeSessions: number
}

export interface StoreStats {
  inUse: number
  size: number
  operations: number
  seconds: number
}

export interface Store {
  readonly engine: 'sqlite' | 'postgres'
  readonly stats: StoreStats
  readonly changes: ChangeFeed
  readonly users: UserStore
  readonly clients: ClientStore
  readonly sessions: SessionStore
  /** Consents, codes, refresh families. */
  readonly grants: GrantStore
  /** Access tokens, for validation. */
  readonly tokens: TokenStore
  /** Pushed authorization requests (RFC 9126). */
  readonly pushed: PushedRequestStore
  /** Device authorization requests (RFC 8628). */
  readonly devices: DeviceCodeStore
  readonly settings: SettingsStore
  readonly throttle: ThrottleStore
  /** ID-token signing keys. */
  readonly keys: KeyStore
  /** Passkeys, TOTP, recovery codes. */
  readonly mfa: MfaStore
  /** The outbox and the links messages carry. */
  readonly mail: MailStore
  /** Resources (RFC 8707) tokens can be issued for. */
  readonly resources: ResourceStore
  readonly groups: GroupStore
  readonly audit: AuditStore
  /** Forward-auth sites, their rules, site sessions and codes. */
  readonly sites: SiteStore
  /** Upstream providers, identities linked to them, sign-ins in flight. */
  readonly providers: ProviderStore

  /**
   * Everything `fn` does through this store commits together, or nothing does (`latchkey apply`).
   * For one-shot commands only: while it runs, every operation of this store object joins it —
   * on SQLite the writer's group commit is bypassed — so a serving process never calls it.
   */
  transaction<T>(fn: () => Promise<T>): Promise<T>

  /** One round trip: for /healthz. */
  ping(): Promise<void>
  close(): Promise<void>

  // server secrets and upkeep
  /** A random value made once by whichever process asks first, then shared. */
  serverSecret(name: string, make: () => string, now: number): Promise<string>
  /**
   * The ISSUER a server starts with, recorded (replacing the last one) so the CLI's links name it
   * (SPEC, links made by the CLI); kept beside the server secrets, under the name `issuer`.
   */
  recordIssuer(issuer: string, now: number): Promise<void>
  /** The ISSUER the server last started with; undefined when no server ever started on this database. */
  recordedIssuer(): Promise<string | undefined>
  /** What `latchkey status` counts: users, apps, groups, and sessions signed in and not expired at `now`. */
  counts(now: number): Promise<StoreCounts>
  /** Sets a server value (replacing it, and when it was written): the setup token's hash (SPEC "First run"). */
  putServerValue(name: string, value: string, now: number): Promise<void>
  /** A server value and when it was written. */
  serverValue(name: string): Promise<{ value: string; createdAt: number } | undefined>
  /**
   * A consistent copy of the database at `path` (SQLite: VACUUM INTO), created 0600, never over
   * an existing file or through a symlink. PostgreSQL has pg_dump for that and refuses.
   */
  backupTo(path: string, shownAs: string): Promise<void>
  /**
   * Deletes expired tokens, sessions, codes, WebAuthn challenges and throttle rows, refresh families past their last
   * expiry, rotated refresh tokens past the reuse grace and signing keys no valid token needs; returns how many rows went. A used
   * code is kept while its family lives (a replay must still revoke it, RFC 6749 §4.1.2).
   */
  purgeExpired(now: number, keep: PurgeWindows): Promise<number>
}
