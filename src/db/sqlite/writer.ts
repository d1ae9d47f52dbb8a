import type { Database, Statement } from 'bun:sqlite'

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown }

/** What a batch's jobs emitted (SqliteChangeFeed): kept to a savepoint, told after COMMIT. */
export interface Emitted {
  mark(): number
  rollbackTo(mark: number): void
  committed(): void
}

const NOTHING_EMITTED: Emitted = { mark: () => 0, rollbackTo() {}, committed() {} }

interface Job {
  fn: () => unknown
  resolve: (value: any) => void
  reject: (reason: unknown) => void
}

/**
 * Group commit: every write of the app goes through `write(fn)`. Writes that arrive in the
 * same turn of the event loop run in one transaction and share one COMMIT — one fsync under
 * synchronous=FULL. A job's promise settles only after the COMMIT succeeded; if the COMMIT
 * fails, every job of the batch is rejected, so nothing is acknowledged that is not on disk.
 *
 * One failing job must not undo the others. Jobs first run without savepoints (they cost two
 * statements per job); if one throws, the batch is rolled back and run again with a savepoint
 * around each job. Jobs are therefore plain functions of the database state: running one
 * again after a rollback is the same as running it once. What the jobs emitted for the caches
 * (`emitted`) follows the same fate: forgotten with what rolled back, told after the COMMIT and
 * before any job's promise settles, so a writer resumes with the caches already told.
 */
export class Writer {
  private queue: Job[] = []
  /** Writes waiting, writes done, and the seconds their batches took (the metrics read them). */
  readonly stats = { waiting: 0, operations: 0, seconds: 0 }
  /**
   * Moves on as each batch begins and as it ends, committed or rolled back: odd while one runs.
   * What this connection wrote can only have changed when it moved (ClientCache).
   */
  epoch = 0
  private scheduled = false
  private held = false
  // Compiled once: Database.run() would compile these on every job.
  private readonly begin: Statement
  private readonly commit: Statement
  private readonly savepoint: Statement
  private readonly releaseSavepoint: Statement
  private readonly rollbackTo: Statement
  private readonly rollback: Statement

  constructor(
    private readonly sqlite: Database,
    private readonly emitted: Emitted = NOTHING_EMITTED,
  ) {
    this.begin = sqlite.prepare('BEGIN IMMEDIATE')
    this.commit = sqlite.prepare('COMMIT')
    this.savepoint = sqlite.prepare('SAVEPOINT job')
    this.releaseSavepoint = sqlite.prepare('RELEASE job')
    this.rollbackTo = sqlite.prepare('ROLLBACK TO job')
    this.rollback = sqlite.prepare('ROLLBACK')
  }

  write<T>(fn: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve, reject })
      this.stats.waiting = this.queue.length
      this.schedule()
    })
  }

  /**
   * Holds writes back (they queue; reads go on) until `release()`: the checkpointer's moment to
   * copy the last of the WAL so it can be reused from its start (see Checkpointer).
   */
  hold(): void {
    this.held = true
  }

  release(): void {
    this.held = false
    this.schedule()
  }

  private schedule(): void {
    if (this.scheduled || this.held || this.queue.length === 0) return
    this.scheduled = true
    setImmediate(this.scheduledFlush)
  }

  private readonly scheduledFlush = (): void => {
    if (this.held) this.scheduled = false
    else this.flush()
  }

  /** Runs the queued jobs now, held or not; exposed for shutdown. */
  readonly flush = (): void => {
    this.scheduled = false
    const jobs = this.queue
    if (jobs.length === 0) return
    this.queue = []
    this.stats.waiting = 0
    const started = performance.now()
    let outcomes: Outcome[]
    this.epoch++
    try {
      outcomes = this.runOptimistic(jobs) ?? this.runIsolated(jobs)
      this.commit.run()
      this.stats.operations += jobs.length
      this.stats.seconds += (performance.now() - started) / 1000
    } catch (error) {
      if (this.sqlite.inTransaction) this.rollback.run()
      this.epoch++
      this.emitted.rollbackTo(0)
      for (const job of jobs) job.reject(error)
      return
    }
    this.epoch++
    this.emitted.committed()
    jobs.forEach((job, i) => {
      const outcome = outcomes[i]!
      if (outcome.ok) job.resolve(outcome.value)
      else job.reject(outcome.error)
    })
  }

  /** All jobs in one transaction; undefined (and rolled back) as soon as one throws. */
  private runOptimistic(jobs: Job[]): Outcome[] | undefined {
    this.begin.run()
    const outcomes: Outcome[] = []
    for (const job of jobs) {
      try {
        outcomes.push({ ok: true, value: job.fn() })
      } catch {
        this.rollback.run()
        this.emitted.rollbackTo(0)
        return undefined
      }
    }
    return outcomes
  }

  /** Each job in its own savepoint, so a failing one leaves no trace. */
  private runIsolated(jobs: Job[]): Outcome[] {
    this.begin.run()
    return jobs.map((job) => this.runJob(job))
  }

  private runJob(job: Job): Outcome {
    this.savepoint.run()
    const mark = this.emitted.mark()
    try {
      const value = job.fn()
      this.releaseSavepoint.run()
      return { ok: true, value }
    } catch (error) {
      this.rollbackTo.run()
      this.emitted.rollbackTo(mark)
      this.releaseSavepoint.run()
      return { ok: false, error }
    }
  }
}
