import type { ChangeFeed } from '../db/store'

const MAX_BYTES = 16 * 1024 * 1024
const MAX_ENTRY_BYTES = 256 * 1024

/**
 * The serialized `GET /api/settings` body of each (user, application), built once and reused
 * until that user's settings for that application change. Writers drop the entry before and
 * after their write; a body read while anything was invalidated is not kept (the generation
 * moved on); a change reported by the feed drops everything, and while the feed is down nothing
 * is served from here. Bounded by size: large lists are not kept, and the oldest go first.
 * Only SQLite uses it: on PostgreSQL another instance's write must be seen at once, and no feed
 * is that fast, so there every list is read from the database.
 */
export class SettingsCache {
  private readonly bodies = new Map<string, string>()
  private bytes = 0
  private generation = 0

  constructor(
    private readonly changes: ChangeFeed,
    private readonly enabled: boolean,
  ) {
    changes.onChange(() => this.clear())
  }

  get(userId: string, clientId: string): string | undefined {
    if (!this.enabled || !this.changes.check()) return undefined
    return this.bodies.get(userId + '\n' + clientId)
  }

  /** Taken before reading a body from the database; `set` keeps it only if nothing changed since. */
  ticket(): number {
    return this.generation
  }

  set(userId: string, clientId: string, body: string, ticket: number): void {
    if (!this.enabled || ticket !== this.generation || body.length > MAX_ENTRY_BYTES) return
    const key = userId + '\n' + clientId
    this.drop(key)
    while (this.bytes + body.length > MAX_BYTES && this.bodies.size > 0) this.drop(this.bodies.keys().next().value!)
    this.bodies.set(key, body)
    this.bytes += body.length
  }

  invalidate(userId: string, clientId: string): void {
    this.generation++
    this.drop(userId + '\n' + clientId)
  }

  clear(): void {
    this.generation++
    this.bodies.clear()
    this.bytes = 0
  }

  private drop(key: string): void {
    const body = this.bodies.get(key)
    if (body === undefined) return
    this.bodies.delete(key)
    this.bytes -= body.length
  }
}
