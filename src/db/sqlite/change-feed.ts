import type { Database, Statement } from 'bun:sqlite'
import type { Change, ChangeFeed } from '../store'

/**
 * Every write that in-process caches must hear of, from one feed: this process's own — the
 * store's write paths `emit` what they change inside their job, and it is told once the COMMIT
 * succeeded (dropped if the job rolled back) — and commits made by other connections — the CLI
 * while the server runs — through `PRAGMA data_version`, which changes exactly then (and not
 * for this connection's own commits); those name nothing, so caches drop all they hold.
 */
export class SqliteChangeFeed implements ChangeFeed {
  private readonly version: Statement<{ data_version: number }>
  private seen: number
  private checkedThisTurn = false
  /** Moves on with each event-loop turn in which the feed was checked. */
  turn = 0
  private readonly listeners: Array<(change?: Change) => void> = []
  /** Emitted by the open transaction, told at its COMMIT. */
  private pending: Change[] = []
  private readonly nextTurn = () => {
    this.checkedThisTurn = false
  }

  constructor(sqlite: Database) {
    this.version = sqlite.query('PRAGMA data_version')
    this.seen = this.version.get()!.data_version
  }

  onChange(listener: (change?: Change) => void): void {
    this.listeners.push(listener)
  }

  /** A write job's change, told after its transaction commits. */
  emit(change: Change): void {
    this.pending.push(change)
  }

  /** Where the open transaction's changes stand: a savepoint rolled back to it forgets the later ones. */
  mark(): number {
    return this.pending.length
  }

  rollbackTo(mark: number): void {
    this.pending.length = mark
  }

  /** The transaction committed: every cache hears what it changed, before any of its writers resumes. */
  committed(): void {
    if (this.pending.length === 0) return
    const changes = this.pending
    this.pending = []
    for (const change of changes) for (const listener of this.listeners) listener(change)
  }

  /**
   * Call before trusting a cache. The PRAGMA opens a read snapshot (~0.7 µs), so it runs once
   * per event-loop turn: every request handled in a turn was read from its socket before the
   * turn began, and a request sent after another process's commit lands in a later turn.
   */
  check(): boolean {
    if (this.checkedThisTurn) return true
    this.checkedThisTurn = true
    this.turn++
    setImmediate(this.nextTurn)
    const now = this.version.get()!.data_version
    if (now === this.seen) return true
    this.seen = now
    for (const listener of this.listeners) listener()
    return true
  }
}
