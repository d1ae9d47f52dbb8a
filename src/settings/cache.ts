import { isWhole, type ChangeFeed } from '../db/store'

/** What one (user, application) may take: its list and the keys read one by one. */
const MAX_ENTRY_BYTES = 256 * 1024

/** A `GET /api/settings/:key` answer: its body, its ETag, and the headers that carry it. */
export interface CachedSetting {
  body: string
  etag: string
  /** Built once: Response copies a Headers natively, faster than building one per answer. */
  headers: Headers
}

/** What a Headers of the API's headers and one ETag adds to an answer's size, roughly. */
const HEADERS_BYTES = 256

interface Entry {
  list: string | undefined
  keys: Map<string, CachedSetting> | undefined
  bytes: number
}

/**
 * The serialized settings answers of each (user, application) — the `GET /api/settings` body
 * and the `GET /api/settings/:key` bodies read so far — built once and reused until that
 * user's settings for that application change. Writers drop the entry before and after their
 * write; an answer read while anything was invalidated is not kept (the generation moved on);
 * a change reported by the feed drops everything, and while the feed is down nothing is served
 * from here. Bounded by size (SETTINGS_CACHE_SIZE bytes of answers): large lists are not kept,
 * and the oldest entries go first, through a queue (constant time; `Map.keys().next()` cost
 * 6–7 µs in Bun). Only SQLite uses it: on PostgreSQL another instance's write must be seen at
 * once, and no feed is that fast, so there every read goes to the database.
 */
export class SettingsCache {
  private readonly entries = new Map<string, Entry>()
  /** Entries in insertion order, for eviction; an entry dropped meanwhile is skipped. */
  private queue: Array<[string, Entry] | undefined> = []
  private head = 0
  private bytes = 0
  private generation = 0

  private readonly enabled: boolean
  private readonly maxEntryBytes: number

  /** `maxBytes`: the answers' bytes it may hold in all; 0 turns it off. */
  constructor(
    private readonly changes: ChangeFeed,
    private readonly maxBytes: number,
  ) {
    this.enabled = maxBytes > 0
    this.maxEntryBytes = Math.min(MAX_ENTRY_BYTES, maxBytes)
    // Deleted tokens and changed users change no settings.
    changes.onChange((change) => {
      if (isWhole(change)) this.clear()
    })
  }

  getList(userId: string, clientId: string): string | undefined {
    return this.entry(userId, clientId)?.list
  }

  getOne(userId: string, clientId: string, key: string): CachedSetting | undefined {
    return this.entry(userId, clientId)?.keys?.get(key)
  }

  /** Taken before reading from the database; a `set…` keeps the answer only if nothing changed since. */
  ticket(): number {
    return this.generation
  }

  setList(userId: string, clientId: string, body: string, ticket: number): void {
    const entry = this.room(userId, clientId, body.length, ticket)
    if (!entry || entry.list !== undefined) return
    entry.list = body
    this.grow(entry, body.length)
  }

  setOne(userId: string, clientId: string, key: string, answer: CachedSetting, ticket: number): void {
    const size = key.length + answer.body.length + answer.etag.length + HEADERS_BYTES
    const entry = this.room(userId, clientId, size, ticket)
    if (!entry || entry.keys?.has(key)) return
    ;(entry.keys ??= new Map()).set(key, answer)
    this.grow(entry, size)
  }

  invalidate(userId: string, clientId: string): void {
    this.generation++
    this.drop(userId + '\n' + clientId)
  }

  clear(): void {
    this.generation++
    this.entries.clear()
    this.queue = []
    this.head = 0
    this.bytes = 0
  }

  private entry(userId: string, clientId: string): Entry | undefined {
    if (!this.enabled || !this.changes.check()) return undefined
    return this.entries.get(userId + '\n' + clientId)
  }

  /** The entry that `size` more bytes may join, made room for; undefined when they may not. */
  private room(userId: string, clientId: string, size: number, ticket: number): Entry | undefined {
    if (!this.enabled || ticket !== this.generation) return undefined
    const name = userId + '\n' + clientId
    let entry = this.entries.get(name)
    if ((entry?.bytes ?? 0) + size > this.maxEntryBytes) return undefined
    while (this.bytes + size > this.maxBytes && this.head < this.queue.length) {
      const [oldest, held] = this.queue[this.head]!
      this.queue[this.head++] = undefined
      if (this.entries.get(oldest) === held) this.drop(oldest)
    }
    // The queue drops what the head passed, and entries invalidated by writes (emptied, but
    // queued until the head reaches them) once they outnumber the live ones: it stays within
    // about twice the entries, in amortized constant time.
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head)
      this.head = 0
    }
    if (this.queue.length - this.head > 2 * this.entries.size + 1024) {
      this.queue = this.queue.slice(this.head).filter((queued) => this.entries.get(queued![0]) === queued![1])
      this.head = 0
    }
    if (!entry || this.entries.get(name) !== entry) {
      entry = { list: undefined, keys: undefined, bytes: 0 }
      this.entries.set(name, entry)
      this.queue.push([name, entry])
    }
    return entry
  }

  private grow(entry: Entry, size: number): void {
    entry.bytes += size
    this.bytes += size
  }

  private drop(name: string): void {
    const entry = this.entries.get(name)
    if (entry === undefined) return
    this.entries.delete(name)
    this.bytes -= entry.bytes
    // Its answers go now, though the queue may hold the entry a while longer.
    entry.list = undefined
    entry.keys = undefined
    entry.bytes = 0
  }
}
