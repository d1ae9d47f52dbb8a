/** One Server-Sent Event as a reader sees it (comments and `retry:` lines are skipped). */
export interface SseEvent {
  id?: string
  event?: string
  data?: string
}

/**
 * Reads Server-Sent Events from a response body, as EventSource parses them (WHATWG HTML
 * §9.2.6): fields per line, an event per blank line. `next()` waits for the next event, up to
 * a generous bound, and says `undefined` when the stream ended.
 */
export class SseReader {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>
  private readonly decoder = new TextDecoder()
  private buffer = ''
  private done = false

  constructor(response: Response) {
    this.reader = response.body!.getReader()
  }

  async next(timeoutMs = 5000): Promise<SseEvent | undefined> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const parsed = this.take()
      if (parsed) return parsed
      if (this.done) return undefined
      const remaining = deadline - Date.now()
      if (remaining <= 0) throw new Error(`no event within ${timeoutMs} ms (buffer: ${JSON.stringify(this.buffer)})`)
      let timer: ReturnType<typeof setTimeout> | undefined
      const chunk = await Promise.race([
        this.reader.read(),
        new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), remaining))),
      ]).finally(() => clearTimeout(timer))
      if (chunk === 'timeout') continue
      if (chunk.done) this.done = true
      else this.buffer += this.decoder.decode(chunk.value, { stream: true })
    }
  }

  /** Events until (and with) the first that `until` accepts. */
  async collect(until: (e: SseEvent) => boolean, timeoutMs = 5000): Promise<SseEvent[]> {
    const out: SseEvent[] = []
    for (;;) {
      const e = await this.next(timeoutMs)
      if (!e) return out
      out.push(e)
      if (until(e)) return out
    }
  }

  /** The raw text received so far that is not yet an event (comments included). */
  get pending(): string {
    return this.buffer
  }

  cancel(): Promise<void> {
    return this.reader.cancel()
  }

  private take(): SseEvent | undefined {
    for (;;) {
      const end = this.buffer.indexOf('\n\n')
      if (end < 0) return undefined
      const block = this.buffer.slice(0, end)
      this.buffer = this.buffer.slice(end + 2)
      const event: SseEvent = {}
      let fields = 0
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue
        const colon = line.indexOf(':')
        const name = colon < 0 ? line : line.slice(0, colon)
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
        if (name === 'id' || name === 'event') event[name] = value
        else if (name === 'data') event.data = event.data === undefined ? value : `${event.data}\n${value}`
        else continue
        fields++
      }
      if (fields > 0) return event
    }
  }
}
