import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type * as oauth from 'oauth4webapi'
import { testEngine } from '../store'
import { type RunningBinary, startBinary } from './server'
import { discover, obtainToken, registerClient, registerUser } from './flow'

setDefaultTimeout(30_000)

let server: RunningBinary
let as: oauth.AuthorizationServer
const apps: Record<'A' | 'B', { client_id: string; client_secret: string | null }> = {} as never
const tokens: Record<string, string> = {}

beforeAll(async () => {
  server = await startBinary()
  as = await discover(server)
  apps.A = registerClient(server)
  apps.B = registerClient(server)
  registerUser(server, 'ann@example.com', 'Ann')
  registerUser(server, 'bob@example.com', 'Bob')
  for (const [user, email] of [['ann', 'ann@example.com'], ['bob', 'bob@example.com']] as const)
    for (const app of ['A', 'B'] as const)
      tokens[`${user}${app}`] = (await obtainToken(server, as, apps[app], email, 'settings:read settings:write')).access_token
})
afterAll(() => server.cleanup())

function call(token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
}

describe('the settings API over HTTP with tokens from the real flow', () => {
  test('save, read, list, conditional update and delete', async () => {
    const A = apps.A.client_id
    const saved = await call(tokens.annA!, 'POST', '/api/settings', { client_id: A, key: 'editor.theme', value: { dark: true, size: 14 } })
    expect(saved.status).toBe(200)
    const etag = saved.headers.get('etag')!
    const body = (await saved.json()) as { success: boolean; setting: { key: string; value: unknown; client_id: string; updated_at: string } }
    expect(body.success).toBe(true)
    expect(body.setting).toMatchObject({ key: 'editor.theme', value: { dark: true, size: 14 }, client_id: A })

    const one = await call(tokens.annA!, 'GET', `/api/settings/editor.theme?client_id=${A}`)
    expect(one.status).toBe(200)
    expect(((await one.json()) as { setting: unknown }).setting).toEqual(body.setting)
    expect((await call(tokens.annA!, 'GET', '/api/settings/editor.theme', undefined, { 'if-none-match': etag })).status).toBe(304)

    expect((await call(tokens.annA!, 'POST', '/api/settings', { client_id: A, key: 'editor.theme', value: 'light' }, { 'if-match': etag })).status).toBe(200)
    expect((await call(tokens.annA!, 'POST', '/api/settings', { client_id: A, key: 'editor.theme', value: 'lost' }, { 'if-match': etag })).status).toBe(412)

    await call(tokens.annA!, 'POST', '/api/settings', { client_id: A, key: 'a', value: [1, 2.5, -3] })
    const list = (await (await call(tokens.annA!, 'GET', `/api/settings?client_id=${A}`)).json()) as { settings: Array<{ key: string; value: unknown }> }
    expect(list.settings.map((s) => [s.key, s.value])).toEqual([
      ['a', [1, 2.5, -3]],
      ['editor.theme', 'light'],
    ])

    const del = await call(tokens.annA!, 'DELETE', `/api/settings/a?client_id=${A}`)
    expect(del.status).toBe(200)
    expect(await del.json()).toEqual({ success: true })
    expect((await call(tokens.annA!, 'DELETE', `/api/settings/a?client_id=${A}`)).status).toBe(404)
  })

  test('two users and two apps are isolated from each other', async () => {
    const A = apps.A.client_id
    const B = apps.B.client_id
    for (const who of ['annA', 'annB', 'bobA', 'bobB'] as const)
      expect((await call(tokens[who]!, 'POST', '/api/settings', { client_id: who.endsWith('A') ? A : B, key: 'whoami', value: who })).status).toBe(200)
    for (const who of ['annA', 'annB', 'bobA', 'bobB'] as const) {
      const res = await call(tokens[who]!, 'GET', '/api/settings/whoami')
      expect(((await res.json()) as { setting: { value: string } }).setting.value).toBe(who)
    }
    const cross = await call(tokens.annB!, 'GET', `/api/settings?client_id=${A}`)
    expect(cross.status).toBe(403)
    expect(((await cross.json()) as { error: string }).error).toBe('access_denied')
    expect((await call(tokens.bobB!, 'DELETE', `/api/settings/whoami?client_id=${A}`)).status).toBe(403)
    const still = await call(tokens.annA!, 'GET', '/api/settings/whoami')
    expect(((await still.json()) as { setting: { value: string } }).setting.value).toBe('annA')
  })

  test('deleting a user from the CLI deletes their settings and ends their tokens at once', async () => {
    const users = JSON.parse(server.cli(['user', 'list', '--json']).out) as Array<{ id: string; email: string }>
    const bob = users.find((u) => u.email === 'bob@example.com')!
    expect((await call(tokens.bobA!, 'GET', '/api/settings')).status).toBe(200)
    expect(server.cli(['user', 'delete', bob.id]).code).toBe(0)
    // SQLite: the very next request. PostgreSQL: as soon as the notification lands (SPEC: 100 ms).
    const started = performance.now()
    let status = (await call(tokens.bobA!, 'GET', '/api/settings')).status
    while (status !== 401 && testEngine === 'postgres' && performance.now() - started < 1000) {
      await Bun.sleep(5)
      status = (await call(tokens.bobA!, 'GET', '/api/settings')).status
    }
    expect(status).toBe(401)
    expect(await server.query('SELECT CAST(count(*) AS INTEGER) AS n FROM settings WHERE user_id = ?', bob.id)).toEqual([{ n: 0 }])
  })

  test('bodies over 1 MiB get the JSON 413, whether declared or streamed without Content-Length', async () => {
    const big = 'x'.repeat(3 * 1024 * 1024)
    const declared = await fetch(`${server.url}/api/settings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.annA}`, 'content-type': 'application/json' },
      body: big,
    })
    expect(declared.status).toBe(413)
    expect(await declared.json()).toEqual({ error: 'request_too_large', error_description: 'request body is larger than 1 MiB' })
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024))
    let sent = 0
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 200) controller.enqueue(chunk) // 12.5 MiB if it were all read
        else controller.close()
      },
    })
    const streamed = await fetch(`${server.url}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: stream,
    })
    expect(streamed.status).toBe(413)
    expect(((await streamed.json()) as { error: string }).error).toBe('request_too_large')
  })

  test('CORS preflight from any origin', async () => {
    const res = await fetch(`${server.url}/api/settings`, {
      method: 'OPTIONS',
      headers: { origin: 'https://spa.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, if-match' },
    })
    expect(res.status).toBe(204)
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    expect(res.headers.get('access-control-allow-methods')).toContain('DELETE')
  })
})
