import { sql } from 'drizzle-orm'
import type { ResourceScopes } from '../port/resources'
import { bigint, boolean, customType, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core'

// The twin of ../sqlite/schema.ts for PostgreSQL: the same tables, columns and keys. Every
// secret column holds a SHA-256 hash; times are milliseconds since the epoch (int8, read as
// numbers: they stay far below 2^53).

const ms = (name: string) => bigint(name, { mode: 'number' })

/** Setting keys sort in byte order (SPEC), as SQLite's BINARY collation does. */
const byteOrderedText = customType<{ data: string }>({ dataType: () => 'text COLLATE "C"' })

const bytea = customType<{ data: Buffer }>({ dataType: () => 'bytea' })

export const users = pgTable('users', {
  id: text('id').primaryKey(),
  email: text('email').notNull().unique(),
  fullName: text('full_name').notNull(),
  avatarUrl: text('avatar_url'),
  passwordHash: text('password_hash').notNull(),
  createdAt: ms('created_at').notNull(),
  /** OpenID Connect's email_verified: true when an operator vouched for the address (CLI), false for self sign-up. */
  emailVerified: boolean('email_verified').notNull().default(false),
  isAdmin: boolean('is_admin').notNull().default(false),
  disabledAt: ms('disabled_at'),
  /** The language chosen on /account (a tag of src/i18n/locales.ts); null: the request decides. */
  locale: text('locale'),
  /** The IANA time zone chosen on /account; null: UTC. */
  timeZone: text('time_zone'),
})

export const clients = pgTable('clients', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  secretHash: text('secret_hash'),
  redirectUris: jsonb('redirect_uris').$type<string[]>().notNull(),
  postLogoutRedirectUris: jsonb('post_logout_redirect_uris').$type<string[]>().notNull().default([]),
  skipConsent: boolean('skip_consent').notNull(),
  createdAt: ms('created_at').notNull(),
  requireMfa: boolean('require_mfa').notNull().default(false),
  kind: text('kind').notNull().default('operator'),
  metadataExpiresAt: ms('metadata_expires_at'),
  registrationTokenHash: text('registration_token_hash'),
  idTokenAlg: text('id_token_alg').notNull().default('RS256'),
  /** A resource server's right to introspect other clients' tokens (`--introspect`): client ids, or ['*'] for every client's. */
  introspects: jsonb('introspects').$type<string[]>().notNull().default([]),
  backchannelLogoutUri: text('backchannel_logout_uri'),
  backchannelLogoutSessionRequired: boolean('backchannel_logout_session_required').notNull().default(false),
  grantTypes: jsonb('grant_types').$type<string[]>().notNull().default(['authorization_code']),
  allowedScopes: jsonb('allowed_scopes').$type<string[]>().notNull().default([]),
  requirePar: boolean('require_par').notNull().default(false),
  authMethod: text('auth_method'),
  jwks: text('jwks'),
  jwksUri: text('jwks_uri'),
  launchUrl: text('launch_url'),
  logoEtag: text('logo_etag'),
})

export const clientLogos = pgTable('client_logos', {
  clientId: text('client_id')
    .primaryKey()
    .references(() => clients.id, { onDelete: 'cascade' }),
  contentType: text('content_type').notNull(),
  bytes: bytea('bytes').notNull(),
  etag: text('etag').notNull(),
  updatedAt: ms('updated_at').notNull(),
})

export const sessions = pgTable(
  'sessions',
  {
    idHash: text('id_hash').primaryKey(),
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    expiresAt: ms('expires_at').notNull(),
    /** When the user presented their last factor (OpenID Connect auth_time, max_age). */
    authTime: ms('auth_time').notNull().default(0),
    amr: text('amr').notNull().default('pwd'),
    pending: boolean('pending').notNull().default(false),
    sid: text('sid').notNull(),
    createdAt: ms('created_at').notNull().default(0),
    lastActiveAt: ms('last_active_at').notNull().default(0),
    userAgent: text('user_agent').notNull().default(''),
    address: text('address').notNull().default(''),
    deviceHash: text('device_hash'),
  },
  (t) => [index('sessions_user').on(t.userId), index('sessions_expires').on(t.expiresAt), uniqueIndex('sessions_sid').on(t.sid)],
)

export const sessionClients = pgTable(
  'session_clients',
  {
    sid: text('sid').notNull().references(() => sessions.sid, { onDelete: 'cascade' }),
    clientId: text('client_id').notNull().references(() => clients.id, { onDelete: 'cascade' }),
  },
  (t) => [primaryKey({ columns: [t.sid, t.clientId] }), index('session_clients_client').on(t.clientId)],
)

export const userDevices = pgTable(
  'user_devices',
  {
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    deviceHash: text('device_hash').notNull(),
    createdAt: ms('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.deviceHash] }), index('user_devices_created').on(t.createdAt)],
)

export const userAvatars = pgTable('user_avatars', {
  userId: text('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  contentType: text('content_type').notNull(),
  bytes: bytea('bytes').notNull(),
  etag: text('etag').notNull(),
  updatedAt: ms('updated_at').notNull(),
})

export const logoutDeliveries = pgTable(
  'logout_deliveries',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity(),
    clientId: text('client_id').notNull().references(() => clients.id, { onDelete: 'cascade' }),
    sid: text('sid').notNull(),
    userId: text('user_id').notNull(),
    createdAt: ms('created_at'),
    nextAttemptAt: ms('next_attempt_at').notNull().default(0),
    attempts: integer('attempts').notNull().default(0),
    leaseUntil: ms('lease_until'),
    sentAt: ms('sent_at'),
    failedAt: ms('failed_at'),
    lastError: text('last_error'),
  },
  (t) => [
    uniqueIndex('logout_deliveries_once').on(t.clientId, t.sid),
    index('logout_deliveries_due').on(t.nextAttemptAt).where(sql`${t.sentAt} IS NULL AND ${t.failedAt} IS NULL`),
  ],
)

export const consents = pgTable(
  'consents',
  {
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    clientId: text('client_id').notNull().references(() => clients.id, { onDelete: 'cascade' }),
    scope: text('scope').notNull(),
    createdAt: ms('created_at').notNull(),
    updatedAt: ms('updated_at').notNull(),
    lastUsedAt: ms('last_used_at'),
    /** The resource (RFC 8707) the consent is for; '' for Latchkey's own API. A consent covers one resource. */
    resource: text('resource').notNull().default(''),
  },
  (t) => [primaryKey({ columns: [t.userId, t.clientId, t.resource] }), index('consents_client').on(t.clientId)],
)

export const refreshTokens = pgTable(
  'refresh_tokens',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity(),
    verifierHash: text('verifier_hash').notNull(),
    familyId: text('family_id').notNull(),
    clientId: text('client_id').notNull().references(() => clients.id, { onDelete: 'cascade' }),
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    scope: text('scope').notNull(),
    expiresAt: ms('expires_at').notNull(),
    createdAt: ms('created_at').notNull(),
    rotatedAt: ms('rotated_at'),
    /** When the user signed in for this grant: a refreshed id_token keeps it (OpenID Connect Core §12.2). */
    authTime: ms('auth_time'),
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

/** One row per refresh-token family: see src/db/sqlite/schema.ts. */
export const refreshFamilies = pgTable(
  'refresh_families',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity(),
    familyId: text('family_id').notNull().unique(),
    clientId: text('client_id').notNull().references(() => clients.id, { onDelete: 'cascade' }),
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    keyHash: text('key_hash'),
    createdAt: ms('created_at').notNull(),
    authTime: ms('auth_time'),
    /** The resource (RFC 8707) the tokens are for, their audience; null for Latchkey's own API. */
    resource: text('resource'),
    amr: text('amr'),
    /** The sign-in session it came from (id_tokens' `sid`, back-channel logout); null before it was kept. */
    sid: text('sid'),
    usedAt: ms('used_at').notNull(),
    expiresAt: ms('expires_at').notNull(),
    windowStart: ms('window_start').notNull().default(0),
    windowCount: integer('window_count').notNull().default(0),
  },
  (t) => [index('refresh_families_user_client').on(t.userId, t.clientId), index('refresh_families_client').on(t.clientId), index('refresh_families_expires').on(t.expiresAt)],
)

export const authCodes = pgTable(
  'auth_codes',
  {
    codeHash: text('code_hash').primaryKey(),
    clientId: text('client_id').notNull().references(() => clients.id, { onDelete: 'cascade' }),
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    redirectUri: text('redirect_uri').notNull(),
    scope: text('scope').notNull(),
    codeChallenge: text('code_challenge'),
    expiresAt: ms('expires_at').notNull(),
    usedAt: ms('used_at'),
    tokenId: bigint('token_id', { mode: 'number' }),
    familyId: text('family_id'),
    /** OpenID Connect: the nonce of the request, and when the user signed in. */
    nonce: text('nonce'),
    authTime: ms('auth_time'),
    /** The resource (RFC 8707) the tokens are for, their audience; null for Latchkey's own API. */
    resource: text('resource'),
    amr: text('amr'),
    /** The sign-in session it came from (id_tokens' `sid`, back-channel logout); null before it was kept. */
    sid: text('sid'),
  },
  (t) => [index('auth_codes_expires').on(t.expiresAt), index('auth_codes_user').on(t.userId), index('auth_codes_client').on(t.clientId)],
)

export const accessTokens = pgTable(
  'access_tokens',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity(),
    verifierHash: text('verifier_hash').notNull(),
    clientId: text('client_id').notNull().references(() => clients.id, { onDelete: 'cascade' }),
    /** null for a client's own token (client_credentials). */
    userId: text('user_id').references(() => users.id, { onDelete: 'cascade' }),
    scope: text('scope').notNull(),
    expiresAt: ms('expires_at').notNull(),
    createdAt: ms('created_at').notNull(),
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

export const settings = pgTable(
  'settings',
  {
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    clientId: text('client_id').notNull().references(() => clients.id, { onDelete: 'cascade' }),
    key: byteOrderedText('key').notNull(),
    value: text('value').notNull(),
    updatedAt: ms('updated_at').notNull(),
    revision: bigint('revision', { mode: 'number' }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.userId, t.clientId, t.key] }), index('settings_client').on(t.clientId)],
)

/** Kept exact by a trigger on `settings` (drizzle/pg/0001). */
export const settingCounts = pgTable(
  'setting_counts',
  {
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    clientId: text('client_id').notNull().references(() => clients.id, { onDelete: 'cascade' }),
    n: integer('n').notNull(),
    bytes: bigint('bytes', { mode: 'number' }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.userId, t.clientId] })],
)

export const serverSecrets = pgTable('server_secrets', {
  name: text('name').primaryKey(),
  value: text('value').notNull(),
  createdAt: ms('created_at').notNull(),
})

export const loginThrottle = pgTable(
  'login_throttle',
  {
    key: text('key').primaryKey(),
    count: integer('count').notNull(),
    startedAt: ms('started_at').notNull(),
    lastAt: ms('last_at').notNull(),
  },
  (t) => [index('login_throttle_last').on(t.lastAt)],
)

/**
 * ID-token signing keys (RS256), made at first start and by `latchkey keys rotate`. The newest
 * signs; a retired one stays published in the JWKS until every token it signed has expired.
 */
export const signingKeys = pgTable('signing_keys', {
  kid: text('kid').primaryKey(),
  alg: text('alg').notNull(),
  privateJwk: text('private_jwk').notNull(),
  publicJwk: text('public_jwk').notNull(),
  createdAt: ms('created_at').notNull(),
  retiredAt: ms('retired_at'),
  /**
   * When it starts (started) signing; null while it waits as the next key — published in the
   * JWKS before it signs, so relying parties that cache the JWKS already know it (issue 18).
   */
  signsFrom: ms('signs_from'),
})

export const passkeys = pgTable(
  'passkeys',
  {
    credentialId: text('credential_id').primaryKey(),
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    publicKey: text('public_key').notNull(),
    signCount: ms('sign_count').notNull(),
    transports: jsonb('transports').$type<string[]>().notNull(),
    createdAt: ms('created_at').notNull(),
    lastUsedAt: ms('last_used_at'),
  },
  (t) => [index('passkeys_user').on(t.userId)],
)

export const webauthnChallenges = pgTable(
  'webauthn_challenges',
  {
    browserHash: text('browser_hash').notNull(),
    purpose: text('purpose').notNull(),
    challenge: text('challenge').notNull(),
    userId: text('user_id').references(() => users.id, { onDelete: 'cascade' }),
    expiresAt: ms('expires_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.browserHash, t.purpose] }), index('webauthn_challenges_expires').on(t.expiresAt)],
)

export const totpSecrets = pgTable('totp_secrets', {
  userId: text('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  sealedSecret: text('sealed_secret').notNull(),
  createdAt: ms('created_at').notNull(),
  confirmedAt: ms('confirmed_at'),
  lastStep: ms('last_step').notNull().default(0),
})

export const recoveryCodes = pgTable(
  'recovery_codes',
  {
    codeHash: text('code_hash').primaryKey(),
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    createdAt: ms('created_at').notNull(),
  },
  (t) => [index('recovery_codes_user').on(t.userId)],
)

export const mailOutbox = pgTable(
  'mail_outbox',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity(),
    recipient: text('recipient').notNull(),
    subject: text('subject').notNull(),
    textBody: text('text_body').notNull(),
    htmlBody: text('html_body').notNull(),
    createdAt: ms('created_at').notNull(),
    nextAttemptAt: ms('next_attempt_at').notNull(),
    attempts: integer('attempts').notNull().default(0),
    leaseUntil: ms('lease_until'),
    sentAt: ms('sent_at'),
    failedAt: ms('failed_at'),
    lastError: text('last_error'),
  },
  (t) => [
    index('mail_outbox_due').on(t.nextAttemptAt).where(sql`${t.sentAt} IS NULL AND ${t.failedAt} IS NULL`),
    index('mail_outbox_done').on(t.sentAt, t.failedAt),
  ],
)

export const emailTokens = pgTable(
  'email_tokens',
  {
    tokenHash: text('token_hash').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    purpose: text('purpose').notNull(),
    email: text('email').notNull(),
    createdAt: ms('created_at').notNull(),
    expiresAt: ms('expires_at').notNull(),
  },
  (t) => [index('email_tokens_user').on(t.userId), index('email_tokens_expires').on(t.expiresAt)],
)

export const resources = pgTable('resources', {
  uri: text('uri').primaryKey(),
  name: text('name').notNull(),
  scopes: jsonb('scopes').$type<ResourceScopes>().notNull(),
  tokenFormat: text('token_format').notNull(),
  introspectors: jsonb('introspectors').$type<string[]>().notNull(),
  createdAt: ms('created_at').notNull(),
})

export const registrationTokens = pgTable('registration_tokens', {
  tokenHash: text('token_hash').primaryKey(),
  createdAt: ms('created_at').notNull(),
  expiresAt: ms('expires_at').notNull(),
})

export const settingTombstones = pgTable(
  'setting_tombstones',
  {
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    clientId: text('client_id').notNull().references(() => clients.id, { onDelete: 'cascade' }),
    key: byteOrderedText('key').notNull(),
    revision: bigint('revision', { mode: 'number' }).notNull(),
    deletedAt: ms('deleted_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.clientId, t.key] }), index('setting_tombstones_deleted').on(t.deletedAt), index('setting_tombstones_client').on(t.clientId)],
)

export const settingHeads = pgTable(
  'setting_heads',
  {
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    clientId: text('client_id').notNull().references(() => clients.id, { onDelete: 'cascade' }),
    revision: bigint('revision', { mode: 'number' }).notNull(),
    purgedThrough: bigint('purged_through', { mode: 'number' }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.userId, t.clientId] }), index('setting_heads_client').on(t.clientId)],
)

export const streamTickets = pgTable('stream_tickets', {
  ticketHash: text('ticket_hash').primaryKey(),
  tokenId: bigint('token_id', { mode: 'number' }).notNull(),
  expiresAt: ms('expires_at').notNull(),
})

export const groups = pgTable('groups', {
  name: byteOrderedText('name').primaryKey(),
  createdAt: ms('created_at').notNull(),
})

export const groupMembers = pgTable(
  'group_members',
  {
    groupName: byteOrderedText('group_name').notNull().references(() => groups.name, { onDelete: 'cascade' }),
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  },
  (t) => [primaryKey({ columns: [t.groupName, t.userId] }), index('group_members_user').on(t.userId)],
)

export const clientGroups = pgTable(
  'client_groups',
  {
    clientId: text('client_id').notNull().references(() => clients.id, { onDelete: 'cascade' }),
    groupName: byteOrderedText('group_name').notNull().references(() => groups.name, { onDelete: 'cascade' }),
  },
  (t) => [primaryKey({ columns: [t.clientId, t.groupName] }), index('client_groups_group').on(t.groupName)],
)

export const auditEvents = pgTable(
  'audit_events',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity(),
    at: ms('at').notNull(),
    kind: text('kind').notNull(),
    userId: text('user_id'),
    clientId: text('client_id'),
    address: text('address'),
    userAgent: text('user_agent'),
    detail: text('detail'),
  },
  (t) => [index('audit_events_at').on(t.at), index('audit_events_user').on(t.userId, t.at), index('audit_events_client').on(t.clientId, t.at)],
)

/** Forward-auth sites: the twin of ../sqlite/schema.ts's, rules as one ordered JSON array. */
export const sites = pgTable('sites', {
  host: text('host').primaryKey(),
  name: text('name').notNull(),
  policy: text('policy').notNull(),
  allowedGroups: jsonb('allowed_groups').$type<string[]>().notNull(),
  jwt: boolean('jwt').notNull().default(false),
  rules: jsonb('rules').$type<unknown[]>().notNull(),
  createdAt: ms('created_at').notNull(),
})

/** A site's own session (host-only cookie, hashed), ending with the sign-in session it was made from. */
export const siteSessions = pgTable(
  'site_sessions',
  {
    idHash: text('id_hash').primaryKey(),
    sessionHash: text('session_hash').notNull().references(() => sessions.idHash, { onDelete: 'cascade' }),
    host: text('host').notNull(),
    expiresAt: ms('expires_at').notNull(),
  },
  (t) => [index('site_sessions_session').on(t.sessionHash), index('site_sessions_expires').on(t.expiresAt)],
)

/** The one-time code for a site's /.latchkey/callback (60 s, for that host), hashed. */
export const siteCodes = pgTable(
  'site_codes',
  {
    codeHash: text('code_hash').primaryKey(),
    sessionHash: text('session_hash').notNull().references(() => sessions.idHash, { onDelete: 'cascade' }),
    host: text('host').notNull(),
    returnTo: text('return_to').notNull(),
    /** SHA-256 of the state cookie of the browser that asked (`/.latchkey/start`): the code is good in that browser only. */
    stateHash: text('state_hash').notNull(),
    expiresAt: ms('expires_at').notNull(),
  },
  (t) => [index('site_codes_session').on(t.sessionHash)],
)

/** Pushed authorization requests (RFC 9126), used once. */
export const pushedRequests = pgTable(
  'pushed_requests',
  {
    uriHash: text('uri_hash').primaryKey(),
    clientId: text('client_id').notNull().references(() => clients.id, { onDelete: 'cascade' }),
    params: text('params').notNull(),
    expiresAt: ms('expires_at').notNull(),
  },
  (t) => [index('pushed_requests_expires').on(t.expiresAt), index('pushed_requests_client').on(t.clientId)],
)

/**
 * Device authorization (RFC 8628): a device code (its hash) and the user code typed on /device
 * (its hash), pending until the user allows or denies; an allowed one holds the hash of the code
 * the next poll exchanges, once.
 */
export const deviceCodes = pgTable(
  'device_codes',
  {
    deviceCodeHash: text('device_code_hash').primaryKey(),
    userCodeHash: text('user_code_hash').notNull().unique(),
    clientId: text('client_id').notNull().references(() => clients.id, { onDelete: 'cascade' }),
    scope: text('scope').notNull(),
    resource: text('resource'),
    createdAt: ms('created_at').notNull(),
    expiresAt: ms('expires_at').notNull(),
    /** The polling interval in seconds: 5, and 5 more after each slow_down. */
    interval: integer('interval').notNull(),
    lastPolledAt: ms('last_polled_at'),
    /** pending, allowed, denied or used. */
    status: text('status').notNull(),
    /** Where the request came from (shown on the consent page). */
    address: text('address').notNull(),
    userId: text('user_id').references(() => users.id, { onDelete: 'cascade' }),
    codeHash: text('code_hash'),
  },
  (t) => [index('device_codes_expires').on(t.expiresAt), index('device_codes_client').on(t.clientId)],
)

/** Client assertions' jti (RFC 7523 §3), used once. */
export const usedAssertions = pgTable(
  'used_assertions',
  {
    clientId: text('client_id').notNull().references(() => clients.id, { onDelete: 'cascade' }),
    jti: text('jti').notNull(),
    expiresAt: ms('expires_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.clientId, t.jti] }), index('used_assertions_expires').on(t.expiresAt)],
)

/** Upstream providers; the client secret is sealed, not hashed (Latchkey sends it), see ../sqlite/schema.ts. */
export const providers = pgTable('providers', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  kind: text('kind').notNull(),
  issuer: text('issuer').notNull(),
  apiUrl: text('api_url'),
  clientId: text('client_id').notNull(),
  clientSecretSealed: text('client_secret_sealed').notNull(),
  scope: text('scope').notNull(),
  allowCreate: boolean('allow_create').notNull().default(false),
  allowedDomains: jsonb('allowed_domains').$type<string[]>().notNull(),
  linkVerifiedEmail: boolean('link_verified_email').notNull().default(false),
  trustMfa: boolean('trust_mfa').notNull().default(false),
  createdAt: ms('created_at').notNull(),
  updatedAt: ms('updated_at').notNull(),
})

/** A user's identity at a provider (provider + subject); `email` is for display only. */
export const userIdentities = pgTable(
  'user_identities',
  {
    providerId: text('provider_id').notNull().references(() => providers.id, { onDelete: 'cascade' }),
    subject: text('subject').notNull(),
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    email: text('email'),
    createdAt: ms('created_at').notNull(),
    lastUsedAt: ms('last_used_at'),
  },
  (t) => [primaryKey({ columns: [t.providerId, t.subject] }), uniqueIndex('user_identities_user_provider').on(t.userId, t.providerId)],
)

/** A sign-in sent to a provider and not yet back (by SHA-256 of its state, once, in one browser). */
export const providerStates = pgTable(
  'provider_states',
  {
    stateHash: text('state_hash').primaryKey(),
    providerId: text('provider_id').notNull().references(() => providers.id, { onDelete: 'cascade' }),
    browserHash: text('browser_hash').notNull(),
    nonce: text('nonce').notNull(),
    returnTo: text('return_to'),
    userId: text('user_id').references(() => users.id, { onDelete: 'cascade' }),
    expiresAt: ms('expires_at').notNull(),
  },
  (t) => [index('provider_states_expires').on(t.expiresAt)],
)
