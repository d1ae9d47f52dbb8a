import type { ExternalWrites } from '../db/external-writes'

const MAX_BYTES = 16 * 1024 * 1024
const MAX_ENTRY_BYTES = 256 * 1024

/**
 * The serialized `GET /api/settings` body of each (user, application), built once and reused
 * until that user's settings for that application change. Every write job drops its entry
 * before it commits; a commit from another process (CLI deletions) drops everything. Bounded
 * by size: large lists are not kept, and the oldest entries go first.
 */
export class SettingsCache {
  private readonly bodies = new Map<string, string>()
  private bytes = 0

  constructor(private readonly external: ExternalWrites) {
    external.onChange(() => this.clear())
  }

  get(userId: string, clientId: string): string | undefined {
    this.external.check()
    return this.bodies.get(userId + '\n' + clientId)
  }

  set(userId: string, clientId: string, body: string): void {
    if (body.length > MAX_ENTRY_BYTES) return
    const key = userId + '\n' + clientId
    this.drop(key)
    while (this.bytes + body.length > MAX_BYTES && this.bodies.size > 0) this.drop(this.bodies.keys().next().value!)
    this.bodies.set(key, body)
    this.bytes += body.length
  }

  invalidate(userId: string, clientId: string): void {
    this.drop(userId + '\n' + clientId)
  }

  clear(): void {
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
