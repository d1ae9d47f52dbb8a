import type { LogLevel } from '../config'

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 }

export type LogFields = Record<string, string | number | boolean | null | undefined>

export interface Logger {
  debug(msg: string, fields?: LogFields): void
  info(msg: string, fields?: LogFields): void
  warn(msg: string, fields?: LogFields): void
  error(msg: string, fields?: LogFields): void
  /** The access log line: method, path (never the query), status, duration, request id, client address. */
  request(method: string, path: string, status: number, ms: number, requestId: string, client: string): void
  /** Whether `request` writes anything: the server skips finding the client address when not. */
  readonly logsRequests: boolean
  flush(): void
  /** Writes what is buffered and waits (at most `ms`) until it is out: at exit. */
  drain(ms?: number): Promise<void>
}

/** Where log lines go: each line as it is made, then a flush every few milliseconds. */
export interface LogSink {
  write(line: string): void
  flush(): void
  drain?(ms: number): Promise<void>
}

/** How long a line may wait in memory before it is written: one write call per this, not per request. */
export const LOG_FLUSH_MS = 20

/**
 * JSON lines on stdout, written every LOG_FLUSH_MS (or every 1,024 lines) in one batch, so
 * logging a request costs building its line and pushing it on an array — not a native write
 * per line, nor a write call per event-loop turn. Callers
 * pass only safe fields: never a token, code, secret, password or query string. A function
 * given as the sink receives each line (tests).
 */
export function createLogger(level: LogLevel, out: LogSink | ((line: string) => void) = stdoutSink()): Logger {
  const min = RANK[level]
  const sink: LogSink = typeof out === 'function' ? { write: out, flush() {} } : out
  let scheduled = false
  const flush = () => {
    scheduled = false
    sink.flush()
  }
  let lastMs = 0
  let lastIso = ''
  const time = () => {
    const ms = Date.now()
    if (ms !== lastMs) lastIso = new Date((lastMs = ms)).toISOString()
    return lastIso
  }
  const push = (line: string) => {
    sink.write(line)
    if (!scheduled) {
      scheduled = true
      setTimeout(flush, LOG_FLUSH_MS)
    }
  }
  const emit = (lvl: LogLevel, msg: string, fields?: LogFields) => {
    if (RANK[lvl] >= min) push(JSON.stringify({ time: time(), level: lvl, msg, ...fields }) + '\n')
  }
  const logRequests = RANK.info >= min
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    // Built by hand: it runs on every request. Request ids need no escaping.
    request: (method, path, status, ms, requestId, client) => {
      if (logRequests)
        push(`{"time":"${time()}","level":"info","msg":"request","method":${quoted(method)},"path":${quoted(path)},"status":${status},"ms":${ms},"request_id":"${requestId}","client":${quoted(client)}}\n`)
    },
    logsRequests: logRequests,
    flush,
    drain: (ms = 2000) => sink.drain?.(ms) ?? Promise.resolve(),
  }
}

/** Printable ASCII but `"` and `\\`: a JSON string as it is. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/

/**
 * A JSON string: a method, path or address — plain nearly always — quoted as it is, anything else
 * escaped by JSON.stringify (it cost the access log line ~0.1 µs a value, three a request).
 */
export const quoted = (text: string): string => (PLAIN.test(text) ? `"${text}"` : JSON.stringify(text))

/** What may wait for a blocked stdout (a slow pipe) before lines are dropped, and counted. */
export const LOG_BUFFER_MAX = 4 * 1024 * 1024

/**
 * Bun's native stdout sink (process.stdout would load Node's stream emulation, ~7 MB). Its buffer
 * grows without end while stdout does not take what is written (measured: 200 MB of lines into a
 * pipe nobody reads, RSS 226 MB), so lines are counted: past LOG_BUFFER_MAX waiting, new lines
 * are dropped — the server goes on serving — and once stdout takes writes again, one warning line
 * says how many were lost.
 */
function stdoutSink(): LogSink {
  let sink: ReturnType<typeof Bun.stdout.writer> | undefined
  // Lines are kept as strings and handed to the native sink joined, a batch at a time: one
  // FileSink.write per line cost a request ~2.8 µs of CPU (measured), joining them ~0.2 µs.
  const lines: string[] = []
  let waiting = 0
  let dropped = 0
  let pending: Promise<unknown> | undefined
  const writer = () => (sink ??= Bun.stdout.writer({ highWaterMark: 256 * 1024 }))
  const handOver = () => {
    if (lines.length === 0) return
    writer().write(lines.join(''))
    lines.length = 0
  }
  const written = () => {
    pending = undefined
    waiting = 0
    if (dropped === 0) return
    const note = `{"time":"${new Date().toISOString()}","level":"warn","msg":"log lines dropped: stdout did not take them","dropped":${dropped}}\n`
    dropped = 0
    waiting = note.length
    writer().write(note)
  }
  const flush = () => {
    handOver()
    if (pending || !sink) return
    const result = sink.flush()
    if (typeof result === 'number') return written()
    pending = result.then(written, written)
  }
  return {
    write(line) {
      if (waiting + line.length > LOG_BUFFER_MAX) return void dropped++
      waiting += line.length
      lines.push(line)
      if (lines.length >= 1024) handOver()
    },
    flush,
    async drain(ms) {
      const deadline = performance.now() + ms
      for (flush(); pending; flush()) {
        const left = deadline - performance.now()
        if (left <= 0 || (await Promise.race([pending.then(() => true), Bun.sleep(left).then(() => false)])) === false) return
      }
    },
  }
}

export const silentLogger: Logger = createLogger('error', () => {})

/** The id the server gave each request, for the error log of a 500 and the access log. */
export const requestIds = new WeakMap<Request, string>()

const idPrefix = Math.random().toString(36).slice(2, 8)
let idCounter = 0
export function nextRequestId(): string {
  idCounter = (idCounter + 1) % Number.MAX_SAFE_INTEGER
  return `${idPrefix}-${idCounter.toString(36)}`
}

export function requestIdOf(request: Request): string {
  let id = requestIds.get(request)
  if (!id) {
    id = nextRequestId()
    requestIds.set(request, id)
  }
  return id
}
