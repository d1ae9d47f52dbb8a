import type { Database, Statement } from 'bun:sqlite'
import type { ChangeFeed } from '../store'

/**
 * Notices commits made by other connections — the CLI deleting a user or an application while
 * the server runs — through `PRAGMA data_version`, which changes exactly then (and not for
 * this connection's own commits). In-process caches subscribe and drop what they hold.
 */
export class ExternalWrites implements ChangeFeed {
  private readonly version: Statement<{ data_version: number }>
  private seen: number
  private checkedThisTurn = false
  private readonly listeners: Array<() => void> = []
  private readonly nextTurn = () => {
    this.checkedThisTurn = false
  }

  constructor(sqlite: Database) {
    this.version = sqlite.query('PRAGMA data_version')
    this.seen = this.version.get()!.data_version
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener)
  }

  /**
   * Call before trusting a cache. The PRAGMA opens a read snapshot (~0.7 µs), so it runs once
   * per event-loop turn: every request handled in a turn was read from its socket before the
   * turn began, and a request sent after another process's commit lands in a later turn.
   */
  check(): boolean {
    if (this.checkedThisTurn) return true
    this.checkedThisTurn = true
    setImmediate(this.nextTurn)
    const now = this.version.get()!.data_version
    if (now === this.seen) return true
    this.seen = now
    for (const listener of this.listeners) listener()
    return true
  }
}
