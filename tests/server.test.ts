import { Database } from 'bun:sqlite'
import { describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config'
import { createLogger } from '../src/lib/log'
import { startServer } from '../src/server'

describe('the server', () => {
  test('logs each request with its real status (errors and redirects included), never the query', async () => {
    const lines: string[] = []
    const running = await startServer(loadConfig({ DATABASE_URL: ':memory:', HOST: '127.0.0.1', PORT: '0' }), createLogger('info', (s) => lines.push(s)))
    const base = `http://127.0.0.1:${running.server.port}`
    for (const path of ['/healthz', '/api/oauth/userinfo', '/nothing?token=lk_at_secret', '/account'])
      await fetch(base + path, { redirect: 'manual' })
    await fetch(`${base}/api/oauth/token`, { method: 'PUT' })
    await running.stop()
    const entries = lines.join('').trim().split('\n').map((l) => JSON.parse(l)).filter((e) => e.msg === 'request')
    expect(entries.map((e) => [e.method, e.path, e.status])).toEqual([
      ['GET', '/healthz', 200],
      ['GET', '/api/oauth/userinfo', 401],
      ['GET', '/nothing', 404],
      ['GET', '/account', 303],
      ['PUT', '/api/oauth/token', 405],
    ])
    expect(new Set(entries.map((e) => e.request_id)).size).toBe(5)
    expect(lines.join('')).not.toContain('lk_at_secret')
  })

  test('a 500 names the request id its access-log line carries', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'latchkey-server-'))
    const lines: string[] = []
    const running = await startServer(loadConfig({ DATABASE_URL: join(dir, 'db.sqlite'), HOST: '127.0.0.1', PORT: '0' }), createLogger('info', (s) => lines.push(s)))
    try {
      const db = new Database(join(dir, 'db.sqlite'))
      db.run('DROP TABLE access_tokens')
      db.close()
      const res = await fetch(`http://127.0.0.1:${running.server.port}/api/oauth/userinfo`, { headers: { authorization: `Bearer lk_at_1.${'s'.repeat(43)}` } })
      expect(res.status).toBe(500)
      const id = /request id ([a-z0-9]+-[a-z0-9]+)$/.exec(((await res.json()) as { error_description: string }).error_description)![1]
      await running.stop()
      const entries = lines.join('').trim().split('\n').map((l) => JSON.parse(l))
      expect(entries.filter((e) => e.msg === 'request').map((e) => [e.path, e.status, e.request_id])).toEqual([['/api/oauth/userinfo', 500, id]])
      expect(entries.filter((e) => e.level === 'error').map((e) => e.request_id)).toEqual([id])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
