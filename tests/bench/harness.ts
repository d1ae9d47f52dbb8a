/**
 * The shapes `run.ts` shares with the scale section (`scale.ts`, `soak.ts`), here because
 * `run.ts` runs its benchmark when imported.
 */
import type { Subprocess } from 'bun'

export interface Server {
  name: string
  url: string
  proc: Subprocess
  dir: string
  /** The processes whose CPU and memory a case counts (the instances behind a balancer). */
  procs?: Subprocess[]
  /** What the CLI needs besides the folder (the PostgreSQL URL). */
  env?: Record<string, string>
}

export interface WrkResult {
  requests: number
  rps: number
  p50ms: number
  p99ms: number
  non2xx: number
  socketErrors: number
}

export interface Case {
  name: string
  server: () => Server
  path: string
  headers?: Record<string, string>
  script?: string
  env?: Record<string, string>
  /** wrk's connections for this case (BENCH_CONNECTIONS otherwise). */
  connections?: number
  /**
   * Every answer is this status (a refusal by design: a device poll that finds nothing), checked
   * by the script (polls.lua), which counts the answers that are not; otherwise any non-2xx fails the run.
   */
  expectStatus?: number
  /** This case's warm-up, in seconds (BENCH_WARMUP otherwise): long enough to reach its steady state. */
  warmup?: number
  /** Sets up fresh inputs (codes) before the warm-up, and before the run from the warm-up's result. */
  before?: (warmup?: WrkResult) => Promise<Record<string, string>>
}

export interface Row extends WrkResult {
  name: string
  cpuUsPerReq: number
  rssMb: number
  /** What the server made the disk read and write, per request (page-cache hits not counted). */
  diskReadKbPerReq: number
  diskWriteKbPerReq: number
}

export interface PgCluster {
  url: string
  /** A new database on the cluster; its URL. */
  database(name: string): Promise<string>
  stop(): void
}

/** What the scale section uses of `run.ts`. */
export interface Harness {
  ensureBinary(): string
  fail(message: string): never
  spawnServer(name: string, cmd: string[], env: Record<string, string>, healthPath: string, cwd?: string): Promise<Server & { env: Record<string, string> }>
  stopServer(s: Server): Promise<void>
  cli(server: Pick<Server, 'dir' | 'url' | 'env'>, bin: string, args: string[], stdin?: string): string
  measure(c: Case): Promise<Row>
  signIn(url: string, email: string, password: string): Promise<string>
  startPgCluster(): Promise<PgCluster>
}
