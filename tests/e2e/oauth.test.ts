import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import * as oauth from 'oauth4webapi'
import { type RunningBinary, startBinary } from './server'
import { CALLBACK, discover, obtainToken, options, registerClient, registerUser } from './flow'
import { until } from '../wait'

// Spawns processes (and a browser): slower than in-process tests on a busy machine.
setDefaultTimeout(30_000)

let server: RunningBinary
let as: oauth.AuthorizationServer
let userId: string

beforeAll(async () => {
  server = await startBinary()
  userId = registerUser(server, 'erin@example.com').id
  as = await discover(server)
})
afterAll(() => server.cleanup())

const userinfo = (token: string) => oauth.protectedResourceRequest(token, 'GET', new URL(as.userinfo_endpoint!), undefined, undefined, options)

describe('the compiled binary with oauth4webapi as the client', () => {
  test('discovery (RFC 8414) names the endpoints and S256', () => {
    expect(as.issuer).toBe(server.url)
    expect(as.token_endpoint).toBe(`${server.url}/api/oauth/token`)
    expect(as.code_challenge_methods_supported).toEqual(['S256'])
    expect(as.authorization_response_iss_parameter_supported).toBe(true)
  })

  for (const auth of ['basic', 'post'] as const) {
    test(`authorization code flow with client_secret_${auth}, then userinfo`, async () => {
      const client = registerClient(server)
      const tokens = await obtainToken(server, as, client, 'erin@example.com', 'profile email', auth)
      expect(tokens.token_type).toBe('bearer')
      expect(tokens.expires_in).toBe(3600)
      expect(tokens.scope).toBe('profile email')
      expect(tokens.access_token).toStartWith('lk_at_')
      const res = await userinfo(tokens.access_token)
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({
        id: userId,
        email: 'erin@example.com',
        full_name: 'Erin Example',
        avatar_url: `${server.url}/avatars/${userId}.svg`,
      })
    })
  }

  test('a public client with PKCE and no secret', async () => {
    const client = registerClient(server, ['--public'])
    expect(client.client_secret).toBeNull()
    const tokens = await obtainToken(server, as, client, 'erin@example.com', 'email', 'none')
    expect(await (await userinfo(tokens.access_token)).json()).toEqual({ id: userId, email: 'erin@example.com' })
  })

  test('a name changed by `latchkey apply` while the server runs is what userinfo answers next, for a token it cached before (issue 33)', async () => {
    registerUser(server, 'renamed@example.com', 'Old Name')
    const client = registerClient(server)
    const tokens = await obtainToken(server, as, client, 'renamed@example.com', 'profile', 'basic')
    const name = async () => ((await (await userinfo(tokens.access_token)).json()) as { full_name: string }).full_name
    expect(await name()).toBe('Old Name')
    await Bun.write(`${server.dir}/users.yaml`, 'users:\n  - email: renamed@example.com\n    full_name: New Name\n    admin: false\n')
    expect(server.cli(['apply', 'users.yaml']).code).toBe(0)
    // SQLite: the CLI's commit moves PRAGMA data_version, read before the next request trusts the
    // cache. PostgreSQL: the trigger's NOTIFY, within the feed's delay (SPEC: 100 ms).
    const started = performance.now()
    while ((await name()) !== 'New Name') {
      if (performance.now() - started > 2000) throw new Error('userinfo still answers the old name after 2 s')
      await Bun.sleep(1)
    }
    expect(performance.now() - started).toBeLessThan(100)
  })

  test('revocation (RFC 7009) through oauth4webapi ends the token at once', async () => {
    const client = registerClient(server)
    const tokens = await obtainToken(server, as, client, 'erin@example.com', 'email', 'basic')
    expect((await userinfo(tokens.access_token)).status).toBe(200)
    const c = { client_id: client.client_id }
    const response = await oauth.revocationRequest(as, c, oauth.ClientSecretBasic(client.client_secret!), tokens.access_token, options)
    await oauth.processRevocationResponse(response)
    // oauth4webapi turns the 401's WWW-Authenticate challenge into an error.
    await expect(userinfo(tokens.access_token)).rejects.toMatchObject({ status: 401, code: 'OAUTH_WWW_AUTHENTICATE_CHALLENGE' })
  })

  test('a wrong secret is 401 invalid_client with a Basic challenge', async () => {
    const client = registerClient(server)
    const res = await fetch(as.token_endpoint!, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: 'Basic ' + btoa(`${client.client_id}:wrong`) },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: 'x', redirect_uri: CALLBACK }),
    })
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toStartWith('Basic')
    expect(((await res.json()) as { error: string }).error).toBe('invalid_client')
  })

  test('each request is logged as one JSON line without secrets', async () => {
    const client = registerClient(server)
    const tokens = await obtainToken(server, as, client, 'erin@example.com', 'email', 'post')
    const userinfoLines = () => server.output().split('"path":"/api/oauth/userinfo"').length - 1
    const before = userinfoLines()
    await userinfo(tokens.access_token)
    // The line is written as the answer goes: wait for it, whole (the output ends with its newline).
    await until(() => userinfoLines() > before && server.output().endsWith('\n'), 'the userinfo request logged')
    const lines = server.output().trim().split('\n').map((l) => JSON.parse(l))
    const requests = lines.filter((l) => l.msg === 'request')
    expect(requests.length).toBeGreaterThan(5)
    for (const r of requests) expect(Object.keys(r).sort()).toEqual(['client', 'level', 'method', 'ms', 'msg', 'path', 'request_id', 'status', 'time'])
    // Item 14: the access log names the client address (here the loopback peer).
    for (const r of requests) expect(r.client).toBe('127.0.0.1')
    const text = server.output()
    expect(text).not.toContain(tokens.access_token)
    expect(text).not.toContain(client.client_secret!)
    expect(text).not.toContain('e2e password')
    expect(text).not.toContain('code=')
  })
})
