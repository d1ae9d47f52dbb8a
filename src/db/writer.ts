import type { Database } from 'bun:sqlite'

interface Job {
  fn: () => unknown
  resolve: (value: any) => void
  reject: (reason: unknown) => void
}

/**
 * Group commit: every write of the app goes through `write(fn)`. Writes that arrive in the
 * same turn of the event loop run in one transaction (each in its own savepoint, so one
 * failing job does not undo the others) and share one COMMIT — one fsync under
 * synchronous=FULL. A job's promise settles only after the COMMIT succeeded; if the COMMIT
 * fails, every job of the batch is rejected, so nothing is acknowledged that is not on disk.
 */
export class Writer {
  private queue: Job[] = []
  private scheduled = false

  constructor(private readonly sqlite: Database) {}

  write<T>(fn: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve, reject })
      if (!this.scheduled) {
        this.scheduled = true
        setImmediate(this.flush)
      }
    })
  }

  /** Runs the queued jobs now; exposed for shutdown. */
  readonly flush = (): void => {
    this.scheduled = false
    const jobs = this.queue
    if (jobs.length === 0) return
    this.queue = []
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = []
    try {
      this.sqlite.run('BEGIN IMMEDIATE')
      for (const job of jobs) outcomes.push(this.runJob(job))
      this.sqlite.run('COMMIT')
    } catch (error) {
      if (this.sqlite.inTransaction) this.sqlite.run('ROLLBACK')
      for (const job of jobs) job.reject(error)
      return
    }
    jobs.forEach((job, i) => {
      const outcome = outcomes[i]!
      if (outcome.ok) job.resolve(outcome.value)
      else job.reject(outcome.error)
    })
  }

  private runJob(job: Job): { ok: true; value: unknown } | { ok: false; error: unknown } {
    this.sqlite.run('SAVEPOINT job')
    try {
      const value = job.fn()
      this.sqlite.run('RELEASE job')
      return { ok: true, value }
    } catch (error) {
      this.sqlite.run('ROLLBACK TO job')
      this.sqlite.run('RELEASE job')
      return { ok: false, error }
    }
  }
}
