import type { Database, Statement } from 'bun:sqlite'

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
  // Compiled once: Database.run() would compile these on every job.
  private readonly begin: Statement
  private readonly commit: Statement
  private readonly savepoint: Statement
  private readonly release: Statement
  private readonly rollbackTo: Statement

  constructor(private readonly sqlite: Database) {
    this.begin = sqlite.prepare('BEGIN IMMEDIATE')
    this.commit = sqlite.prepare('COMMIT')
    this.savepoint = sqlite.prepare('SAVEPOINT job')
    this.release = sqlite.prepare('RELEASE job')
    this.rollbackTo = sqlite.prepare('ROLLBACK TO job')
  }

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
      this.begin.run()
      for (const job of jobs) outcomes.push(this.runJob(job))
      this.commit.run()
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
    this.savepoint.run()
    try {
      const value = job.fn()
      this.release.run()
      return { ok: true, value }
    } catch (error) {
      this.rollbackTo.run()
      this.release.run()
      return { ok: false, error }
    }
  }
}
