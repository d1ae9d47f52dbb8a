import { describe, expect, test } from 'bun:test'
import { createLogger } from '../src/lib/log'
import { ORIGIN, createTestApp } from './helpers'

describe('routing and errors', () => {
  test('an unknown route → 404 not_found JSON', async () => {
    const res = await (await createTestApp()).handle('/api/nothing')
    expect(res.status).toBe(404)
    expect(await res.json()).toEqual({ error: 'not_found', error_description: 'no route for GET /api/nothing' })
  })

  test('a wrong method → 405 with Allow', async () => {
    const t = await createTestApp()
    const res = await t.handle('/api/oauth/token', { method: 'GET' })
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe('POST')
    expect(((await res.json()) as { error: string }).error).toBe('method_not_allowed')
    const put = await t.handle('/api/settings/theme', { method: 'PUT' })
    expect(put.status).toBe(405)
    expect(put.headers.get('allow')).toBe('GET, DELETE')
  })

  test('an unexpected fault → 500 server_error, logged with a request id and no detail in the body', async () => {
    const lines: string[] = []
    const log = createLogger('info', (s) => lines.push(s))
    const { app, rows } = await createTestApp({}, { log })
    await rows('DROP TABLE access_tokens')
    const secret = 'lk_at_1.' + 's'.repeat(43)
    const res = await app.handle(new Request(`${ORIGIN}/api/oauth/userinfo`, { headers: { authorization: `Bearer ${secret}` } }))
    expect(res.status).toBe(500)
    const body = await res.text()
    const logged = JSON.parse(body) as { error: string; error_description: string }
    expect(logged.error).toBe('server_error')
    expect(logged.error_description).toMatch(/^an unexpected error occurred; it was logged with request id [a-z0-9]+-[a-z0-9]+$/)
    expect(body).not.toContain('access_tokens')
    log.flush()
    const entry = JSON.parse(lines.join('').trim().split('\n').at(-1)!)
    expect(entry.level).toBe('error')
    expect(logged.error_description).toEndWith(entry.request_id)
    expect(lines.join('')).not.toContain('sssssssss')
  })
})

describe('discovery and health', () => {
  test('GET /.well-known/oauth-authorization-server (RFC 8414)', async () => {
    const res = await (await createTestApp()).handle('/.well-known/oauth-authorization-server')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({
      issuer: ORIGIN,
      authorization_endpoint: `${ORIGIN}/oauth/authorize`,
      token_endpoint: `${ORIGIN}/api/oauth/token`,
      userinfo_endpoint: `${ORIGIN}/api/oauth/userinfo`,
      revocation_endpoint: `${ORIGIN}/api/oauth/revoke`,
      end_session_endpoint: `${ORIGIN}/oauth/logout`,
      jwks_uri: `${ORIGIN}/.well-known/jwks.json`,
      pushed_authorization_request_endpoint: `${ORIGIN}/api/oauth/par`,
      device_authorization_endpoint: `${ORIGIN}/api/oauth/device_authorization`,
      require_pushed_authorization_requests: false,
      scopes_supported: ['openid', 'profile', 'email', 'groups', 'settings:read', 'settings:write', 'offline_access'],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code'],
      introspection_endpoint: `${ORIGIN}/api/oauth/introspect`,
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
      token_endpoint_auth_signing_alg_values_supported: ['RS256', 'PS256', 'ES256', 'EdDSA'],
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
    })
  })

  test('GET /healthz → 200 {status: "ok"} after a database round trip; 503 when the database is gone', async () => {
    const t = await createTestApp()
    const ok = await t.handle('/healthz')
    expect(ok.status).toBe(200)
    expect(await ok.json()).toEqual({ status: 'ok' })
    await t.store.close()
    const down = await t.handle('/healthz')
    expect(down.status).toBe(503)
  })

  test('the stylesheet is served', async () => {
    const res = await (await createTestApp()).handle('/assets/app.css')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/css; charset=utf-8')
  })
})

describe('the access log', () => {
  test('one JSON line per request: method, path without query, status, ms, request id, client address', () => {
    const lines: string[] = []
    const log = createLogger('info', (s) => lines.push(s))
    log.request('GET', '/api/settings/a"b', 200, 1.25, 'abc-1', '2001:db8::1')
    log.flush()
    const entry = JSON.parse(lines.join(''))
    expect(Object.keys(entry)).toEqual(['time', 'level', 'msg', 'method', 'path', 'status', 'ms', 'request_id', 'client'])
    expect(entry).toMatchObject({ level: 'info', msg: 'request', method: 'GET', path: '/api/settings/a"b', status: 200, ms: 1.25, request_id: 'abc-1', client: '2001:db8::1' })
    expect(entry.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  })

  test('a value that is not plain ASCII is escaped as JSON.stringify would; a plain one is written as it is', () => {
    const lines: string[] = []
    const log = createLogger('info', (s) => lines.push(s))
    const odd = ['/a\\b', '/tab\there', '/nl\n', '/é', '/\u007f', '/\ud800', '/"']
    for (const path of odd) log.request('GET', path, 200, 1, 'abc-1', '203.0.113.7')
    log.request('M-SEARCH', '/a/b~c', 200, 1, 'abc-2', 'unknown')
    log.flush()
    const text = lines.join('')
    odd.forEach((path, i) => expect(text.split('\n')[i]).toContain(`"path":${JSON.stringify(path)},`))
    expect(text.trim().split('\n').map((l) => JSON.parse(l).path)).toEqual([...odd, '/a/b~c'])
    expect(text).toContain('"method":"M-SEARCH","path":"/a/b~c","status":200,"ms":1,"request_id":"abc-2","client":"unknown"}')
  })

  test('LOG_LEVEL=warn leaves requests out', () => {
    const lines: string[] = []
    const log = createLogger('warn', (s) => lines.push(s))
    log.request('GET', '/', 200, 1, 'x', '127.0.0.1')
    log.flush()
    expect(lines).toEqual([])
  })
})
