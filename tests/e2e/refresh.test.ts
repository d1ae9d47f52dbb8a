/**
 * Refresh tokens, revocation and introspection against the compiled binary, with two
 * independent client libraries: oauth4webapi and openid-client v6 (panva's relying-party library).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import * as oauth from 'oauth4webapi'
import * as client from 'openid-client'
import { discover, obtainToken, options, registerClient, registerUser } from './flow'
import { startBinary, type RunningBinary } from './server'

setDefaultTimeout(30_000)

let server: RunningBinary
let as: oauth.AuthorizationServer

beforeAll(async () => {
  server = await startBinary()
  as = await discover(server)
})
afterAll(() => server?.cleanup())

describe('refresh tokens with oauth4webapi', () => {
  test('refresh, revoke with token_type_hint, and introspect', async () => {
    const app = registerClient(server)
    registerUser(server, 'rita@example.com')
    const c: oauth.Client = { client_id: app.client_id }
    const auth = oauth.ClientSecretBasic(app.client_secret!)
    const first = await obtainToken(server, as, app, 'rita@example.com', 'email settings:read')
    expect(first.refresh_token).toStartWith('lk_rt_')
    expect(as.grant_types_supported).toContain('refresh_token')

    const refreshed = await oauth.processRefreshTokenResponse(as, c, await oauth.refreshTokenGrantRequest(as, c, auth, first.refresh_token!, options))
    expect(refreshed.refresh_token).not.toBe(first.refresh_token)
    expect(refreshed.scope).toBe('email settings:read')
    const info = await oauth.userInfoRequest(as, c, refreshed.access_token, options)
    expect(info.status).toBe(200)

    const active = await oauth.processIntrospectionResponse(as, c, await oauth.introspectionRequest(as, c, auth, refreshed.access_token, options))
    expect(active).toMatchObject({ active: true, client_id: app.client_id, scope: 'email settings:read', token_type: 'Bearer', iss: server.url })

    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, c, auth, refreshed.refresh_token!, { ...options, additionalParameters: { token_type_hint: 'refresh_token' } }),
    )
    // The whole grant is gone: its access token, and its refresh token refused by the library as invalid_grant.
    const inactive = await oauth.processIntrospectionResponse(as, c, await oauth.introspectionRequest(as, c, auth, refreshed.access_token, options))
    expect(inactive).toEqual({ active: false })
    const again = oauth.processRefreshTokenResponse(as, c, await oauth.refreshTokenGrantRequest(as, c, auth, refreshed.refresh_token!, options))
    await expect(again).rejects.toMatchObject({ error: 'invalid_grant' })
  })

  test('a public client refreshes with PKCE-born tokens and no secret', async () => {
    const app = registerClient(server, ['--public'])
    registerUser(server, 'pia@example.com')
    const c: oauth.Client = { client_id: app.client_id }
    const first = await obtainToken(server, as, app, 'pia@example.com', 'email', 'none')
    const next = await oauth.processRefreshTokenResponse(as, c, await oauth.refreshTokenGrantRequest(as, c, oauth.None(), first.refresh_token!, options))
    expect(next.access_token).toStartWith('lk_at_')
  })
})

describe('refresh tokens with openid-client v6', () => {
  test('discovery, refreshTokenGrant (narrower scope), tokenIntrospection, tokenRevocation', async () => {
    const app = registerClient(server)
    registerUser(server, 'otto@example.com')
    const config = await client.discovery(new URL(server.url), app.client_id, app.client_secret!, undefined, {
      algorithm: 'oauth2',
      execute: [client.allowInsecureRequests],
    })
    const first = await obtainToken(server, as, app, 'otto@example.com', 'profile email')
    const refreshed = await client.refreshTokenGrant(config, first.refresh_token!, { scope: 'email' })
    expect(refreshed.scope).toBe('email')
    expect(refreshed.expires_in).toBe(3600)
    const described = await client.tokenIntrospection(config, refreshed.refresh_token!)
    expect(described).toMatchObject({ active: true, token_type: 'refresh_token', client_id: app.client_id })
    await client.tokenRevocation(config, refreshed.refresh_token!)
    expect(await client.tokenIntrospection(config, refreshed.access_token)).toEqual({ active: false })
    await expect(client.refreshTokenGrant(config, refreshed.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' })
  })
})
