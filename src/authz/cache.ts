/**
 * The check's reads, cached on SQLite (SPEC speed: a check with a valid site cookie at ≥ 0.5 × a
 * bare Bun.serve). What may be kept is only what no write has touched since it was read: every
 * entry is dropped when this process commits any write (the writer's count of committed jobs
 * moves — sign-outs, disabled users, group changes, deleted sites all are writes) or another
 * process does (the change feed: PRAGMA data_version). Coarse, so correct by construction; a
 * read-mostly load keeps it warm. PostgreSQL reads every time: its triggers do not yet announce
 * sessions, memberships and sites, so there is no feed to trust there.
 */
import type { SiteRecord, SiteSessionRecord, Store } from '../db/store'
import { siteSessionHash } from './site-sessions'
import { siteFor } from './decide'
import { candidateHosts } from './hosts'

const MAX_ENTRIES = 100_000

export class SiteLookups {
  private readonly sites = new Map<string, SiteRecord | null>()
  private readonly sessions = new Map<string, SiteSessionRecord>()
  private generation = -1

  constructor(private readonly store: Store) {
    store.changes.onChange(() => this.clear())
  }

  private get enabled(): boolean {
    return this.store.engine === 'sqlite'
  }

  /** Whether what is held may be trusted now; clears it when a write happened since. */
  private fresh(): boolean {
    if (!this.enabled || !this.store.changes.check()) return false
    const now = this.store.stats.operations
    if (now !== this.generation) {
      this.clear()
      this.generation = now
    }
    return true
  }

  private clear(): void {
    this.sites.clear()
    this.sessions.clear()
  }

  /** Keeps a value read while nothing was written in between (reads on SQLite are synchronous). */
  private keep<V>(map: Map<string, V>, key: string, value: V, generation: number): void {
    if (!this.enabled || this.store.stats.operations !== generation || generation !== this.generation) return
    if (map.size >= MAX_ENTRIES) map.clear()
    map.set(key, value)
  }

  async site(host: string): Promise<SiteRecord | undefined> {
    const trusted = this.fresh()
    if (trusted) {
      const hit = this.sites.get(host)
      if (hit !== undefined) return hit ?? undefined
    }
    const generation = this.store.stats.operations
    const site = siteFor(host, await this.store.sites.findSites(candidateHosts(host)))
    if (trusted) this.keep(this.sites, host, site ?? null, generation)
    return site
  }

  /** A site session of `host` by its cookie value; unknown cookies are never kept. */
  async session(proto: 'http' | 'https', token: string, host: string, now: number, idleSince: number): Promise<SiteSessionRecord | undefined> {
    const key = `${proto} ${host} ${token}`
    const trusted = this.fresh()
    if (trusted) {
      const hit = this.sessions.get(key)
      if (hit && hit.expiresAt > now && hit.lastActiveAt > idleSince) return hit
    }
    const generation = this.store.stats.operations
    const found = await this.store.sites.findSiteSession(siteSessionHash(proto, token), host, now, idleSince)
    if (found && trusted) this.keep(this.sessions, key, found, generation)
    return found
  }
}

const lookups = new WeakMap<Store, SiteLookups>()

/** One cache per store (so per app context), made on first use. */
export function siteLookups(store: Store): SiteLookups {
  let found = lookups.get(store)
  if (!found) lookups.set(store, (found = new SiteLookups(store)))
  return found
}
