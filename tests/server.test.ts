import { describe, expect, test } from 'bun:test'
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
})
