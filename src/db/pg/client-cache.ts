import { isWhole, type Change, type ChangeFeed, type ClientRecord } from '../store'

/** Clients held at most, as on SQLite (ids are never guessed into it: only a row found is kept). */
const CAPACITY = 1000
/**
 * Their bytes at most, as their JSON text counts them (SPEC: in-memory state bounded in entries
 * and bytes): a dynamically registered client may carry 20 redirect URIs of 2,000 characters.
 */
export const CLIENT_CACHE_BYTES = 8 * 1024 * 1024

/**
 * The clients every token, introspection, PAR, device and authorize request authenticates, kept
 * in memory on PostgreSQL as src/db/sqlite/client-cache.ts keeps them on SQLite (issue 38: each
 * of those requests paid a round trip for its client). The rule of src/authz/cache.ts: trusted
 * only while the change feed is alive (`changes.check()`, the LISTEN connection's heartbeat);
 * what may be kept is dropped
 * - by this instance's own writes to a client at their commit (PgClients emits them: the
 *   writer's next request sees its change at once),
 * - by every instance's — this one's, another's, the CLI's, a raw statement's — through the
 *   triggers' NOTIFY: inserted or updated clients by name (drizzle/pg/0026), deleted ones as
 *   "anything may have changed" (0001). Another instance's write is so refused here once the
 *   NOTIFY arrived: within ~100 ms of its commit, or the feed is no longer trusted (Heartbeat).
 * A read that raced a change (the generation moved on while it read) is answered, not kept.
 * Inside a store transaction (the CLI's) nothing is read from it or kept: the transaction's own
 * writes are told only at its COMMIT, and what it reads may still roll back.
 */
export class PgClientCache {
  private readonly entries = new Map<string, ClientRecord>()
  private bytes = 0
  /** Moves on with every change: a read begun before one is not kept. */
  private generation = 0

  constructor(
    private readonly changes: ChangeFeed,
    private readonly maxBytes = CLIENT_CACHE_BYTES,
  ) {
    changes.onChange((change) => this.changed(change))
  }

  /** The cached row (undefined: read it, then `keep` it with the generation `read` gave). */
  get(id: string): ClientRecord | undefined {
    return this.changes.check() ? this.entries.get(id) : undefined
  }

  /** The generation a read begins in, or undefined when what it finds may not be kept. */
  read(): number | undefined {
    return this.changes.check() ? this.generation : undefined
  }

  /** Keeps a row read in `generation`, if nothing changed since and the feed is still alive. */
  keep(record: ClientRecord, generation: number | undefined): void {
    // check() first: a feed back after an outage empties the cache, and so moves the generation on.
    if (!this.changes.check() || generation !== this.generation) return
    // Measured on a miss only (a hit costs nothing); its size is not subtracted when it goes: emptied, counted anew.
    const bytes = JSON.stringify(record).length * 2
    if (bytes > this.maxBytes) return
    if (this.entries.size >= CAPACITY || this.bytes + bytes > this.maxBytes) this.clear()
    this.bytes += bytes
    // Shared by every caller from now on: frozen, so none can change another's client.
    for (const list of [record.redirectUris, record.postLogoutRedirectUris, record.introspects, record.grantTypes, record.allowedScopes]) Object.freeze(list)
    this.entries.set(record.id, Object.freeze(record))
  }

  private changed(change: Change | undefined): void {
    this.generation++
    if (isWhole(change) || change!.clients === 'all') return this.clear()
    for (const id of change!.clients ?? []) this.entries.delete(id)
  }

  private clear(): void {
    this.entries.clear()
    this.bytes = 0
  }

  get size(): number {
    return this.entries.size
  }
}
