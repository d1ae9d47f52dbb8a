import type { Database } from 'bun:sqlite'
import { statSync } from 'node:fs'

/**
 * How often the checkpointer copies the WAL into the database file. (Every 100 ms cut the write
 * p99 a little more over 100,000 users, but cost 12 % of the writes over 1,000: a page written
 * often is copied each time.)
 */
export const CHECKPOINT_INTERVAL_MS = 500
/**
 * A WAL this long (4 KiB pages: 256 MiB) is reused from its start: see Checkpointer. Longer
 * means rarer holds: at 128 MiB the same-key POST p99 over 1,000 users read 14–19 ms, at 256
 * MiB 8–11 ms. The file only grows this far under a steady write load; otherwise every write
 * after a complete copy starts it over.
 */
export const WAL_RESET_FRAMES = 65_536
/** The WAL's length (4 KiB pages: ~4 MiB) at which the worker starts: see Checkpointer. */
export const WORKER_AFTER_FRAMES = 1000
/** Frames a held copy may have left to do: ~4 MiB. */
const CAUGHT_UP_FRAMES = 1024
/**
 * How long writes are held back for the copy that lets the WAL start over: briefly while the WAL
 * is under twice its limit (a copy that takes longer lets them go, and a later tick tries
 * again), up to HOLD_AT_MOST_MS past it (a bounded WAL comes first).
 */
export const BRIEF_HOLD_MS = 8
export const HOLD_AT_MOST_MS = 250

/** The longest hold for a WAL of `frames` frames (see BRIEF_HOLD_MS). */
export function holdLimitMs(frames: number, resetFrames: number): number {
  return frames < 2 * resetFrames ? BRIEF_HOLD_MS : HOLD_AT_MOST_MS
}

/** What the serving side does for the checkpointer: hold writes back for a moment, and go on. */
export interface Holdable {
  hold(): void
  release(): void
}

// The worker's code, inline: a Blob URL works the same from source and from the compiled binary,
// where a worker file would need its own build entry point.
const WORKER = `
import { Database } from 'bun:sqlite'
let db
let checkpoint
let timer
let holding = false
self.onmessage = (event) => {
  if (event.data === 'stop') {
    clearInterval(timer)
    db?.close()
    postMessage({ stopped: true })
    return
  }
  if (event.data === 'held') {
    // No write can land now: this copy catches up, and the next write starts the WAL over.
    try {
      checkpoint.get()
    } catch (error) {
      postMessage({ error: String(error) })
    }
    holding = false
    postMessage({ release: true })
    return
  }
  db = new Database(event.data.path)
  db.run('PRAGMA busy_timeout = 5000')
  db.run('PRAGMA synchronous = FULL')
  checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)')
  const { resetFrames, caughtUpFrames } = event.data
  timer = setInterval(() => {
    if (holding) return
    try {
      let { log } = checkpoint.get()
      if (log < resetFrames) return
      // Copy again while the last copy took long enough for many frames to land behind it, so
      // the held copy has little left to do (a few rounds at most: under more writes than the
      // disk can copy, holding them back is what bounds the WAL).
      for (let round = 0; round < 4; round++) {
        const before = log
        log = checkpoint.get().log
        if (log - before <= caughtUpFrames) break
      }
      holding = true
      postMessage({ hold: true, frames: log })
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
 * WAL_RESET_FRAMES, right after a copy, the worker asks the serving side to hold writes back
 * (they queue; reads and the event loop go on), copies what came meanwhile, and lets them go:
 * the next write starts the WAL over, and journal_size_limit trims the file. Writes wait for
 * that copy and its fsync (2–3 ms) about once per 256 MiB written — but that fsync may also
 * have to flush what the last copies wrote all over a large file (150–300 ms, measured on 10M
 * settings rows written over 100,000 users), so a hold lets writes go after BRIEF_HOLD_MS and
 * the WAL starts over at a later try; past twice its limit, holds may last HOLD_AT_MOST_MS.
 *
 * The worker starts once the WAL first passes WORKER_AFTER_FRAMES (SQLite's own auto-checkpoint
 * point: a WAL this long is what any SQLite database may hold): a server that is mostly read never
 * pays its thread and its engine (~4.6 MB of RSS, measured idle), and until then nothing is
 * copied, as SQLite would not copy either. The main thread looks at the WAL's size every
 * CHECKPOINT_INTERVAL_MS meanwhile (one stat).
 *
 * If the worker fails, the serving connection checkpoints by itself again (SQLite's default).
 * The worker is not ref'd: it never keeps a process (the CLI) alive.
 */
export class Checkpointer {
  private worker?: Worker
  private readonly watch?: ReturnType<typeof setInterval>
  private stopped?: () => void
  private holdLimit?: ReturnType<typeof setTimeout>

  constructor(
    private readonly sqlite: Database,
    private readonly path: string,
    private readonly writes: Holdable,
    private readonly onFailure: (message: string) => void,
    private readonly resetFrames = WAL_RESET_FRAMES,
    workerAfterFrames = WORKER_AFTER_FRAMES,
  ) {
    sqlite.run('PRAGMA wal_autocheckpoint = 0')
    sqlite.run(`PRAGMA journal_size_limit = ${resetFrames * 4096}`)
    const startAt = walBytes(workerAfterFrames)
    if (walSize(path) >= startAt) {
      this.start()
      return
    }
    this.watch = setInterval(() => {
      if (walSize(path) < startAt) return
      clearInterval(this.watch)
      this.start()
    }, CHECKPOINT_INTERVAL_MS)
    this.watch.unref()
  }

  /** Whether the worker runs (it starts once the WAL is long enough). */
  get running(): boolean {
    return this.worker !== undefined
  }

  private start(): void {
    const url = URL.createObjectURL(new Blob([WORKER], { type: 'application/javascript' }))
    const worker = (this.worker = new Worker(url, { ref: false, smol: true }))
    const release = () => {
      clearTimeout(this.holdLimit)
      this.holdLimit = undefined
      this.writes.release()
    }
    const fallBack = (message: string) => {
      release()
      this.sqlite.run('PRAGMA wal_autocheckpoint = 1000')
      this.onFailure(message)
    }
    worker.addEventListener('message', (event: MessageEvent<{ error?: string; stopped?: boolean; hold?: boolean; frames?: number; release?: boolean }>) => {
      if (event.data.error) fallBack(event.data.error)
      if (event.data.stopped) this.stopped?.()
      if (event.data.hold) {
        // Between event-loop tasks no write transaction is open (the writer's jobs are synchronous).
        this.writes.hold()
        this.holdLimit = setTimeout(release, holdLimitMs(event.data.frames ?? 0, this.resetFrames))
        this.holdLimit.unref()
        worker.postMessage('held')
      }
      if (event.data.release) release()
    })
    worker.addEventListener('error', (event) => fallBack(String((event as ErrorEvent).message)))
    worker.postMessage({ path: this.path, intervalMs: CHECKPOINT_INTERVAL_MS, resetFrames: this.resetFrames, caughtUpFrames: CAUGHT_UP_FRAMES })
  }

  /**
   * Waits (up to a second) until the worker closed its connection — a checkpoint in flight would
   * otherwise keep the final TRUNCATE checkpoint from emptying the WAL — then ends it.
   */
  async stop(): Promise<void> {
    clearInterval(this.watch)
    const worker = this.worker
    if (!worker) return
    const closed = new Promise<void>((resolve) => (this.stopped = resolve))
    worker.postMessage('stop')
    await Promise.race([closed, Bun.sleep(1000)])
    clearTimeout(this.holdLimit)
    this.writes.release()
    worker.terminate()
  }
}

/** The WAL's length in bytes (0 while there is none); one that cannot be read starts the worker. */
function walSize(path: string): number {
  try {
    return statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0
  } catch {
    return Infinity
  }
}

/** A WAL of `frames` 4 KiB pages: its 32-byte header, and a 24-byte header per frame. */
function walBytes(frames: number): number {
  return 32 + frames * (24 + 4096)
}
