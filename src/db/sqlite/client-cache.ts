import type { Database, Statement } from 'bun:sqlite'
import { isWhole, type ClientRecord } from '../store'
import type { SqliteChangeFeed } from './change-feed'

/** Clients held at most (ids are never guessed into it: only a row found is kept). */
const CAPACITY = 1000

/**
 * The clients every token, device, PAR and introspection request authenticates, kept in
 * memory on SQLite (issue 38 "Speed": the client's read was a third of a device poll that finds
 * nothing, its page pushed out of SQLite's cache by the device codes' pages). Trusted only
 * while nothing may have changed a client:
 * - this connection's writes to `clients`, whatever writes them (a method of SqliteClients, a
 *   cascade, one added later), count themselves in a TEMP table through TEMP triggers — per
 *   connection, no migration, rolled back with their transaction — and a count that moved
 *   empties the cache before it is read;
 * - other connections' commits (the CLI while the server runs) through the change feed
 *   (`PRAGMA data_version`), which names nothing: the cache is emptied.
 * A row is kept only if the count did not move while it was read (reads are synchronous: it
 * cannot). The count is read again only when it may have moved: in a new turn of the event loop
 * (a statement outside the writer, a test's), or once the writer ran a batch or the store a
 * transaction since (SqliteStore.writeEpoch), and on every read while one runs. Reading it for
 * every request cost a device poll ~1.5 µs of a served ~21 (the one SQL statement a held poll
 * ran; issue 38 "Speed").
 * PostgreSQL's twin, fed by NOTIFY: src/db/pg/client-cache.ts.
 */
export class ClientCache {
  private readonly entries = new Map<string, ClientRecord>()
  private readonly count: Statement<{ n: number }>
  private seenWrites: number
  private listening = false
  /** The feed's turn and the store's write epoch when the count was last read. */
  private countedTurn = -1
  private countedEpoch = -1

  constructor(
    sqlite: Database,
    /** The store this connection writes through (SqliteStore.writeEpoch). */
    private readonly writes: { readonly writeEpoch: number },
  ) {
    sqlite.run('CREATE TEMP TABLE IF NOT EXISTS client_writes (n INTEGER NOT NULL)')
    if (!sqlite.query('SELECT 1 FROM temp.client_writes').get()) sqlite.run('INSERT INTO temp.client_writes (n) VALUES (0)')
    for (const op of ['INSERT', 'UPDATE', 'DELETE'])
      sqlite.run(`CREATE TEMP TRIGGER IF NOT EXISTS client_writes_${op.toLowerCase()} AFTER ${op} ON main.clients BEGIN UPDATE temp.client_writes SET n = n + 1; END`)
    this.count = sqlite.query('SELECT n FROM temp.client_writes')
    this.seenWrites = this.count.get()!.n
  }

  /** The cached row, or undefined (read it, then `keep` it). */
  get(id: string, changes: SqliteChangeFeed): ClientRecord | undefined {
    this.fresh(changes)
    return this.entries.get(id)
  }

  keep(record: ClientRecord): void {
    if (this.entries.size >= CAPACITY) this.entries.clear()
    // Shared by every caller from now on: frozen, so none can change another's client.
    for (const list of [record.redirectUris, record.postLogoutRedirectUris, record.introspects, record.grantTypes, record.allowedScopes]) Object.freeze(list)
    this.entries.set(record.id, Object.freeze(record))
  }

  private fresh(changes: SqliteChangeFeed): void {
    if (!this.listening) {
      this.listening = true
      changes.onChange((change) => {
        if (isWhole(change)) this.entries.clear()
      })
    }
    changes.check()
    const epoch = this.writes.writeEpoch
    // Odd or -1: a batch or a store transaction is running, and any statement of it may write a client.
    if (changes.turn === this.countedTurn && epoch === this.countedEpoch && epoch >= 0 && epoch % 2 === 0) return
    this.countedTurn = changes.turn
    this.countedEpoch = epoch
    const n = this.count.get()!.n
    if (n !== this.seenWrites) {
      this.seenWrites = n
      this.entries.clear()
    }
  }
}
