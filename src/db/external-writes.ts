import type { Database, Statement } from 'bun:sqlite'

/**
 * Notices commits made by other connections — the CLI deleting a user or an application while
 * the server runs — through `PRAGMA data_version`, which changes exactly then (and not for
 * this connection's own commits). In-process caches subscribe and drop what they hold.
 */
export class ExternalWrites {
  private readonly version: Statement<{ data_version: number }>
  private seen: number
  private readonly listeners: Array<() => void> = []

  constructor(sqlite: Database) {
    this.version = sqlite.query('PRAGMA data_version')
    this.seen = this.version.get()!.data_version
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener)
  }

  /** Cheap (one PRAGMA read); call before trusting a cache. */
  check(): void {
    const now = this.version.get()!.data_version
    if (now === this.seen) return
    this.seen = now
    for (const listener of this.listeners) listener()
  }
}
