import { beforeEach, describe, expect, test } from 'bun:test'
import { s256 } from '../../src/lib/crypto'
import {
  CALLBACK,
  addClient,
  authorizeAndAllow,
  bearer,
  tokenRequest,
  type TestApp,
  signedInApp,
} from '../helpers'

let t: TestApp
let client: Awaited<ReturnType<typeof addClient>>
let jar: Record<string, string>

beforeEach(async () => {
  ;({ t, client, jar } = await signedInApp())
})

async function newCode(params: Record<string, string> = {}, c = client) {
  const url = await authorizeAndAllow(t, jar, { client_id: c.client.id, redirect_uri: CALLBACK, scope: 'profile email', ...params })
  return url.searchParams.get('code')!
}

const exchange = (code: string, extra: Record<string, string | undefined> = {}) =>
  tokenRequest(t, {
    grant_type: 'authorization_code',
    code,
    client_id: client.client.id,
    client_secret: client.secret,
    redirect_uri: CALLBACK,
    ...extra,
  })

const basic = (id: string, secret: string) => 'Basic ' + btoa(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`)

async function expectError(res: Response, status: number, error: string, description?: string) {
  expect(res.status).toBe(status)
  expect(res.headers.get('content-type')).toBe('application/json')
  const body = (await res.json()) as Record<string, unknown>
  expect(body.error).toBe(error)
  expect(typeof body.error_description).toBe('string')
  if (description !== undefined) expect(body.error_description).toBe(description)
  expect(Object.keys(body).sort()).toEqual(['error', 'error_description'])
}

describe('POST /api/oauth/token: success', () => {
  test('the seed JSON body → 200 {access_token, token_type, expires_in: 3600, scope}, no-store', async () => {
    const res = await exchange(await newCode())
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.headers.get('pragma')).toBe('no-cache')
    const body = (await res.json()) as Record<string, unknown>
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type'])
    expect(body.refresh_token).toMatch(/^lk_rt_[0-9a-z]+\.[A-Za-z0-9_-]{65}$/)
    expect(body.access_token).toMatch(/^lk_at_[0-9a-z]+\.[A-Za-z0-9_-]{43}$/)
    expect(body.token_type).toBe('Bearer')
    expect(body.expires_in).toBe(3600)
    expect(body.scope).toBe('profile email')
  })

  test('form body with HTTP Basic client authentication (client_secret_basic)', async () => {
    const code = await newCode()
    const res = await t.handle('/api/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded;charset=UTF-8', authorization: basic(client.client.id, client.secret) },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK }),
    })
    expect(res.status).toBe(200)
    expect(((await res.json()) as { token_type: string }).token_type).toBe('Bearer')
  })

  test('form body with the secret in the body (client_secret_post)', async () => {
    const code = await newCode()
    const res = await t.handle('/api/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: client.client.id, client_secret: client.secret }),
    })
    expect(res.status).toBe(200)
  })

  test('a public client with PKCE S256 and no secret', async () => {
    const pub = await addClient(t, { public: true })
    const verifier = 'v'.repeat(50)
    const code = await newCode({ code_challenge: s256(verifier), code_challenge_method: 'S256' }, pub)
    const res = await tokenRequest(t, { grant_type: 'authorization_code', code, client_id: pub.client.id, redirect_uri: CALLBACK, code_verifier: verifier })
    expect(res.status).toBe(200)
  })

  test('ACCESS_TOKEN_TTL sets expires_in', async () => {
    ;({ t, client, jar } = await signedInApp({ ACCESS_TOKEN_TTL: '600' }))
    const body = (await (await exchange(await newCode())).json()) as { expires_in: number }
    expect(body.expires_in).toBe(600)
  })

  test('tokens and client secrets are stored only as hashes', async () => {
    const { access_token } = (await (await exchange(await newCode())).json()) as { access_token: string }
    const dump = JSON.stringify([(await t.rows('SELECT * FROM access_tokens')), (await t.rows('SELECT * FROM clients'))])
    expect(dump).not.toContain(access_token)
    expect(dump).not.toContain(client.secret)
    expect(dump).not.toContain('lk_')
  })
})

describe('POST /api/oauth/token: 400 invalid_request', () => {
  const raw = (body: string, type: string) => t.handle('/api/oauth/token', { method: 'POST', headers: { 'content-type': type }, body })
  test('unsupported content type', async () => expectError(await raw('grant_type=authorization_code', 'text/plain'), 400, 'invalid_request'))
  test('no content type', async () =>
    expectError(await t.handle('/api/oauth/token', { method: 'POST', body: 'x' }), 400, 'invalid_request'))
  test('malformed JSON', async () => expectError(await raw('{"grant_type":', 'application/json'), 400, 'invalid_request'))
  test('JSON that is not an object', async () => expectError(await raw('[1,2]', 'application/json'), 400, 'invalid_request'))
  test('a repeated form parameter', async () =>
    expectError(await raw('grant_type=authorization_code&code=a&code=b&redirect_uri=x', 'application/x-www-form-urlencoded'), 400, 'invalid_request'))
  test('missing grant_type', async () => expectError(await exchange('x', { grant_type: undefined }), 400, 'invalid_request'))
  test('missing code', async () => expectError(await exchange('', { code: undefined }), 400, 'invalid_request'))
  test('missing redirect_uri', async () => expectError(await exchange('x', { redirect_uri: undefined }), 400, 'invalid_request'))
  test('missing code is reported before missing client authentication', async () =>
    expectError(await tokenRequest(t, { grant_type: 'authorization_code', redirect_uri: CALLBACK }), 400, 'invalid_request'))
  test('two client authentication methods at once', async () => {
    const res = await tokenRequest(
      t,
      { grant_type: 'authorization_code', code: await newCode(), redirect_uri: CALLBACK, client_secret: client.secret },
      { authorization: basic(client.client.id, client.secret) },
    )
    await expectError(res, 400, 'invalid_request')
  })
})

describe('POST /api/oauth/token: 401 invalid_client', () => {
  test('no client authentication', async () =>
    expectError(await tokenRequest(t, { grant_type: 'authorization_code', code: 'x', redirect_uri: CALLBACK }), 401, 'invalid_client'))
  test('unknown client', async () => expectError(await exchange('x', { client_id: 'nope' }), 401, 'invalid_client'))
  test('wrong secret', async () => expectError(await exchange(await newCode(), { client_secret: 'lk_cs_wrong' }), 401, 'invalid_client'))
  test('a confidential client without its secret', async () =>
    expectError(await exchange(await newCode(), { client_secret: undefined }), 401, 'invalid_client'))
  test('wrong secret over Basic → 401 with WWW-Authenticate: Basic', async () => {
    const res = await tokenRequest(
      t,
      { grant_type: 'authorization_code', code: await newCode(), redirect_uri: CALLBACK },
      { authorization: basic(client.client.id, 'wrong') },
    )
    expect(res.headers.get('www-authenticate')).toStartWith('Basic realm="latchkey"')
    await expectError(res, 401, 'invalid_client')
  })
  test('a rotated-away secret stops working', async () => {
    const { rotateSecret } = await import('../../src/oauth/clients')
    await rotateSecret(t.store, client.client.id)
    await expectError(await exchange(await newCode()), 401, 'invalid_client')
  })
})

describe('POST /api/oauth/token: 400 unsupported_grant_type', () => {
  test('grant_type other than authorization_code (after client authentication)', async () => {
    await expectError(await exchange('x', { grant_type: 'password' }), 400, 'unsupported_grant_type')
    await expectError(await exchange('x', { grant_type: 'client_credentials', client_secret: 'bad' }), 401, 'invalid_client')
  })
})

describe('POST /api/oauth/token: 400 invalid_grant', () => {
  test('unknown code', async () => expectError(await exchange('not-a-code'), 400, 'invalid_grant', 'authorization code is invalid'))

  test('expired code (after CODE_TTL = 60 s)', async () => {
    const code = await newCode()
    t.clock.advance(60_000)
    await expectError(await exchange(code), 400, 'invalid_grant', 'authorization code has expired')
  })

  test('a code just inside CODE_TTL still works', async () => {
    const code = await newCode()
    t.clock.advance(59_000)
    expect((await exchange(code)).status).toBe(200)
  })

  test('a used code fails and revokes the token it issued', async () => {
    const code = await newCode()
    const first = (await (await exchange(code)).json()) as { access_token: string }
    expect((await t.handle('/api/oauth/userinfo', { headers: bearer(first.access_token) })).status).toBe(200)
    await expectError(await exchange(code), 400, 'invalid_grant', 'authorization code was already used')
    expect((await t.handle('/api/oauth/userinfo', { headers: bearer(first.access_token) })).status).toBe(401)
  })

  test('a code issued to another client', async () => {
    const other = await addClient(t)
    const code = await newCode({}, other)
    await expectError(await exchange(code), 400, 'invalid_grant', 'authorization code was issued to another client')
  })

  test('redirect_uri differs from the authorization request', async () => {
    await t.rows('UPDATE clients SET redirect_uris = ? WHERE id = ?', JSON.stringify([CALLBACK, 'https://app.example/other']), client.client.id)
    const code = await newCode()
    await expectError(await exchange(code, { redirect_uri: 'https://app.example/other' }), 400, 'invalid_grant', 'redirect_uri does not match the authorization request')
    expect((await exchange(code)).status).toBe(200)
  })

  test('PKCE: wrong verifier, missing verifier, and a verifier without a challenge', async () => {
    const verifier = 'k'.repeat(43)
    const code = await newCode({ code_challenge: s256(verifier), code_challenge_method: 'S256' })
    const wrong = 'PKCE code_verifier is missing or wrong'
    await expectError(await exchange(code, { code_verifier: 'x'.repeat(43) }), 400, 'invalid_grant', wrong)
    await expectError(await exchange(code, { code_verifier: 'k'.repeat(42) }), 400, 'invalid_grant', wrong)
    await expectError(await exchange(code), 400, 'invalid_grant', wrong)
    expect((await exchange(code, { code_verifier: verifier })).status).toBe(200)
    const unexpected = 'code_verifier sent but the authorization request had no code_challenge'
    await expectError(await exchange(await newCode(), { code_verifier: verifier }), 400, 'invalid_grant', unexpected)
    await expectError(await exchange(await newCode(), { code_verifier: 'short' }), 400, 'invalid_grant', unexpected)
  })

  test('concurrent exchanges of one code: exactly one succeeds', async () => {
    const code = await newCode()
    const results = await Promise.all([exchange(code), exchange(code), exchange(code)])
    expect(results.map((r) => r.status).sort()).toEqual([200, 400, 400])
  })
})
