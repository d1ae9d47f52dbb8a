import type { Database } from 'bun:sqlite'

/** How often the checkpointer copies the WAL into the database file. */
export const CHECKPOINT_INTERVAL_MS = 500

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
  timer = setInterval(() => {
    try {
      checkpoint.get()
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
 * which never waits for a lock and never blocks a reader or the writer. The WAL is reused from
 * its start once a checkpoint caught up. Durability is the commit's fsync of the WAL, as before.
 * If the worker fails, the serving connection checkpoints by itself again (SQLite's default).
 * The worker is not ref'd: it never keeps a process (the CLI) alive.
 */
export class Checkpointer {
  private readonly worker: Worker
  private stopped?: () => void

  constructor(sqlite: Database, path: string, onFailure: (message: string) => void) {
    sqlite.run('PRAGMA wal_autocheckpoint = 0')
    const url = URL.createObjectURL(new Blob([WORKER], { type: 'application/javascript' }))
    this.worker = new Worker(url, { ref: false, smol: true })
    const fallBack = (message: string) => {
      sqlite.run('PRAGMA wal_autocheckpoint = 1000')
      onFailure(message)
    }
    this.worker.addEventListener('message', (event: MessageEvent<{ error?: string; stopped?: boolean }>) => {
      if (event.data.error) fallBack(event.data.error)
      if (event.data.stopped) this.stopped?.()
    })
    this.worker.addEventListener('error', (event) => fallBack(String((event as ErrorEvent).message)))
    this.worker.postMessage({ path, intervalMs: CHECKPOINT_INTERVAL_MS })
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
