import { Database } from 'bun:sqlite'
import { describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { request } from 'node:http'
import { join } from 'node:path'
import { loadConfig } from '../src/config'
import { createLogger } from '../src/lib/log'
import { startServer } from '../src/server'
import { createTestApp } from './helpers'

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

  test('GET /healthz, answered before the router, is the answer the app gives: headers, body, a bad Host refused', async () => {
    const running = await startServer(loadConfig({ DATABASE_URL: ':memory:', HOST: '127.0.0.1', PORT: '0' }), createLogger('warn', () => {}))
    const t = await createTestApp()
    const base = `http://127.0.0.1:${running.server.port}`
    const shape = async (res: Response) => ({ status: res.status, headers: [...res.headers].filter(([name]) => name !== 'date' && name !== 'content-length'), body: await res.text() })
    try {
      const served = await shape(await fetch(`${base}/healthz?probe=1`))
      expect(served).toEqual(await shape(await t.handle('/healthz?probe=1')))
      expect(served.status).toBe(200)
      // A starting server answers it without making the app's routes; the first other request makes them.
      expect(running.appMade).toBe(false)
      // node:http sends the Host header as given; fetch would not send a bad one.
      const badHost = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: running.server.port, path: '/healthz', headers: { host: 'bad host!' } }, (res) => {
          let body = ''
          res.on('data', (chunk) => (body += chunk))
          res.on('end', () => resolve({ status: res.statusCode!, body }))
        })
        req.on('error', reject)
        req.end()
      })
      const inApp = await t.handle('/healthz', { headers: { host: 'bad host!' } })
      expect(badHost).toEqual({ status: 400, body: await inApp.text() })
      expect(inApp.status).toBe(400)
      // Any other method is the router's: 405 with Allow, as before.
      const post = await fetch(`${base}/healthz`, { method: 'POST' })
      expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET'])
      expect(running.appMade).toBe(true)
    } finally {
      await running.stop()
    }
  })
})


describe('the database not answering right after the server listens', () => {
  test('the server keeps serving; recording ISSUER is tried again until the database takes it (no exit)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'latchkey-server-'))
    const file = join(dir, 'db.sqlite')
    const config = loadConfig({ DATABASE_URL: file, HOST: '127.0.0.1', PORT: '0', ISSUER: 'http://127.0.0.1:3000' })
    let holder!: Database
    const lines: string[] = []
    // Once it listens, another writer holds the database past busy_timeout: the start's write fails.
    const running = await startServer(config, createLogger('info', (s) => lines.push(s)), {
      retryAfterStartMs: 50,
      afterListening: () => {
        holder = new Database(file)
        holder.run('BEGIN IMMEDIATE')
      },
    })
    try {
      expect(lines.map((l) => JSON.parse(l)).filter((e) => e.level === 'warn').map((e) => e.msg)).toContain('the database did not answer; recording ISSUER is tried again in 0.05 s')
      // Serving meanwhile: a read answers.
      expect((await fetch(`http://127.0.0.1:${running.server.port}/healthz`)).status).toBe(200)
      holder.run('COMMIT')
      const recorded = () => (holder.query('SELECT value FROM server_secrets WHERE name = ?').get('issuer') as { value: string } | null)?.value
      for (const deadline = Date.now() + 5_000; recorded() !== 'http://127.0.0.1:3000' && Date.now() < deadline; ) await Bun.sleep(20)
      expect(recorded()).toBe('http://127.0.0.1:3000')
    } finally {
      holder.close()
      await running.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 30_000)
})
