/**
 * The check's reads, cached (SPEC speed: a check with a valid site cookie at ≥ 0.5 × a bare
 * Bun.serve, no cliff at 100,000 site sessions), on both engines and only while the change feed
 * is alive (`changes.check()`: on PostgreSQL the LISTEN connection, on SQLite always). What may be
 * kept is dropped by NAMED changes (src/db/store.ts Change), this instance's at its commit and
 * every other's through the feed (drizzle/pg/0021's triggers; on SQLite another process's commit
 * names nothing and empties it all):
 * - a user's sign-in sessions ended, or their groups changed (`sessions`), the user changed,
 *   disabled or deleted (`users`): that user's cached site sessions go — their next check reads
 *   them again (one indexed read);
 * - a site or its rules changed (`sites`): the sites go, and the site sessions too (a deleted
 *   site's sessions are deleted with it).
 * A lookup that raced a change (the generation moved on while it read) is answered, not kept.
 * Writes that change no answer — "last active" (SessionActivity), codes, audit — drop nothing.
 */
import { isWhole, type Change, type SiteRecord, type SiteSessionRecord, type Store, type UserRecord } from '../db/store'
import { candidateHosts } from './hosts'
import { siteFor } from './decide'

/** Site sessions held at most: the 100,000 of the bench's working set, with room (RSS +70 MB with 100,000 held, measured). */
export const SITE_SESSION_CAPACITY = 131_072
/** Hosts held at most (a proxy forwards any Host a client sends; unknown ones are kept as such too). */
const HOST_CAPACITY = 4096

/** Who a site session is, shared by the user's entries: an entry is good while its user's identity is the one held. */
interface Identity {
  user: UserRecord
  groups: string[]
}

/** A cached site session: its identity by reference, the rest its own. */
export interface CachedSiteSession {
  host: string
  identity: Identity
  /** Signed in with a second factor (`mfa` in the sign-in session's amr). */
  twoFactor: boolean
  expiresAt: number
  sessionHash: string
  /** When its sign-in session was last active, as this instance knows it (a touch here moves it on). */
  lastActiveAt: number
}

/**
 * A string-keyed map bounded to `capacity` entries in a ring of slots: a new key takes the next
 * slot, evicting whoever held it (first in, first out) — constant time, where evicting through
 * `Map.keys().next()` costs microseconds in Bun (src/oauth/token-cache.ts). The slots grow with use.
 */
class Ring<V> {
  private readonly slots = new Map<string, number>()
  private keys: Array<string | undefined> = []
  private values: Array<V | undefined> = []
  private head = 0

  constructor(readonly capacity: number) {}

  get(key: string): V | undefined {
    const slot = this.slots.get(key)
    return slot === undefined ? undefined : this.values[slot]
  }

  set(key: string, value: V): void {
    let slot = this.slots.get(key)
    if (slot === undefined) {
      slot = this.head
      this.head = (slot + 1) % this.capacity
      const previous = this.keys[slot]
      if (previous !== undefined) this.slots.delete(previous)
      this.keys[slot] = key
      this.slots.set(key, slot)
    }
    this.values[slot] = value
  }

  delete(key: string): void {
    const slot = this.slots.get(key)
    if (slot === undefined) return
    this.slots.delete(key)
    this.keys[slot] = undefined
    this.values[slot] = undefined
  }

  clear(): void {
    this.slots.clear()
    this.keys = []
    this.values = []
    this.head = 0
  }

  get size(): number {
    return this.slots.size
  }
}

export class SiteLookups {
  private readonly sites = new Map<string, SiteRecord | null>()
  private readonly sessions: Ring<CachedSiteSession>
  /** Each user's current identity; a change naming the user removes it, and with it every entry of theirs. */
  private readonly identities = new Map<string, Identity>()
  /** Moves on with every change: a read begun before one is not kept. */
  private generation = 0

  constructor(
    private readonly store: Store,
    capacity = SITE_SESSION_CAPACITY,
  ) {
    this.sessions = new Ring(capacity)
    store.changes.onChange((change) => this.changed(change))
  }

  private changed(change: Change | undefined): void {
    this.generation++
    if (isWhole(change) || change!.sessions === 'all' || change!.sites) return this.clear()
    for (const id of change!.users ?? []) this.identities.delete(id)
    for (const id of change!.sessions ?? []) this.identities.delete(id)
  }

  private clear(): void {
    this.sites.clear()
    this.sessions.clear()
    this.identities.clear()
  }

  /** A hit is answered as it is (no promise: a check is made for every request to every protected app). */
  site(host: string): SiteRecord | undefined | Promise<SiteRecord | undefined> {
    const trusted = this.store.changes.check()
    if (trusted) {
      const hit = this.sites.get(host)
      if (hit !== undefined) return hit ?? undefined
    }
    const generation = this.generation
    return this.store.sites.findSites(candidateHosts(host)).then((found) => {
      const site = siteFor(host, found)
      if (trusted && generation === this.generation && this.store.changes.check()) {
        if (this.sites.size >= HOST_CAPACITY) this.sites.clear()
        this.sites.set(host, site ?? null)
      }
      return site
    })
  }

  /**
   * The site session of `host` whose stored hash is `idHash` (the cookie's, siteSessionHash): a
   * lookup by hash, so no secret is compared here. Unknown cookies are never kept.
   */
  session(idHash: string, host: string, now: number, idleSince: number): CachedSiteSession | undefined | Promise<CachedSiteSession | undefined> {
    const trusted = this.store.changes.check()
    if (trusted) {
      const hit = this.sessions.get(idHash)
      if (hit && hit.host === host && this.identities.get(hit.identity.user.id) === hit.identity) {
        if (hit.expiresAt > now && hit.lastActiveAt > idleSince) return hit
        // Expired, or idle as far as this instance knows (another may have seen it since): read again.
        this.sessions.delete(idHash)
      }
    }
    const generation = this.generation
    return this.store.sites.findSiteSession(idHash, host, now, idleSince, trusted ? this.known : undefined).then((found) => {
      if (!found) return undefined
      const current = trusted && generation === this.generation && this.store.changes.check()
      const entry: CachedSiteSession = {
        host,
        identity: current ? this.identity(found) : { user: found.user, groups: found.groups },
        twoFactor: found.amr.includes('mfa'),
        expiresAt: found.expiresAt,
        sessionHash: found.sessionHash,
        lastActiveAt: found.lastActiveAt,
      }
      if (current) this.sessions.set(idHash, entry)
      return entry
    })
  }

  /** Who a user is, as held (the feed named no change of theirs since it was read). */
  private readonly known = (userId: string): Identity | undefined => this.identities.get(userId)

  /** The user's identity as just read: the one held when nothing differs (its entries stay good), else this one. */
  private identity(read: SiteSessionRecord): Identity {
    const held = this.identities.get(read.user.id)
    const u = read.user
    if (
      held &&
      held.user.email === u.email &&
      held.user.fullName === u.fullName &&
      held.user.avatarUrl === u.avatarUrl &&
      held.user.emailVerified === u.emailVerified &&
      held.groups.length === read.groups.length &&
      held.groups.every((g, i) => g === read.groups[i])
    )
      return held
    if (this.identities.size >= this.sessions.capacity) {
      // Every entry's identity goes with the map: they are read again (bounded memory first).
      this.sessions.clear()
      this.identities.clear()
    }
    const identity = { user: read.user, groups: read.groups }
    this.identities.set(u.id, identity)
    return identity
  }

  get cachedSessions(): number {
    return this.sessions.size
  }
}

const lookups = new WeakMap<Store, SiteLookups>()

/** One cache per store (so per app context), made on first use. */
export function siteLookups(store: Store): SiteLookups {
  let found = lookups.get(store)
  if (!found) lookups.set(store, (found = new SiteLookups(store)))
  return found
}
