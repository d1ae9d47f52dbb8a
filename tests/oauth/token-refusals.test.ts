import { expect, test } from 'bun:test'
import { createClient, DEVICE_CODE } from '../../src/oauth/clients'
import { addClient, createTestApp } from '../helpers'

/**
 * The token endpoint answers the RFC's refusals itself (src/oauth/token/index.ts; issue 38
 * "Speed": a device's poll is one each time): exactly as the app's error answer gives them —
 * status, JSON body, no-store, and a refusal's own headers (RFC 6749 §5.2).
 */
const form = { 'content-type': 'application/x-www-form-urlencoded' }

test('a poll that finds the user not done yet: 400 authorization_pending, no-store', async () => {
  const t = await createTestApp()
  const tv = (await createClient(t.store, { name: 'TV', redirectUris: [], public: true, skipConsent: false, grantTypes: [DEVICE_CODE] }, t.clock.now())).client.id
  const started = await t.handle('/api/oauth/device_authorization', { method: 'POST', headers: form, body: new URLSearchParams({ client_id: tv, scope: 'openid' }) })
  const { device_code } = (await started.json()) as { device_code: string }
  const res = await t.handle('/api/oauth/token', { method: 'POST', headers: form, body: new URLSearchParams({ grant_type: DEVICE_CODE, device_code, client_id: tv }) })
  expect(res.status).toBe(400)
  expect(await res.text()).toBe('{"error":"authorization_pending","error_description":"the user has not finished yet"}')
  expect(res.headers.get('content-type')).toBe('application/json')
  expect(res.headers.get('cache-control')).toBe('no-store')
})

test('a wrong secret over Basic: 401 invalid_client with its Basic challenge', async () => {
  const t = await createTestApp()
  const { client } = await addClient(t)
  const res = await t.handle('/api/oauth/token', { method: 'POST', headers: { ...form, authorization: `Basic ${btoa(`${client.id}:wrong`)}` }, body: 'grant_type=client_credentials' })
  expect(res.status).toBe(401)
  expect(await res.json()).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' })
  expect(res.headers.get('www-authenticate')).toBe('Basic realm="latchkey", charset="UTF-8"')
  expect(res.headers.get('cache-control')).toBe('no-store')
})
