/**
 * The store: the one port every feature uses to reach the database, whichever engine runs
 * (Ory Hydra's persister idea). Features ask for "claim this code", "save this setting if the
 * rules allow it", never for SQL. Each operation is atomic on its own — one transaction, or one
 * job of SQLite's group commit — and correct when several instances run it at the same moment.
 * Where an operation needs a feature's rule in the middle (PKCE, preconditions, quotas, the
 * throttle), the feature passes it as a synchronous `decide` callback that the store runs inside
 * the transaction, on rows it has locked.
 *
 * Times are milliseconds since the epoch. Every secret column holds a SHA-256 hash.
 */

export interface UserRecord {
  id: string
  email: string
  fullName: string
  avatarUrl: string | null
  /** Whether an operator vouched for the email (CLI), as opposed to self sign-up. */
  emailVerified: boolean
}

export interface NewUser extends UserRecord {
  passwordHash: string
}

export interface ClientRecord {
  id: string
  name: string
  /** null for public clients (PKCE, no secret). */
  secretHash: string | null
  redirectUris: string[]
  /** RP-initiated logout may return only to these (exact match). */
  postLogoutRedirectUris: string[]
  skipConsent: boolean
}

/** A signed-in browser: the user, and when they entered their password. */
export interface SessionRecord {
  user: UserRecord
  authTime: number
}

/** An ID-token signing key; the private half never leaves the server. */
export interface SigningKeyRecord {
  kid: string
  alg: string
  privateJwk: string
  publicJwk: string
  createdAt: number
  /** When a newer key replaced it; null for the current key. */
  retiredAt: number | null
}

export interface CodeRecord {
  clientId: string
  userId: string
  redirectUri: string
  scope: string
  codeChallenge: string | null
  expiresAt: number
  usedAt: number | null
  /** OpenID Connect: the request's nonce, and when the user signed in. */
  nonce: string | null
  authTime: number | null
}

/** A code about to be stored: its record before any use, under the hash of its value. */
export interface NewCode extends Omit<CodeRecord, 'usedAt'> {
  codeHash: string
}

export interface NewToken {
  verifierHash: string
  /** Every token issued from one authorization (a code, then its refreshes) shares a family. */
  familyId: string
  clientId: string
  userId: string
  scope: string
  expiresAt: number
  createdAt: number
}

/** A refresh token's row; `scope` is the original grant's (a refresh may only narrow it). */
export interface NewRefreshToken extends NewToken {
  /** When the user signed in for this grant (a refreshed id_token keeps it). */
  authTime: number | null
}

export interface RefreshRecord extends NewRefreshToken {
  id: number
  /** When it was first used to rotate; null while it is the family's newest. */
  rotatedAt: number | null
}

/** What a code exchange or a refresh issues. */
export interface IssuedTokens {
  access: NewToken
  refresh: NewRefreshToken
}

/** What a refresh decides on the locked refresh token (RFC 6749 §6, RFC 9700 §4.14.2). */
export type RefreshDecision =
  | { refuse: { error: 'invalid_grant' | 'invalid_scope'; description: string } }
  | { revokeFamily: string }
  | { issue: IssuedTokens; markRotated: boolean }

export type RefreshOutcome =
  | { ok: true; tokenId: number; refreshId: number }
  | { ok: false; error: 'invalid_grant' | 'invalid_scope'; description: string; familyRevoked?: boolean }

/** An access token's row with its user, for validation. */
export interface TokenRecord {
  id: number
  verifierHash: string
  clientId: string
  scope: string
  expiresAt: number
  createdAt: number
  user: UserRecord
}

export interface AuthorizedApp {
  clientId: string
  name: string
  scopes: string[]
  grantedAt: number
  /** Its last code exchange or refresh for the user; null if none yet. */
  lastUsedAt: number | null
}

export interface StoredSetting {
  key: string
  /** Serialized JSON exactly as stored. */
  value: string
  updatedAt: number
}

/** A user's settings footprint: keys in one application, value bytes in all of them. */
export interface SettingsUsage {
  keys: number
  bytes: number
}

/** A row of the sign-in throttle (per account or per client address). */
export interface ThrottleRow {
  count: number
  /** When the current window (or run of failures) started. */
  startedAt: number
  lastAt: number
}

/** The outcome of a code exchange, decided inside its transaction. */
export type ExchangeOutcome =
  | { ok: true; tokenId: number; refreshId: number }
  | { ok: false; reason: 'unknown' | 'used' | 'refused'; description?: string }

/** A unique constraint refused a write (an email or id that already exists). */
export class UniqueViolation extends Error {
  constructor(readonly constraint: string) {
    super(`unique constraint ${constraint}`)
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
 * Tells in-process caches when another process (or instance) changed what they hold. A cache
 * may only be trusted while `trusted()` is true: on SQLite always (PRAGMA data_version is read
 * before each use); on PostgreSQL only while the LISTEN connection is alive.
 */
/** What changed, when the feed can tell: these access tokens (row ids) were deleted. Else anything may have. */
export interface Change {
  tokens?: readonly number[]
}

export interface ChangeFeed {
  onChange(listener: (change?: Change) => void): void
  /** Call before trusting a cache: delivers pending changes; false when the feed is down. */
  check(): boolean
}

export interface Store {
  readonly engine: 'sqlite' | 'postgres'
  readonly changes: ChangeFeed
  /** One round trip: for /healthz. */
  ping(): Promise<void>
  close(): Promise<void>

  // users
  insertUser(user: NewUser, now: number): Promise<void>
  findUser(id: string): Promise<UserRecord | undefined>
  findUserByEmail(email: string): Promise<(UserRecord & { passwordHash: string }) | undefined>
  listUsers(): Promise<UserRecord[]>
  /** With their sessions, consents, codes, tokens and settings. */
  deleteUser(id: string): Promise<boolean>

  // clients
  insertClient(client: ClientRecord, now: number): Promise<void>
  findClient(id: string): Promise<ClientRecord | undefined>
  listClients(): Promise<ClientRecord[]>
  deleteClient(id: string): Promise<boolean>
  /** Only a confidential client's secret changes; false for public or unknown clients. */
  setClientSecret(id: string, secretHash: string): Promise<boolean>

  // sessions
  /** Creates a session, ending `replacing` (the browser's previous session) in the same write. */
  createSession(idHash: string, userId: string, expiresAt: number, authTime: number, replacing?: string): Promise<void>
  findSession(idHash: string, now: number): Promise<SessionRecord | undefined>
  deleteSession(idHash: string): Promise<void>
  deleteSessionsOf(userId: string): Promise<void>

  // consent and codes
  grantedScope(userId: string, clientId: string): Promise<string[]>
  listAuthorizedApps(userId: string): Promise<AuthorizedApp[]>
  /** Issues a code; with `remember`, first adds those scopes to the user's consent (a union, in SQL). */
  issueCode(code: NewCode, remember: { scopes: readonly string[]; canonicalOrder: readonly string[]; now: number } | undefined): Promise<void>
  /** "Revoke access": the consent, the access and refresh tokens and the pending codes of the user at the client. */
  revokeAccess(userId: string, clientId: string): Promise<boolean>
  /**
   * RFC 6749 §4.1.2, §4.1.3: claims the code once. An unknown code is `unknown`; a used one is
   * `used` and revokes every token it led to (its family); otherwise `check` decides (client,
   * redirect_uri, expiry, PKCE) and, when it accepts, the tokens `issue` describes are inserted,
   * the code marked used, and the consent's last use noted.
   */
  exchangeCode(
    codeHash: string,
    now: number,
    check: (code: CodeRecord) => string | undefined,
    issue: (code: CodeRecord) => IssuedTokens,
  ): Promise<ExchangeOutcome>
  /**
   * The refresh grant on the locked refresh token `id`: `decide` refuses, revokes the family
   * (reuse after the grace window) or issues the next tokens, stamping the presented one
   * rotated. An unknown id is invalid_grant. Two refreshes of one token, on any instances, run
   * one after the other.
   */
  refresh(id: number, now: number, decide: (token: RefreshRecord) => RefreshDecision): Promise<RefreshOutcome>
  findRefreshToken(id: number): Promise<RefreshRecord | undefined>
  /** Every access and refresh token of the family. */
  revokeFamily(familyId: string): Promise<boolean>

  // access tokens
  /**
   * The token validation miss path: SQLite answers synchronously (no promise per request),
   * PostgreSQL with a promise. SQLite takes the user from `knownUser` when it has it instead of
   * reading the row again (PostgreSQL reads it in the same round trip anyway): no code path
   * updates a user in place, and another process's change empties what the caller knows.
   */
  findToken(id: number, knownUser?: (userId: string) => UserRecord | undefined): TokenRecord | undefined | Promise<TokenRecord | undefined>
  deleteToken(id: number): Promise<boolean>

  // settings
  listSettings(userId: string, clientId: string): Promise<StoredSetting[]>
  getSetting(userId: string, clientId: string, key: string): Promise<StoredSetting | undefined>
  /**
   * Upserts one setting. `decide` sees the stored version and the user's usage and returns the
   * new `updated_at` (or throws, and nothing is written). Two writers for one user never
   * interleave: quotas and If-Match hold under concurrency.
   */
  saveSetting(
    userId: string,
    clientId: string,
    key: string,
    value: string,
    decide: (current: StoredSetting | undefined, usage: SettingsUsage) => number,
  ): Promise<StoredSetting>
  /** Deletes one setting after `check` (preconditions) accepted the stored version; false if there was none. */
  deleteSetting(userId: string, clientId: string, key: string, check: (current: StoredSetting | undefined) => void): Promise<boolean>

  // the sign-in throttle, shared by every instance
  /**
   * Reads and replaces one throttle row atomically: `decide` returns the row to keep (the same
   * object: no write; null: delete it) and a result.
   */
  updateThrottle<T>(key: string, decide: (row: ThrottleRow | undefined) => { row: ThrottleRow | null; result: T }): Promise<T>

  // ID-token signing keys
  /** Every key, newest first. */
  listSigningKeys(): Promise<SigningKeyRecord[]>
  /** Makes `key` current and retires the current one, in one write. */
  rotateSigningKey(key: SigningKeyRecord): Promise<void>
  /** Inserts `key` as the first key unless one exists (instances starting together make one). */
  ensureSigningKey(key: SigningKeyRecord): Promise<void>

  // server secrets and upkeep
  /** A random value made once by whichever process asks first, then shared. */
  serverSecret(name: string, make: () => string, now: number): Promise<string>
  /**
   * A consistent copy of the database at `path` (SQLite: VACUUM INTO), created 0600, never over
   * an existing file or through a symlink. PostgreSQL has pg_dump for that and refuses.
   */
  backupTo(path: string, shownAs: string): Promise<void>
  /** Deletes expired tokens, sessions, codes and throttle rows; returns how many rows went. */
  purgeExpired(now: number, keepUsedCodesMs: number, throttleForgetMs: number): Promise<number>
}
