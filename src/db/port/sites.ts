/** Forward-auth (SPEC "Protecting apps that speak no OAuth"): sites, their rules, site sessions and codes. */
import type { UserRecord } from './users'

export type SitePolicy = 'one-factor' | 'two-factor' | 'bypass' | 'deny'

/** A rule matches when each condition it names matches (an empty list names none); the first match decides. */
export interface SiteRule {
  /** Regular expressions, tried on the normalised path. */
  paths: string[]
  methods: string[]
  /** CIDR blocks of the client address. */
  networks: string[]
  /** Machine clients (bearer tokens of `client_credentials`) by id. */
  clients: string[]
  policy: SitePolicy
}

export interface SiteRecord {
  /** A name without port, lower case: exact, or `*.example.com` for its subdomains. */
  host: string
  name: string
  policy: SitePolicy
  allowedGroups: string[]
  /** Whether allowed answers carry a signed Remote-Jwt. */
  jwt: boolean
  rules: SiteRule[]
}

/** Who a site session belongs to, as the decision needs it. */
export interface SiteSessionRecord {
  user: UserRecord
  groups: string[]
  amr: string[]
  authTime: number
  expiresAt: number
  /** The sign-in session it belongs to (its hash), and when that was last active (SESSION_IDLE_TTL). */
  sessionHash: string
  lastActiveAt: number
}

export interface NewSiteCode {
  codeHash: string
  /** The sign-in session it was issued from. */
  sessionHash: string
  host: string
  returnTo: string
  /** SHA-256 of the state cookie of the browser it was issued to. */
  stateHash: string
  expiresAt: number
}

/** A code as stored, for the caller to judge whether the browser at hand may spend it. */
export interface SiteCodeRecord {
  host: string
  returnTo: string
  stateHash: string
}

export interface SiteStore {
  /** UniqueViolation when the host is taken. */
  insertSite(site: SiteRecord, now: number): Promise<void>
  /** The sites of these hosts (the exact host and the wildcards that could cover it). */
  findSites(hosts: readonly string[]): Promise<SiteRecord[]>
  listSites(): Promise<SiteRecord[]>
  /** Replaces a site's name, policy, allowed groups, JWT flag and rules (`apply`); false for an unknown host. */
  replaceSite(site: SiteRecord): Promise<boolean>
  /** Appends a rule (after the site's others); false for an unknown host. */
  addRule(host: string, rule: SiteRule): Promise<boolean>
  /** The site and the site sessions of the hosts it covered; false for an unknown host. */
  deleteSite(host: string): Promise<boolean>
  insertSiteCode(code: NewSiteCode): Promise<void>
  /**
   * Uses a code up (whatever the outcome: a code shown at the wrong origin or in the wrong browser
   * is spent too) and, when it is unexpired, `accept`ed, and its sign-in session still signed in,
   * starts a site session of the code's host lasting until `expiresAt` or the sign-in session's
   * end, whichever comes first. Returns where to go back to and when the site session ends.
   */
  exchangeSiteCode(codeHash: string, accept: (code: SiteCodeRecord) => boolean, session: { idHash: string; expiresAt: number }, now: number): Promise<{ returnTo: string; expiresAt: number } | undefined>
  /**
   * A site session of this host, its sign-in session alive (not expired, active after `idleSince`)
   * and its user enabled. `known`: who a user is as the caller holds them, still current (its
   * cache heard of no change since) — a store may take the user and groups from it instead of
   * reading them again (SQLite: a cold miss is then one indexed read).
   */
  findSiteSession(idHash: string, host: string, now: number, idleSince: number, known?: (userId: string) => { user: UserRecord; groups: string[] } | undefined): Promise<SiteSessionRecord | undefined>
  /** Signs out: ends the sign-in session a site session of this host belongs to (and so every site session of it). */
  endSignInOf(idHash: string, host: string): Promise<boolean>
}
