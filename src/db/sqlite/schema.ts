import { sql } from 'drizzle-orm'
import type { ResourceScopes } from '../port/resources'
import { blob, index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'

// Every secret column holds a SHA-256 hash (base64url), never the value itself.
// Times are milliseconds since the epoch.

export const users = sqliteTable('users', {
  id: text('id').primaryKey(),
  email: text('email').notNull().unique(),
  fullName: text('full_name').notNull(),
  avatarUrl: text('avatar_url'),
  /** '' when the user removed their password and signs in with a passkey only. */
  passwordHash: text('password_hash').notNull(),
  createdAt: integer('created_at').notNull(),
  /** OpenID Connect's email_verified: true when an operator vouched for the address (CLI), false for self sign-up. */
  emailVerified: integer('email_verified', { mode: 'boolean' }).notNull().default(false),
  /** May use /admin (`--admin`). */
  isAdmin: integer('is_admin', { mode: 'boolean' }).notNull().default(false),
  /** When an operator disabled the account: it cannot sign in, and its tokens were revoked then. */
  disabledAt: integer('disabled_at'),
  /** The language chosen on /account (a tag of src/i18n/locales.ts); null: the request decides. */
  locale: text('locale'),
  /** The IANA time zone chosen on /account; null: UTC. */
  timeZone: text('time_zone'),
})

export const clients = sqliteTable('clients', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  /** null for public clients (PKCE, no secret). */
  secretHash: text('secret_hash'),
  /** JSON array of exact redirect URIs. */
  redirectUris: text('redirect_uris', { mode: 'json' }).$type<string[]>().notNull(),
  /** Where RP-initiated logout may send the browser back to (exact match). */
  postLogoutRedirectUris: text('post_logout_redirect_uris', { mode: 'json' }).$type<string[]>().notNull().default([]),
  skipConsent: integer('skip_consent', { mode: 'boolean' }).notNull(),
  createdAt: integer('created_at').notNull(),
  /** Authorizing needs a session signed in with two factors (`--require-mfa`). */
  requireMfa: integer('require_mfa', { mode: 'boolean' }).notNull().default(false),
  /** Who registered it: 'operator' (CLI), 'metadata' (a client ID metadata document: the id is its URL), 'dynamic' (RFC 7591). */
  kind: text('kind').notNull().default('operator'),
  /** A metadata document's client: when the fetched document stops being fresh (its Cache-Control, at most 24 h). */
  metadataExpiresAt: integer('metadata_expires_at'),
  /** A dynamically registered client: the hash of its registration access token (RFC 7592). */
  registrationTokenHash: text('registration_token_hash'),
  /** How its ID tokens are signed (OpenID Connect id_token_signed_response_alg): RS256, ES256 or EdDSA. */
  idTokenAlg: text('id_token_alg').notNull().default('RS256'),
  /** A resource server's right to introspect other clients' tokens (`--introspect`): client ids, or ['*'] for every client's. */
  introspects: text('introspects', { mode: 'json' }).$type<string[]>().notNull().default([]),
  /** OpenID Connect Back-Channel Logout 1.0: where a logout_token is POSTed when a session it has an id_token from ends. */
  backchannelLogoutUri: text('backchannel_logout_uri'),
  /** The app needs `sid` in logout tokens (always sent here; recorded for its metadata). */
  backchannelLogoutSessionRequired: integer('backchannel_logout_session_required', { mode: 'boolean' }).notNull().default(false),
  /** The grants it may use (`--grant`): authorization_code, client_credentials, the device code (RFC 8628). */
  grantTypes: text('grant_types', { mode: 'json' }).$type<string[]>().notNull().default(['authorization_code']),
  /** The resource scopes a client_credentials token may carry (`--allowed-scope`). */
  allowedScopes: text('allowed_scopes', { mode: 'json' }).$type<string[]>().notNull().default([]),
  /** Authorization requests only through PAR (RFC 9126 §5, `--require-par`). */
  requirePar: integer('require_par', { mode: 'boolean' }).notNull().default(false),
  /** 'private_key_jwt' (RFC 7523): the client signs an assertion with a key of its JWKS; null: its secret, or none. */
  authMethod: text('auth_method'),
  /** Its JWKS as given (`--jwks-file`), JSON; or where to fetch it (`--jwks-uri`). */
  jwks: text('jwks'),
  jwksUri: text('jwks_uri'),
  /** Where "Your apps" on /account opens it (`--launch-url`): https, or http on loopback. */
  launchUrl: text('launch_url'),
  /** The version of its logo in client_logos (the `?v=` of the logo's URL); null: no logo. */
  logoEtag: text('logo_etag'),
})

/** An app's logo (`--logo-file`): PNG, WebP or SVG, at most 256 KiB, its type found from its bytes. */
export const clientLogos = sqliteTable('client_logos', {
  clientId: text('client_id')
    .primaryKey()
    .references(() => clients.id, { onDelete: 'cascade' }),
  contentType: text('content_type').notNull(),
  bytes: blob('bytes', { mode: 'buffer' }).notNull(),
  etag: text('etag').notNull(),
  updatedAt: integer('updated_at').notNull(),
})

export const sessions = sqliteTable(
  'sessions',
  {
    idHash: text('id_hash').primaryKey(),
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    expiresAt: integer('expires_at').notNull(),
    /** When the user presented their last factor (OpenID Connect auth_time, max_age). */
    authTime: integer('auth_time').notNull().default(0),
    /** How the user signed in (RFC 8176 values, space-separated): "pwd", "pwd otp mfa", "hwk user mfa". */
    amr: text('amr').notNull().default('pwd'),
    /** The password was right and a second factor is still due (/login/two-step): not signed in yet. */
    pending: integer('pending', { mode: 'boolean' }).notNull().default(false),
    /** The session's public id: id_tokens' and logout tokens' `sid`, and its handle on /account (never the secret). */
    sid: text('sid').notNull(),
    createdAt: integer('created_at').notNull().default(0),
    /** The last request, written at most once a minute (SESSION_IDLE_TTL counts from it). */
    lastActiveAt: integer('last_active_at').notNull().default(0),
    /** The browser's User-Agent (bounded) and client address at sign-in, for "Where you're signed in". */
    userAgent: text('user_agent').notNull().default(''),
    address: text('address').notNull().default(''),
    /** The SHA-256 of the browser's device cookie. */
    deviceHash: text('device_hash'),
  },
  (t) => [index('sessions_user').on(t.userId), uniqueIndex('sessions_sid').on(t.sid), index('sessions_expires').on(t.expiresAt)],
)

/** Which apps got an id_token in which session: each is sent a logout token when the session ends. */
export const sessionClients = sqliteTable(
  'session_clients',
  {
    sid: text('sid').notNull().references(() => sessions.sid, { onDelete: 'cascade' }),
    clientId: text('client_id').notNull().references(() => clients.id, { onDelete: 'cascade' }),
  },
  (t) => [primaryKey({ columns: [t.sid, t.clientId] }), index('session_clients_client').on(t.clientId)],
)

/** The browsers (SHA-256 of their device cookie) that have signed in to an account: another is a "new sign-in". */
export const userDevices = sqliteTable(
  'user_devices',
  {
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    deviceHash: text('device_hash').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  // created_at: the purge deletes rows older than the device cookie's life, a batch at a time.
  (t) => [primaryKey({ columns: [t.userId, t.deviceHash] }), index('user_devices_created').on(t.createdAt)],
)

/**
 * An uploaded picture (SPEC "Your account and your sessions"): PNG, JPEG or WebP by its bytes, at
 * most 1 MiB. `users.avatar_url` then holds its path `/avatars/<id>?v=<etag>`; `etag` is a hash
 * of the bytes. Deleting the user deletes it.
 */
export const userAvatars = sqliteTable('user_avatars', {
  userId: text('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  contentType: text('content_type').notNull(),
  bytes: blob('bytes', { mode: 'buffer' }).notNull(),
  etag: text('etag').notNull(),
  updatedAt: integer('updated_at').notNull(),
})

/**
 * Back-channel logout deliveries, an outbox of their own (same lease and back-off as mail): one
 * row per app and ended session, written by a trigger in the transaction that deletes the session.
 * `created_at` is null until the first claim (a trigger has no clock of the app's).
 */
export const logoutDeliveries = sqliteTable(
  'logout_deliveries',
  {
    id: integer('id').primaryKey(),
    clientId: text('client_id').notNull().references(() => clients.id, { onDelete: 'cascade' }),
    sid: text('sid').notNull(),
    userId: text('user_id').notNull(),
    createdAt: integer('created_at'),
    nextAttemptAt: integer('next_attempt_at').notNull().default(0),
    attempts: integer('attempts').notNull().default(0),
    leaseUntil: integer('lease_until'),
    sentAt: integer('sent_at'),
    failedAt: integer('failed_at'),
    lastError: text('last_error'),
  },
  (t) => [
    uniqueIndex('logout_deliveries_once').on(t.clientId, t.sid),
    index('logout_deliveries_due').on(t.nextAttemptAt).where(sql`${t.sentAt} IS NULL AND ${t.failedAt} IS NULL`),
  ],
)

/** What a user has allowed an application: remembered consent. */
export const consents = sqliteTable(
  'consents',
  {
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    clientId: text('client_id').notNull().references(() => clients.id, { onDelete: 'cascade' }),
    scope: text('scope').notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    /** When the app last exchanged a code or refreshed a token for the user. */
    lastUsedAt: integer('last_used_at'),
    /** The resource (RFC 8707) the consent is for; '' for Latchkey's own API. A consent covers one resource. */
    resource: text('resource').notNull().default(''),
  },
  (t) => [primaryKey({ columns: [t.userId, t.clientId, t.resource] }), index('consents_client').on(t.clientId)],
)

/**
 * Refresh tokens are `lk_rt_<id>.<verifier>` like access tokens. Each rotation adds a row to the
 * family and stamps the presented one `rotated_at`; presenting a rotated one after the grace
 * window revokes the family (RFC 9700 §4.14.2).
 */
export const refreshTokens = sqliteTable(
  'refresh_tokens',
  {
    id: integer('id').primaryKey(),
    verifierHash: text('verifier_hash').notNull(),
    familyId: text('family_id').notNull(),
    clientId: text('client_id').notNull().references(() => clients.id, { onDelete: 'cascade' }),
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    /** The scope of the original grant: a refresh may narrow what it asks for, never widen it. */
    scope: text('scope').notNull(),
    expiresAt: integer('expires_at').notNull(),
    createdAt: integer('created_at').notNull(),
    rotatedAt: integer('rotated_at'),
    /** When the user signed in for this grant: a refreshed id_token keeps it (OpenID Connect Core §12.2). */
    authTime: integer('auth_time'),
    /** The resource (RFC 8707) the tokens are for, their audience; null for Latchkey's own API. */
    resource: text('resource'),
  },
  (t) => [
    index('refresh_tokens_family').on(t.familyId),
    index('refresh_tokens_user_client').on(t.userId, t.clientId),
    index('refresh_tokens_client').on(t.clientId),
    // Only rotated rows (few, each gone after the grace): a new token's insert does not touch it.
    index('refresh_tokens_rotated').on(t.rotatedAt).where(sql`${t.rotatedAt} IS NOT NULL`),
  ],
)

/**
 * One row per refresh-token family (one authorization and its refreshes): what reuse detection
 * and the refresh rate limit need, kept per family rather than per rotation. Tokens spell the
 * row's id and carry a key whose hash is `key_hash` (null for families made before 0009, whose
 * tokens spell their own row's id): a presented token with the right key whose row is gone was
 * rotated, and revokes the family (RFC 9700 §4.14.2).
 */
export const refreshFamilies = sqliteTable(
  'refresh_families',
  {
    id: integer('id').primaryKey(),
    familyId: text('family_id').notNull().unique(),
    clientId: text('client_id').notNull().references(() => clients.id, { onDelete: 'cascade' }),
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    keyHash: text('key_hash'),
    createdAt: integer('created_at').notNull(),
    /** How and when the user signed in for this authorization (id_token, introspection). */
    authTime: integer('auth_time'),
    /** The resource (RFC 8707) the tokens are for, their audience; null for Latchkey's own API. */
    resource: text('resource'),
    amr: text('amr'),
    /** The sign-in session it came from (id_tokens' `sid`, back-channel logout); null before it was kept. */
    sid: text('sid'),
    /** The last code exchange or refresh: the account page's "last used". */
    usedAt: integer('used_at').notNull(),
    /** The latest expiry of any of its tokens: the family is purged after it. */
    expiresAt: integer('expires_at').notNull(),
    /** The refresh rate limit's current minute and how many refreshes it saw. */
    windowStart: integer('window_start').notNull().default(0),
    windowCount: integer('window_count').notNull().default(0),
  },
  (t) => [index('refresh_families_user_client').on(t.userId, t.clientId), index('refresh_families_client').on(t.clientId), index('refresh_families_expires').on(t.expiresAt)],
)

export const authCodes = sqliteTable(
  'auth_codes',
  {
    codeHash: text('code_hash').primaryKey(),
    clientId: text('client_id').notNull().references(() => clients.id, { onDelete: 'cascade' }),
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    redirectUri: text('redirect_uri').notNull(),
    scope: text('scope').notNull(),
    codeChallenge: text('code_challenge'),
    expiresAt: integer('expires_at').notNull(),
    usedAt: integer('used_at'),
    /** The token this code was exchanged for, so a replay can revoke it (RFC 6749 §4.1.2). */
    tokenId: integer('token_id'),
    /** The token family the exchange started: a replay revokes all of it. */
    familyId: text('family_id'),
    /** OpenID Connect: the nonce of the request, and when the user signed in. */
    nonce: text('nonce'),
    authTime: integer('auth_time'),
    /** The resource (RFC 8707) the tokens are for, their audience; null for Latchkey's own API. */
    resource: text('resource'),
    amr: text('amr'),
    /** The sign-in session it came from (id_tokens' `sid`, back-channel logout); null before it was kept. */
    sid: text('sid'),
  },
  (t) => [index('auth_codes_expires').on(t.expiresAt), index('auth_codes_user').on(t.userId), index('auth_codes_client').on(t.clientId)],
)

/**
 * Access tokens are `lk_at_<id>.<verifier>`: the row is found by its sequential integer id and
 * the verifier (256 random bits) checked against its SHA-256 in constant time. A random-keyed
 * index would cost a random page write per token; a sequential key appends (~4x cheaper).
 */
export const accessTokens = sqliteTable(
  'access_tokens',
  {
    id: integer('id').primaryKey(),
    verifierHash: text('verifier_hash').notNull(),
    clientId: text('client_id').notNull().references(() => clients.id, { onDelete: 'cascade' }),
    /** null for a client's own token (client_credentials, RFC 6749 §4.4): no user. */
    userId: text('user_id').references(() => users.id, { onDelete: 'cascade' }),
    scope: text('scope').notNull(),
    expiresAt: integer('expires_at').notNull(),
    createdAt: integer('created_at').notNull(),
    /** Every token issued from one authorization (a code and its refreshes) shares a family. */
    familyId: text('family_id'),
    /** The resource (RFC 8707) the tokens are for, their audience; null for Latchkey's own API. */
    resource: text('resource'),
  },
  (t) => [
    index('access_tokens_family').on(t.familyId),
    index('access_tokens_user_client').on(t.userId, t.clientId),
    index('access_tokens_client').on(t.clientId),
    index('access_tokens_expires').on(t.expiresAt),
  ],
)

export const settings = sqliteTable(
  'settings',
  {
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    clientId: text('client_id').notNull().references(() => clients.id, { onDelete: 'cascade' }),
    key: text('key').notNull(),
    /** Serialized JSON, returned with the type it was saved with. */
    value: text('value').notNull(),
    updatedAt: integer('updated_at').notNull(),
    /** Settings sync: the (user, app) revision of the key's latest change (0: from before revisions). */
    revision: integer('revision').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.userId, t.clientId, t.key] }), index('settings_client').on(t.clientId, t.key)],
)

/**
 * How many settings each user keeps per application, and their values' bytes, maintained by
 * triggers on `settings` (migrations 0002, 0004), so the SETTINGS_MAX_KEYS check is one
 * primary-key read and SETTINGS_MAX_USER_BYTES a sum over the user's few applications.
 */
export const settingCounts = sqliteTable(
  'setting_counts',
  {
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    clientId: text('client_id').notNull().references(() => clients.id, { onDelete: 'cascade' }),
    n: integer('n').notNull(),
    /** Serialized JSON bytes of the values. */
    bytes: integer('bytes').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.userId, t.clientId] })],
)

/** Random keys the server makes once and every instance shares (e.g. the CSRF key). */
export const serverSecrets = sqliteTable('server_secrets', {
  name: text('name').primaryKey(),
  value: text('value').notNull(),
  createdAt: integer('created_at').notNull(),
})

/**
 * The sign-in throttle, shared by every process: one row per account (`acct:` + hash of the
 * email) and per client address (`addr:` + address). Purged an hour after its last attempt.
 */
export const loginThrottle = sqliteTable(
  'login_throttle',
  {
    key: text('key').primaryKey(),
    count: integer('count').notNull(),
    startedAt: integer('started_at').notNull(),
    lastAt: integer('last_at').notNull(),
  },
  (t) => [index('login_throttle_last').on(t.lastAt)],
)

/**
 * ID-token signing keys (RS256), made at first start and by `latchkey keys rotate`. The newest
 * signs; a retired one stays published in the JWKS until every token it signed has expired.
 */
export const signingKeys = sqliteTable('signing_keys', {
  kid: text('kid').primaryKey(),
  alg: text('alg').notNull(),
  privateJwk: text('private_jwk').notNull(),
  publicJwk: text('public_jwk').notNull(),
  createdAt: integer('created_at').notNull(),
  retiredAt: integer('retired_at'),
  /**
   * When it starts (started) signing; null while it waits as the next key — published in the
   * JWKS before it signs, so relying parties that cache the JWKS already know it (issue 18).
   */
  signsFrom: integer('signs_from'),
})

/**
 * Passkeys (WebAuthn credentials). The credential id is the key, so one credential can belong to
 * one user only; the public key is public (COSE, base64url) and the counter detects clones.
 */
export const passkeys = sqliteTable(
  'passkeys',
  {
    credentialId: text('credential_id').primaryKey(),
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    publicKey: text('public_key').notNull(),
    signCount: integer('sign_count').notNull(),
    /** JSON array of the transports the browser reported ("internal", "usb", "hybrid" …). */
    transports: text('transports', { mode: 'json' }).$type<string[]>().notNull(),
    createdAt: integer('created_at').notNull(),
    lastUsedAt: integer('last_used_at'),
  },
  (t) => [index('passkeys_user').on(t.userId)],
)

/**
 * WebAuthn challenges: one per browser and purpose (a new one replaces the old), taken (deleted)
 * by the answer whether it verifies or not, good for five minutes. `browser_hash` is the SHA-256
 * of the secret the browser's CSRF token is bound to (session or anonymous cookie).
 */
export const webauthnChallenges = sqliteTable(
  'webauthn_challenges',
  {
    browserHash: text('browser_hash').notNull(),
    purpose: text('purpose').notNull(),
    challenge: text('challenge').notNull(),
    /** Registration: the user the passkey is for. */
    userId: text('user_id').references(() => users.id, { onDelete: 'cascade' }),
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.browserHash, t.purpose] }), index('webauthn_challenges_expires').on(t.expiresAt)],
)

/**
 * TOTP (RFC 6238). The secret must be read back to check codes, so it is sealed (AES-GCM under a
 * key derived from the server secret, the user id as associated data), never stored in the clear.
 * `confirmed_at` null: set up but not yet confirmed with a code. `last_step`: the newest 30-second
 * step whose code was accepted, so each code works once.
 */
export const totpSecrets = sqliteTable('totp_secrets', {
  userId: text('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  sealedSecret: text('sealed_secret').notNull(),
  createdAt: integer('created_at').notNull(),
  confirmedAt: integer('confirmed_at'),
  lastStep: integer('last_step').notNull().default(0),
})

/** Recovery codes: 80 random bits each, stored as SHA-256, deleted when used. */
export const recoveryCodes = sqliteTable(
  'recovery_codes',
  {
    codeHash: text('code_hash').primaryKey(),
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [index('recovery_codes_user').on(t.userId)],
)

/**
 * The outbox: every message is a row written with the change that causes it, then claimed (a
 * lease, so one sender at a time has it), sent and stamped by the background sender. Sent and
 * failed rows are purged a week later.
 */
export const mailOutbox = sqliteTable(
  'mail_outbox',
  {
    id: integer('id').primaryKey(),
    recipient: text('recipient').notNull(),
    subject: text('subject').notNull(),
    textBody: text('text_body').notNull(),
    htmlBody: text('html_body').notNull(),
    createdAt: integer('created_at').notNull(),
    /** When the next attempt is due (the back-off moves it). */
    nextAttemptAt: integer('next_attempt_at').notNull(),
    attempts: integer('attempts').notNull().default(0),
    /** A sender holds the message until then. */
    leaseUntil: integer('lease_until'),
    sentAt: integer('sent_at'),
    failedAt: integer('failed_at'),
    lastError: text('last_error'),
  },
  (t) => [
    index('mail_outbox_due').on(t.nextAttemptAt).where(sql`${t.sentAt} IS NULL AND ${t.failedAt} IS NULL`),
    index('mail_outbox_done').on(t.sentAt, t.failedAt),
  ],
)

/**
 * Links sent by mail: verify an address, reset a password, accept an invitation. Stored as the
 * SHA-256 of their 256-bit token, bound to a purpose, single use. `email`: the address a verify
 * link is for (an email change replaces the account's address only when it is used).
 */
export const emailTokens = sqliteTable(
  'email_tokens',
  {
    tokenHash: text('token_hash').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    purpose: text('purpose').notNull(),
    email: text('email').notNull(),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [index('email_tokens_user').on(t.userId), index('email_tokens_expires').on(t.expiresAt)],
)

/**
 * Resources (RFC 8707): APIs such as MCP servers that tokens can be issued for. `scopes` maps each
 * of the resource's own scopes to the words the consent page shows; `introspectors` are the
 * clients (besides a token's own) that may introspect its tokens.
 */
export const resources = sqliteTable('resources', {
  uri: text('uri').primaryKey(),
  name: text('name').notNull(),
  scopes: text('scopes', { mode: 'json' }).$type<ResourceScopes>().notNull(),
  tokenFormat: text('token_format').notNull(),
  introspectors: text('introspectors', { mode: 'json' }).$type<string[]>().notNull(),
  createdAt: integer('created_at').notNull(),
})

/** Initial access tokens for dynamic client registration (RFC 7591 §3, DYNAMIC_REGISTRATION=token): hashed, until they expire. */
export const registrationTokens = sqliteTable('registration_tokens', {
  tokenHash: text('token_hash').primaryKey(),
  createdAt: integer('created_at').notNull(),
  expiresAt: integer('expires_at').notNull(),
})

/**
 * Settings sync: a deleted key's tombstone — its key and the revision that deleted it — so that
 * `since` can say it is gone; removed when the key is saved again, purged after
 * SETTINGS_CHANGES_DAYS (a `since` older than a purged one is then 410). Live keys carry their own
 * latest revision (settings.revision): a change log would grow with every write.
 */
export const settingTombstones = sqliteTable(
  'setting_tombstones',
  {
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    clientId: text('client_id').notNull().references(() => clients.id, { onDelete: 'cascade' }),
    key: text('key').notNull(),
    revision: integer('revision').notNull(),
    deletedAt: integer('deleted_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.clientId, t.key] }), index('setting_tombstones_deleted').on(t.deletedAt), index('setting_tombstones_client').on(t.clientId)],
)

/** Each (user, app)'s latest revision, and the revision through which its changes were purged (an older `since` is 410). */
export const settingHeads = sqliteTable(
  'setting_heads',
  {
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    clientId: text('client_id').notNull().references(() => clients.id, { onDelete: 'cascade' }),
    revision: integer('revision').notNull(),
    purgedThrough: integer('purged_through').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.userId, t.clientId] }), index('setting_heads_client').on(t.clientId)],
)

/** One-time tickets for EventSource, which cannot send a header: a ticket stands for its access token for 30 s, once. */
export const streamTickets = sqliteTable('stream_tickets', {
  ticketHash: text('ticket_hash').primaryKey(),
  tokenId: integer('token_id').notNull(),
  expiresAt: integer('expires_at').notNull(),
})

/** Groups of users (issue 23): a `groups` claim, and apps restricted to some groups. */
export const groups = sqliteTable('groups', {
  name: text('name').primaryKey(),
  createdAt: integer('created_at').notNull(),
})

export const groupMembers = sqliteTable(
  'group_members',
  {
    groupName: text('group_name').notNull().references(() => groups.name, { onDelete: 'cascade' }),
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  },
  (t) => [primaryKey({ columns: [t.groupName, t.userId] }), index('group_members_user').on(t.userId)],
)

/** An app restricted to groups (`--allowed-group`): only their members may authorize it. No row: anyone. */
export const clientGroups = sqliteTable(
  'client_groups',
  {
    clientId: text('client_id').notNull().references(() => clients.id, { onDelete: 'cascade' }),
    groupName: text('group_name').notNull().references(() => groups.name, { onDelete: 'cascade' }),
  },
  (t) => [primaryKey({ columns: [t.clientId, t.groupName] }), index('client_groups_group').on(t.groupName)],
)

/**
 * The audit log (issue 23): what happened, when, to whom, through which app, from where — never a
 * secret. No foreign keys: a deleted user's or app's history stays (by id). Kept AUDIT_DAYS.
 */
export const auditEvents = sqliteTable(
  'audit_events',
  {
    id: integer('id').primaryKey(),
    at: integer('at').notNull(),
    kind: text('kind').notNull(),
    userId: text('user_id'),
    clientId: text('client_id'),
    address: text('address'),
    userAgent: text('user_agent'),
    /** A small JSON object (the sign-in method, the grant, the actor): never a secret. */
    detail: text('detail'),
  },
  (t) => [index('audit_events_at').on(t.at), index('audit_events_user').on(t.userId, t.at), index('audit_events_client').on(t.clientId, t.at)],
)

/**
 * Forward-auth sites (SPEC "Protecting apps that speak no OAuth"): a host (exact, or `*.example.com`)
 * the reverse proxy asks about, its policy and allowed groups, and its rules — tried in order, kept
 * as one JSON array so a site and its rules change in one write.
 */
export const sites = sqliteTable('sites', {
  host: text('host').primaryKey(),
  name: text('name').notNull(),
  policy: text('policy').notNull(),
  allowedGroups: text('allowed_groups', { mode: 'json' }).$type<string[]>().notNull(),
  jwt: integer('jwt', { mode: 'boolean' }).notNull().default(false),
  rules: text('rules', { mode: 'json' }).$type<unknown[]>().notNull(),
  createdAt: integer('created_at').notNull(),
})

/**
 * A site's own session: a host-only cookie on the host it was set for, stored hashed. It belongs to
 * the sign-in session it was made from — ending that (sign out, everywhere, a disabled user) ends it.
 */
export const siteSessions = sqliteTable(
  'site_sessions',
  {
    idHash: text('id_hash').primaryKey(),
    sessionHash: text('session_hash').notNull().references(() => sessions.idHash, { onDelete: 'cascade' }),
    /** The host (no port) whose cookie it is: presented at any other host, it is refused. */
    host: text('host').notNull(),
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [index('site_sessions_session').on(t.sessionHash), index('site_sessions_expires').on(t.expiresAt)],
)

/** The one-time code /authz/start sends to a site's /.latchkey/callback (60 s, for that host), hashed. */
export const siteCodes = sqliteTable(
  'site_codes',
  {
    codeHash: text('code_hash').primaryKey(),
    sessionHash: text('session_hash').notNull().references(() => sessions.idHash, { onDelete: 'cascade' }),
    host: text('host').notNull(),
    /** Where the browser returns once the cookie is set (an URL on `host`). */
    returnTo: text('return_to').notNull(),
    /** SHA-256 of the state cookie of the browser that asked (`/.latchkey/start`): the code is good in that browser only. */
    stateHash: text('state_hash').notNull(),
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [index('site_codes_session').on(t.sessionHash)],
)

/**
 * Pushed authorization requests (RFC 9126): the request's parameters under the hash of its
 * request_uri's random part, used once before they expire.
 */
export const pushedRequests = sqliteTable(
  'pushed_requests',
  {
    uriHash: text('uri_hash').primaryKey(),
    clientId: text('client_id').notNull().references(() => clients.id, { onDelete: 'cascade' }),
    /** The authorization parameters, as a JSON object of strings. */
    params: text('params').notNull(),
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [index('pushed_requests_expires').on(t.expiresAt), index('pushed_requests_client').on(t.clientId)],
)

/**
 * Device authorization (RFC 8628): a device code (its hash) and the user code typed on /device
 * (its hash), pending until the user allows or denies; an allowed one holds the hash of the code
 * the next poll exchanges, once.
 */
export const deviceCodes = sqliteTable(
  'device_codes',
  {
    deviceCodeHash: text('device_code_hash').primaryKey(),
    userCodeHash: text('user_code_hash').notNull().unique(),
    clientId: text('client_id').notNull().references(() => clients.id, { onDelete: 'cascade' }),
    scope: text('scope').notNull(),
    resource: text('resource'),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
    /** The polling interval in seconds: 5, and 5 more after each slow_down. */
    interval: integer('interval').notNull(),
    lastPolledAt: integer('last_polled_at'),
    /** pending, allowed, denied or used. */
    status: text('status').notNull(),
    /** Where the request came from (shown on the consent page). */
    address: text('address').notNull(),
    userId: text('user_id').references(() => users.id, { onDelete: 'cascade' }),
    codeHash: text('code_hash'),
  },
  (t) => [index('device_codes_expires').on(t.expiresAt), index('device_codes_client').on(t.clientId)],
)

/** Client assertions' jti (RFC 7523 §3): each used once, kept until the assertion expires. */
export const usedAssertions = sqliteTable(
  'used_assertions',
  {
    clientId: text('client_id').notNull().references(() => clients.id, { onDelete: 'cascade' }),
    jti: text('jti').notNull(),
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.clientId, t.jti] }), index('used_assertions_expires').on(t.expiresAt)],
)

/**
 * Upstream providers (SPEC "Sign in with another account"). The client secret is the one secret
 * column that is not a hash: Latchkey must send it to the provider, so it is sealed (AES-256-GCM
 * under the server's seal key, bound to the provider's id) — see src/lib/seal.ts.
 */
export const providers = sqliteTable('providers', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  /** oidc, google or github. */
  kind: text('kind').notNull(),
  issuer: text('issuer').notNull(),
  /** GitHub's API base (https://api.github.com, or GitHub Enterprise's https://HOST/api/v3); null for OpenID Connect. */
  apiUrl: text('api_url'),
  clientId: text('client_id').notNull(),
  clientSecretSealed: text('client_secret_sealed').notNull(),
  scope: text('scope').notNull(),
  allowCreate: integer('allow_create', { mode: 'boolean' }).notNull().default(false),
  allowedDomains: text('allowed_domains', { mode: 'json' }).$type<string[]>().notNull(),
  linkVerifiedEmail: integer('link_verified_email', { mode: 'boolean' }).notNull().default(false),
  trustMfa: integer('trust_mfa', { mode: 'boolean' }).notNull().default(false),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
})

/**
 * A user's identity at a provider: the provider and its subject — never an email alone. `email`
 * is the address the provider last named, shown on /account only; it never decides a link.
 */
export const userIdentities = sqliteTable(
  'user_identities',
  {
    providerId: text('provider_id').notNull().references(() => providers.id, { onDelete: 'cascade' }),
    subject: text('subject').notNull(),
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    email: text('email'),
    createdAt: integer('created_at').notNull(),
    lastUsedAt: integer('last_used_at'),
  },
  (t) => [primaryKey({ columns: [t.providerId, t.subject] }), uniqueIndex('user_identities_user_provider').on(t.userId, t.providerId)],
)

/**
 * A sign-in sent to a provider and not yet back: found by the SHA-256 of its `state`, good once,
 * only in the browser whose cookie hashes to `browser_hash` (the PKCE verifier is derived from that
 * cookie, so it is not stored). `user_id`: a signed-in user connecting the provider from /account.
 */
export const providerStates = sqliteTable(
  'provider_states',
  {
    stateHash: text('state_hash').primaryKey(),
    providerId: text('provider_id').notNull().references(() => providers.id, { onDelete: 'cascade' }),
    browserHash: text('browser_hash').notNull(),
    nonce: text('nonce').notNull(),
    returnTo: text('return_to'),
    userId: text('user_id').references(() => users.id, { onDelete: 'cascade' }),
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [index('provider_states_expires').on(t.expiresAt)],
)
