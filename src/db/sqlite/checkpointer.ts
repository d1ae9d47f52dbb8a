import type { Database } from 'bun:sqlite'

/** How often the checkpointer copies the WAL into the database file. */
export const CHECKPOINT_INTERVAL_MS = 500
/** A WAL this long (4 KiB pages: 16 MiB) is rewound once a checkpoint has nearly caught up. */
export const WAL_RESET_FRAMES = 4096
/** "Nearly": what the serving connection may still have to copy itself before the rewind. */
const CAUGHT_UP_FRAMES = 256

// The worker's code, inline: a Blob URL works the same from source and from the compiled binary,
// where a worker file would need its own build entry point.
const WORKER = `
import { Database } from 'bun:sqlite'
let db
let timer
self.onmessage = (event) => {
  if (event.data === 'stop') {
    clearInterval(timer)
    db?.close()
    postMessage({ stopped: true })
    return
  }
  db = new Database(event.data.path)
  db.run('PRAGMA busy_timeout = 5000')
  db.run('PRAGMA synchronous = FULL')
  const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)')
  const { resetFrames, caughtUpFrames } = event.data
  timer = setInterval(() => {
    try {
      let { log, checkpointed } = checkpoint.get()
      // Under a steady write load the copy never quite catches up: once more, then ask.
      if (log >= resetFrames && log - checkpointed > caughtUpFrames) ({ log, checkpointed } = checkpoint.get())
      if (log >= resetFrames && log - checkpointed <= caughtUpFrames) postMessage({ rewind: true })
    } catch (error) {
      postMessage({ error: String(error) })
    }
  }, event.data.intervalMs)
}
`

/**
 * WAL checkpoints off the event loop. The serving connection never checkpoints
 * (`wal_autocheckpoint = 0`), so no request waits while a commit copies the WAL into the file and
 * fsyncs it; a Worker with its own connection runs a PASSIVE checkpoint every 500 ms instead,
 * which never waits for a lock and never blocks a reader or the writer. Durability is the
 * commit's fsync of the WAL, as before.
 *
 * The WAL is reused from its start by the first write after a checkpoint that copied all of it.
 * Under a steady write load the worker's checkpoint never does — a commit always lands while it
 * copies — and the WAL grew without end (~1 GB in 20 s of the soak). So once the WAL is past
 * WAL_RESET_FRAMES and a worker checkpoint has nearly caught up, the serving connection copies
 * the rest itself, between two write batches (the last few hundred pages: a short pause), and
 * its next write rewinds the WAL; journal_size_limit then trims the file.
 * If the worker fails, the serving connection checkpoints by itself again (SQLite's default).
 * The worker is not ref'd: it never keeps a process (the CLI) alive.
 */
export class Checkpointer {
  private readonly worker: Worker
  private stopped?: () => void

  constructor(sqlite: Database, path: string, onFailure: (message: string) => void, resetFrames = WAL_RESET_FRAMES) {
    sqlite.run('PRAGMA wal_autocheckpoint = 0')
    sqlite.run(`PRAGMA journal_size_limit = ${resetFrames * 4096}`)
    const catchUp = sqlite.prepare('PRAGMA wal_checkpoint(PASSIVE)')
    const url = URL.createObjectURL(new Blob([WORKER], { type: 'application/javascript' }))
    this.worker = new Worker(url, { ref: false, smol: true })
    const fallBack = (message: string) => {
      sqlite.run('PRAGMA wal_autocheckpoint = 1000')
      onFailure(message)
    }
    this.worker.addEventListener('message', (event: MessageEvent<{ error?: string; stopped?: boolean; rewind?: boolean }>) => {
      if (event.data.error) fallBack(event.data.error)
      if (event.data.stopped) this.stopped?.()
      // Between event-loop tasks: no write transaction is open (the writer's jobs are synchronous).
      if (event.data.rewind && !sqlite.inTransaction) catchUp.get()
    })
    this.worker.addEventListener('error', (event) => fallBack(String((event as ErrorEvent).message)))
    this.worker.postMessage({ path, intervalMs: CHECKPOINT_INTERVAL_MS, resetFrames, caughtUpFrames: CAUGHT_UP_FRAMES })
  }

  /**
   * Waits (up to a second) until the worker closed its connection — a checkpoint in flight would
   * otherwise keep the final TRUNCATE checkpoint from emptying the WAL — then ends it.
   */
  async stop(): Promise<void> {
    const closed = new Promise<void>((resolve) => (this.stopped = resolve))
    this.worker.postMessage('stop')
    await Promise.race([closed, Bun.sleep(1000)])
    this.worker.terminate()
  }
}
