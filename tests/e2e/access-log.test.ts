/**
 * The access log against the binary: one whole JSON line per request, none lost at SIGTERM, and
 * a stdout that stops taking lines (a pipe nobody reads) costs bounded memory — lines past the
 * bound are dropped and counted, and the server goes on answering.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { closeSync, constants, mkdtempSync, openSync, readSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { testEngine } from '../store'
import { binary, freePort, rssMb, startBinary } from './server'

setDefaultTimeout(90_000)

const dirs: string[] = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

/** `count` GETs of `path`, `concurrency` at a time. */
async function hammer(base: string, path: string, count: number, concurrency = 64): Promise<number[]> {
  const statuses: number[] = []
  let next = 0
  const worker = async () => {
    while (next < count) {
      next++
      const res = await fetch(base + path)
      await res.arrayBuffer()
      statuses.push(res.status)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return statuses
}

const parse = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>)

describe('the access log', () => {
  test('one whole JSON line per request with every field; SIGTERM writes the last of them', async () => {
    const server = await startBinary({ LOG_LEVEL: 'info' })
    try {
      const statuses = await hammer(server.direct, '/api/oauth/userinfo', 3000)
      expect(statuses.every((s) => s === 401)).toBe(true)
      expect(await server.stop('SIGTERM')).toBe(0)
      // Every line parses: none torn, none interleaved.
      const lines = parse(server.output().split('\n').filter((l) => l.startsWith('{')).join('\n'))
      const requests = lines.filter((l) => l.msg === 'request' && l.path === '/api/oauth/userinfo')
      expect(requests.length).toBe(3000)
      expect(new Set(requests.map((l) => l.request_id)).size).toBe(3000)
      expect(Object.keys(requests[0]!)).toEqual(['time', 'level', 'msg', 'method', 'path', 'status', 'ms', 'request_id', 'client'])
      expect(requests[0]).toMatchObject({ level: 'info', method: 'GET', status: 401, client: '127.0.0.1' })
      expect(lines.at(-1)!.msg).toBe('stopped')
    } finally {
      server.cleanup()
    }
  })

  test('a stdout nobody reads: lines past 4 MiB are dropped and counted, the server answers on, and the count is logged once stdout takes lines again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'latchkey-log-'))
    dirs.push(dir)
    const fifo = join(dir, 'stdout.fifo')
    expect(Bun.spawnSync(['mkfifo', fifo]).exitCode).toBe(0)
    // The read end is open (so the server's open of the write end does not wait) but not read.
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK)
    const port = await freePort()
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: dir, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'info' }
    // This test is about the log, not the engine: SQLite in its folder either way.
    if (testEngine === 'postgres') env.DATABASE_URL = join(dir, 'latchkey.sqlite')
    const proc = Bun.spawn([await binary(), 'serve'], { cwd: dir, env, stdin: 'ignore', stdout: Bun.file(fifo), stderr: 'ignore' })
    const base = `http://127.0.0.1:${port}`
    try {
      while (!(await fetch(`${base}/healthz`).then((r) => r.status === 200, () => false))) await Bun.sleep(20)
      const rssBefore = rssMb(proc.pid)
      // ~190 bytes a line: 40,000 lines are ~7.6 MB, past the pipe's 64 KiB and the 4 MiB bound.
      const count = 40_000
      expect((await hammer(base, '/api/oauth/userinfo', count)).every((s) => s === 401)).toBe(true)
      const started = performance.now()
      expect((await fetch(`${base}/healthz`)).status).toBe(200)
      expect(performance.now() - started).toBeLessThan(1000)
      // A coarse guard only (the garbage of 40,000 requests not yet collected is most of it, and
      // 61 MB seen on these shared machines): the bound itself is proven below, by what
      // came out of the pipe.
      expect(rssMb(proc.pid) - rssBefore).toBeLessThan(150)

      // Now read: what waited comes out, then the count of what was dropped.
      let text = ''
      const chunk = Buffer.alloc(1 << 16)
      const readAvailable = () => {
        for (;;) {
          let n: number
          try {
            n = readSync(reader, chunk)
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code === 'EAGAIN') return false
            throw error
          }
          if (n === 0) return true
          text += chunk.toString('utf8', 0, n)
        }
      }
      const deadline = Date.now() + 10_000
      while (!text.includes('log lines dropped') && Date.now() < deadline) {
        readAvailable()
        await Bun.sleep(20)
      }
      proc.kill('SIGTERM')
      expect(await proc.exited).toBe(0)
      while (!readAvailable()) await Bun.sleep(10)

      const lines = parse(text)
      const logged = lines.filter((l) => l.msg === 'request' && l.path === '/api/oauth/userinfo').length
      const notes = lines.filter((l) => l.msg === 'log lines dropped: stdout did not take them')
      expect(notes.length).toBe(1)
      expect(notes[0]!.level).toBe('warn')
      const dropped = notes[0]!.dropped as number
      expect(dropped).toBeGreaterThan(0)
      // Every request of the burst is either written or counted (the /healthz check after it may be among the dropped).
      expect(logged + dropped).toBeGreaterThanOrEqual(count)
      expect(logged + dropped).toBeLessThanOrEqual(count + 1)
      expect(logged).toBeGreaterThan(1000)
      // What waited was at most the 4 MiB bound, plus the pipe's 64 KiB and the lines after it
      // (4.24 MB measured; 7.6 MB had nothing been dropped).
      expect(Buffer.byteLength(text)).toBeLessThan(4 * 1024 * 1024 + 256 * 1024)
      expect(lines.at(-1)!.msg).toBe('stopped')
    } finally {
      if (proc.exitCode === null) proc.kill('SIGKILL')
      closeSync(reader)
    }
  })
})
