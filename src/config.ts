/** Environment → typed configuration, validated once at start (SPEC "Configuration"). */
import { LOCALES, type Locale } from './i18n/locales'
import { parseTrustedProxies, type TrustedProxies } from './web/client-address'
import { BrandError, brandFrom, type BrandConfig } from './brand/config'

export type LogLevel = 'debug' | 'info' | 'warn' | 'error'

export interface Config {
  port: number
  host: string
  databaseUrl: string
  /** PostgreSQL connections per instance. */
  databasePoolSize: number
  issuer: string
  signup: 'open' | 'closed'
  /** SIGNUP=domain:…: sign-up only for addresses at these domains (lower case), verified by mail; empty: any address. */
  signupDomains: string[]
  codeTtl: number
  accessTokenTtl: number
  refreshTokenTtl: number
  refreshTokenReuseGrace: number
  /** Validated access tokens kept in memory per instance (0: none). */
  tokenCacheSize: number
  /** Bytes of serialized settings answers kept in memory per instance, SQLite only (0: none). */
  settingsCacheSize: number
  settingsMaxValueBytes: number
  settingsMaxKeys: number
  settingsMaxUserBytes: number
  /** Password checks (sign-in and sign-up) per client address per minute. */
  loginAttemptsPerMinute: number
  /** Peers whose X-Forwarded-For names the client address. */
  trustedProxies: TrustedProxies
  logLevel: LogLevel
  /** Derived: cookies get `Secure` when the issuer is https. */
  secureCookies: boolean
  /** `smtp://` or `smtps://` URL of the mail server; null: no mail is sent and the pages offer nothing that needs it. */
  smtpUrl: string | null
  /** The sender of every message. */
  mailFrom: string
  /** `required`: an unverified account can authorize no app until it verifies. */
  emailVerification: 'optional' | 'required'
  /** Derived: WebAuthn's relying party (ISSUER's host and origin); null on an IP address, where browsers refuse it. */
  passkeys: { rpId: string; origin: string } | null
  /** Whether a client_id that is an https URL is fetched as a client ID metadata document. */
  clientIdMetadataDocuments: boolean
  /** Hosts (lower case, `host` or `host:port`) whose metadata documents may be plain http or on loopback or private addresses. */
  clientIdMetadataAllowHosts: string[]
  /** RFC 7591 at /api/oauth/register: off (404), open (anyone, throttled), token (an initial access token). */
  dynamicRegistration: 'off' | 'open' | 'token'
  /** Settings changes are kept this many days for `since` and stream replays. */
  settingsChangesDays: number
  /** Open settings streams per instance. */
  settingsStreamsMax: number
  /** Audit events are kept this many days. */
  auditDays: number
  /** A session ends this many seconds after sign-in (SPEC "Sessions"). */
  sessionTtl: number
  /** … or this many seconds after its last request, whichever comes first. */
  sessionIdleTtl: number
  /** "New sign-in to your account" for a browser that has not signed in to the account before (needs SMTP_URL). */
  newDeviceEmail: boolean
  /** Seconds before a failed back-channel logout is tried again, doubling each time up to 10 minutes. */
  backchannelLogoutRetry: number
  /** Where GET /metrics listens (a listener of its own); null: off. */
  metricsAddress: { host: string; port: number } | null
  /** BRAND_*: the operator's name, logos, favicon, colour and stylesheet, files read and checked. */
  brand: BrandConfig
  /** The language when nothing else decides (SPEC "Brand and language"). */
  defaultLocale: Locale
}

export class ConfigError extends Error {
  constructor(
    public readonly variable: string,
    detail: string,
  ) {
    super(`${variable}: ${detail}`)
  }
}

type Env = Record<string, string | undefined>

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`)
  const value = Number(raw)
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`)
  return value
}

function oneOf<T extends string>(env: Env, name: string, fallback: T, allowed: readonly T[]): T {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!(allowed as readonly string[]).includes(raw))
    throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`)
  return raw as T
}

function issuerFrom(env: Env, port: number): string {
  const raw = env.ISSUER
  if (raw === undefined || raw === '') return `http://localhost:${port}`
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new ConfigError('ISSUER', `must be an absolute http(s) URL, got "${raw}"`)
  }
  // RFC 8414 §2: the issuer is an https URL with no query or fragment (http allowed for local use).
  if (!['http:', 'https:'].includes(url.protocol) || url.search || url.hash || url.username)
    throw new ConfigError('ISSUER', `must be an http(s) URL without query, fragment or credentials, got "${raw}"`)
  return raw.replace(/\/+$/, '')
}

function databaseUrlFrom(env: Env): string {
  const raw = env.DATABASE_URL
  if (raw === undefined || raw === '') return './data/latchkey.sqlite'
  if (/^postgres(ql)?:\/\//.test(raw)) {
    try {
      new URL(raw)
    } catch {
      throw new ConfigError('DATABASE_URL', 'is not a valid postgres:// URL')
    }
    return raw
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(raw))
    throw new ConfigError('DATABASE_URL', `must be a SQLite file path, :memory: or a postgres:// URL, got "${redactUrl(raw)}"`)
  return raw
}

const SECRET_PARAM = /([?&][^=&]*(?:pass|secret|token)[^=&]*=)[^&#]*/gi

/**
 * A URL for messages: never its password — in the user-info part, however it is spelled (a raw
 * `@` in it included), nor in a parameter like `?password=` or `?sslpassword=`. Parsed as a URL;
 * what does not parse loses everything before its last `@`.
 */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    u.search = u.search.replace(SECRET_PARAM, '$1***')
    return u.href
  } catch {
    return url.replace(/\/\/.*@/, '//***@').replace(SECRET_PARAM, '$1***')
  }
}

/** Text that may quote DATABASE_URL or its password (a driver's message): both masked. */
export function redactDatabaseText(text: string, url: string): string {
  let out = text
  try {
    const u = new URL(url)
    const secrets = [decodeURIComponent(u.password), u.password, ...[...u.searchParams].filter(([k]) => /pass|secret|token/i.test(k)).map(([, v]) => v)]
    for (const secret of secrets) if (secret.length >= 3) out = out.replaceAll(secret, '***')
  } catch {}
  return redactUrl(out.replaceAll(url, redactUrl(url)))
}

function trustedProxiesFrom(env: Env): TrustedProxies {
  try {
    return parseTrustedProxies(env.TRUSTED_PROXIES ?? '')
  } catch (error) {
    throw new ConfigError('TRUSTED_PROXIES', (error as Error).message)
  }
}

export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 3000, 0, 65535)
  const host = env.HOST || '0.0.0.0'
  const issuer = issuerFrom(env, port)
  const brand = brandOf(env)
  return {
    port,
    host,
    databaseUrl: databaseUrlFrom(env),
    databasePoolSize: integer(env, 'DATABASE_POOL_SIZE', 10, 1, 1000),
    issuer,
    ...signupFrom(env),
    codeTtl: integer(env, 'CODE_TTL', 60, 1, 3600),
    accessTokenTtl: integer(env, 'ACCESS_TOKEN_TTL', 3600, 1, 31_536_000),
    refreshTokenTtl: integer(env, 'REFRESH_TOKEN_TTL', 2_592_000, 60, 315_360_000),
    refreshTokenReuseGrace: integer(env, 'REFRESH_TOKEN_REUSE_GRACE', 10, 0, 3600),
    tokenCacheSize: integer(env, 'TOKEN_CACHE_SIZE', 100_000, 0, 10_000_000),
    settingsCacheSize: integer(env, 'SETTINGS_CACHE_SIZE', 16_777_216, 0, 1_099_511_627_776),
    settingsMaxValueBytes: integer(env, 'SETTINGS_MAX_VALUE_BYTES', 65_536, 1, 1_048_576),
    settingsMaxKeys: integer(env, 'SETTINGS_MAX_KEYS', 1000, 1, 1_000_000),
    settingsMaxUserBytes: integer(env, 'SETTINGS_MAX_USER_BYTES', 16_777_216, 1, 1_099_511_627_776),
    loginAttemptsPerMinute: integer(env, 'LOGIN_ATTEMPTS_PER_MINUTE', 10, 1, 1_000_000),
    trustedProxies: trustedProxiesFrom(env),
    logLevel: oneOf(env, 'LOG_LEVEL', 'info', ['debug', 'info', 'warn', 'error'] as const),
    secureCookies: issuer.startsWith('https://'),
    passkeys: passkeysFor(issuer),
    ...mailFrom(env, issuer, brand.name, signupFrom(env).signupDomains.length > 0),
    clientIdMetadataDocuments: oneOf(env, 'CLIENT_ID_METADATA_DOCUMENTS', 'on', ['on', 'off'] as const) === 'on',
    clientIdMetadataAllowHosts: allowHostsFrom(env),
    dynamicRegistration: oneOf(env, 'DYNAMIC_REGISTRATION', 'off', ['off', 'open', 'token'] as const),
    settingsChangesDays: integer(env, 'SETTINGS_CHANGES_DAYS', 30, 1, 3650),
    settingsStreamsMax: integer(env, 'SETTINGS_STREAMS_MAX', 10_000, 1, 1_000_000),
    metricsAddress: metricsAddressFrom(env),
    auditDays: integer(env, 'AUDIT_DAYS', 90, 1, 36_500),
    ...sessionTtls(env),
    newDeviceEmail: oneOf(env, 'NEW_DEVICE_EMAIL', 'on', ['on', 'off'] as const) === 'on',
    backchannelLogoutRetry: integer(env, 'BACKCHANNEL_LOGOUT_RETRY', 30, 1, 600),
    brand,
    defaultLocale: oneOf(env, 'DEFAULT_LOCALE', 'en', LOCALES),
  }
}

function brandOf(env: Env): BrandConfig {
  try {
    return brandFrom(env)
  } catch (error) {
    if (error instanceof BrandError) throw new ConfigError(error.variable, error.message)
    throw error
  }
}

/** RFC 5322 §3.2.5: a display name of atoms as it is, anything else a quoted string. */
export function displayName(name: string): string {
  return /^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~ ]+$/.test(name) && !/^ | $/.test(name) ? name : `"${name.replace(/[\\"]/g, '\\$&')}"`
}

/**
 * SESSION_TTL and SESSION_IDLE_TTL (seconds). An idle limit past the absolute one simply never
 * applies first (SESSION_TTL=3600 alone is valid), so it is not refused.
 */
function sessionTtls(env: Env): Pick<Config, 'sessionTtl' | 'sessionIdleTtl'> {
  return { sessionTtl: integer(env, 'SESSION_TTL', 2_592_000, 60, 31_536_000), sessionIdleTtl: integer(env, 'SESSION_IDLE_TTL', 604_800, 60, 31_536_000) }
}

/** METRICS_ADDRESS: `host:port` (`127.0.0.1:9464`, `[::1]:9464`); empty: off. */
function metricsAddressFrom(env: Env): Config['metricsAddress'] {
  const raw = env.METRICS_ADDRESS ?? ''
  if (raw === '') return null
  const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(raw)
  const port = match ? Number(match[2]) : NaN
  if (!match || port < 1 || port > 65535) throw new ConfigError('METRICS_ADDRESS', `must be host:port (e.g. 127.0.0.1:9464), got "${raw}"`)
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port }
}

/** CLIENT_ID_METADATA_ALLOW_HOSTS: a comma list of host names (or host:port), for tests and intranets. */
function allowHostsFrom(env: Env): string[] {
  const hosts = (env.CLIENT_ID_METADATA_ALLOW_HOSTS ?? '').split(',').map((h) => h.trim().toLowerCase()).filter(Boolean)
  for (const host of hosts)
    if (!/^(?:[a-z0-9.-]{1,253}|\[[0-9a-f:.]{2,45}\])(?::\d{1,5})?$/.test(host))
      throw new ConfigError('CLIENT_ID_METADATA_ALLOW_HOSTS', `"${host}" is not a host name (host or host:port, comma-separated)`)
  return hosts
}

const DOMAIN = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$/

/** SIGNUP (SPEC): closed (the default: a new server is closed to strangers), open, or domain:a.example[,b.example]. */
function signupFrom(env: Env): Pick<Config, 'signup' | 'signupDomains'> {
  const raw = (env.SIGNUP ?? '').trim()
  if (raw === '' || raw === 'closed') return { signup: 'closed', signupDomains: [] }
  if (raw === 'open') return { signup: 'open', signupDomains: [] }
  if (!raw.startsWith('domain:')) throw new ConfigError('SIGNUP', `must be closed, open or domain:DOMAIN[,DOMAIN…], got "${raw}"`)
  const domains = raw.slice('domain:'.length).split(',').map((d) => d.trim().toLowerCase()).filter(Boolean)
  if (domains.length === 0) throw new ConfigError('SIGNUP', 'domain: needs one or more domains, like domain:example.com,example.org')
  const bad = domains.find((d) => !DOMAIN.test(d))
  if (bad !== undefined) throw new ConfigError('SIGNUP', `"${bad}" is not a domain name`)
  return { signup: 'open', signupDomains: [...new Set(domains)] }
}

/**
 * Mail, and whether an address must be verified. SIGNUP=domain:… opens sign-up to addresses of
 * those domains only, which means proven ones: verification is required with it, so it needs mail.
 */
function mailFrom(env: Env, issuer: string, brandName: string, domainSignup: boolean): Pick<Config, 'smtpUrl' | 'mailFrom' | 'emailVerification'> {
  const raw = env.SMTP_URL || null
  if (raw !== null) {
    let url: URL | undefined
    try {
      url = new URL(raw)
    } catch {}
    if (!url || !['smtp:', 'smtps:'].includes(url.protocol) || !url.hostname)
      throw new ConfigError('SMTP_URL', `must be smtp://user:pass@host:port or smtps://…, got "${redactUrl(raw)}"`)
  }
  // MAIL_FROM as a bare address takes the brand's name as its display name (SPEC "Brand and language").
  const address = env.MAIL_FROM || `no-reply@${new URL(issuer).hostname}`
  const from = address.includes('<') ? address : `${displayName(brandName)} <${address.trim()}>`
  // A sender is one header line: no CR, LF or other control characters (header injection).
  if (/[\u0000-\u001f\u007f]/.test(from) || !/@/.test(from)) throw new ConfigError('MAIL_FROM', 'must be an address like "Name <user@host>" on one line')
  const emailVerification = oneOf(env, 'EMAIL_VERIFICATION', domainSignup ? 'required' : 'optional', ['optional', 'required'] as const)
  if (domainSignup && emailVerification === 'optional') throw new ConfigError('SIGNUP', 'domain:… signs up verified addresses only: EMAIL_VERIFICATION=optional contradicts it')
  if (domainSignup && raw === null) throw new ConfigError('SIGNUP', 'domain:… signs up verified addresses only: it needs SMTP_URL (the links are sent by mail)')
  if (emailVerification === 'required' && raw === null) throw new ConfigError('EMAIL_VERIFICATION', 'required needs SMTP_URL (the links are sent by mail)')
  return { smtpUrl: raw, mailFrom: from, emailVerification }
}

/** WebAuthn needs a domain (its RP ID): `localhost` works, an IPv4 or IPv6 literal does not. */
function passkeysFor(issuer: string): Config['passkeys'] {
  const { hostname, origin } = new URL(issuer)
  const ip = hostname.startsWith('[') || /^\d+\.\d+\.\d+\.\d+$/.test(hostname)
  return ip ? null : { rpId: hostname, origin }
}
