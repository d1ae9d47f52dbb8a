import { beforeEach, describe, expect, test } from 'bun:test'
import { addClient, addUser, bearer, createTestApp, tokenThroughFlow, type TestApp } from '../helpers'

let t: TestApp
let client: Awaited<ReturnType<typeof addClient>>

beforeEach(async () => {
  t = await createTestApp()
  client = await addClient(t)
  await addUser(t)
})

const basic = (c: Awaited<ReturnType<typeof addClient>>) => 'Basic ' + btoa(`${c.client.id}:${c.secret}`)
const revoke = (body: Record<string, string>, authorization = basic(client)) =>
  t.handle('/api/oauth/revoke', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization },
    body: new URLSearchParams(body),
  })
const userinfo = (token: string) => t.handle('/api/oauth/userinfo', { headers: bearer(token) })

describe('POST /api/oauth/revoke (RFC 7009)', () => {
  test('revokes the client’s own token: 200, and the token fails on the very next request', async () => {
    const token = await tokenThroughFlow(t, client, 'email')
    expect((await userinfo(token)).status).toBe(200)
    const res = await revoke({ token, token_type_hint: 'access_token' })
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect((await userinfo(token)).status).toBe(401)
  })

  test('an unknown or malformed token is also 200 (§2.2)', async () => {
    expect((await revoke({ token: 'lk_at_zz.' + 'x'.repeat(43) })).status).toBe(200)
    expect((await revoke({ token: 'garbage' })).status).toBe(200)
  })

  test('another client’s token is refused and keeps working (§2.1)', async () => {
    const token = await tokenThroughFlow(t, client, 'email')
    const other = await addClient(t, { name: 'Other' })
    const res = await revoke({ token }, basic(other))
    expect(res.status).toBe(400)
    expect(((await res.json()) as { error: string }).error).toBe('invalid_request')
    expect((await userinfo(token)).status).toBe(200)
  })

  test('without client authentication → 401 invalid_client; without token → 400 invalid_request', async () => {
    const token = await tokenThroughFlow(t, client, 'email')
    const unauthenticated = await revoke({ token }, 'Basic ' + btoa(`${client.client.id}:wrong`))
    expect(unauthenticated.status).toBe(401)
    expect(unauthenticated.headers.get('www-authenticate')).toStartWith('Basic')
    expect((await revoke({})).status).toBe(400)
    expect((await userinfo(token)).status).toBe(200)
  })
})
