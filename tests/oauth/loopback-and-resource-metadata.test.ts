import { describe, expect, test } from 'bun:test'
import { redirectUriMatches } from '../../src/oauth/clients'
import { ORIGIN, addClient, addUser, authorizePath, cookieHeader, createTestApp, signIn } from '../helpers'

describe('loopback redirect URIs (RFC 8252 §7.3)', () => {
  const pub = { public: true, redirectUris: ['http://127.0.0.1/callback', 'http://[::1]/cb', 'http://localhost/cb?x=1', 'http://127.0.0.1:8080/fixed', 'https://app.example/cb'] }

  test("a public client's portless loopback URI matches any port, same path and query; nothing else loosens", () => {
    expect(redirectUriMatches(pub, 'http://127.0.0.1:53124/callback')).toBe(true)
    expect(redirectUriMatches(pub, 'http://[::1]:9/cb')).toBe(true)
    expect(redirectUriMatches(pub, 'http://localhost:3000/cb?x=1')).toBe(true)
    expect(redirectUriMatches(pub, 'http://127.0.0.1:53124/callback/')).toBe(false)
    expect(redirectUriMatches(pub, 'http://127.0.0.1:53124/other')).toBe(false)
    expect(redirectUriMatches(pub, 'http://localhost:3000/cb?x=2')).toBe(false)
    expect(redirectUriMatches(pub, 'http://127.0.0.1:9999/fixed')).toBe(false) // registered with a port: that port only
    expect(redirectUriMatches(pub, 'https://127.0.0.1:5/callback')).toBe(false)
    expect(redirectUriMatches(pub, 'http://127.0.0.2:5/callback')).toBe(false)
    expect(redirectUriMatches(pub, 'http://evil.example:80/callback')).toBe(false)
    expect(redirectUriMatches(pub, 'https://app.example:444/cb')).toBe(false)
    // A confidential client keeps exact matching.
    expect(redirectUriMatches({ ...pub, public: false }, 'http://127.0.0.1:53124/callback')).toBe(false)
  })

  test('the authorization request accepts the random port and sends the code there', async () => {
    const t = await createTestApp()
    const { client } = await addClient(t, { public: true, skipConsent: true, redirectUris: ['http://127.0.0.1/callback'] })
    await addUser(t)
    const jar = await signIn(t)
    const request = (redirectUri: string) =>
      t.handle(authorizePath({ client_id: client.id, redirect_uri: redirectUri, scope: 'email', state: 's', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' }), {
        headers: { cookie: cookieHeader(jar) },
      })
    const ok = await request('http://127.0.0.1:49152/callback')
    expect(ok.status).toBe(303)
    expect(ok.headers.get('location')).toStartWith('http://127.0.0.1:49152/callback?code=')
    const bad = await request('http://127.0.0.1:49152/elsewhere')
    expect(bad.status).toBe(400)
    expect(bad.headers.get('location')).toBeNull()
  })
})

describe("the API's protected-resource metadata (RFC 9728)", () => {
  test('GET /.well-known/oauth-protected-resource (and with the /api path) describes the API', async () => {
    const t = await createTestApp()
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/api']) {
      const res = await t.handle(path)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toStartWith('application/json')
      expect(await res.json()).toEqual({
        resource: `${ORIGIN}/api`,
        authorization_servers: [ORIGIN],
        scopes_supported: ['settings:read', 'settings:write'],
        bearer_methods_supported: ['header'],
      })
    }
  })
})
