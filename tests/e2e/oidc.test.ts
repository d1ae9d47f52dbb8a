/**
 * OpenID Connect against the compiled binary, with two independent relying-party libraries
 * (openid-client v6 and oauth4webapi), every id_token checked again with jose against the JWKS,
 * key rotation through the CLI on a running server, and a real browser signing in through a
 * relying party and out through RP-initiated logout.
 */
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import * as jose from 'jose'
import * as oauth from 'oauth4webapi'
import * as client from 'openid-client'
import type { Browser } from 'playwright-core'
import { CALLBACK, authorizeAsUser, options, registerUser } from './flow'
import { testEngine } from '../store'
import { launchChromium, startBinary, type RunningBinary } from './server'

setDefaultTimeout(60_000)

let server: RunningBinary
let jwks: ReturnType<typeof jose.createRemoteJWKSet>

beforeAll(async () => {
  // Many sign-ins from one address are part of these tests, not an attack.
  server = await startBinary({ LOGIN_ATTEMPTS_PER_MINUTE: '1000' })
  jwks = jose.createRemoteJWKSet(new URL(`${server.url}/.well-known/jwks.json`), { cacheMaxAge: 0, cooldownDuration: 0 })
})
afterAll(() => server?.cleanup())

function createClient(flags: string[] = []) {
  const r = server.cli(['client', 'create', '--name', 'OIDC RP', '--redirect-uri', CALLBACK, ...flags])
  if (r.code !== 0) throw new Error(r.err)
  return JSON.parse(r.out) as { client_id: string; client_secret: string }
}

/** The independent check: signature against the published JWKS, iss, aud, expiry. */
async function verifiedWithJose(idToken: string, audience: string) {
  return (await jose.jwtVerify(idToken, jwks, { issuer: server.url, audience, algorithms: ['RS256'] })).payload
}

/** The code flow through openid-client: PKCE, nonce and state, the user signing in, the exchange with its checks. */
async function codeFlow(config: client.Configuration, email: string, scope: string) {
  const verifier = client.randomPKCECodeVerifier()
  const nonce = client.randomNonce()
  const state = client.randomState()
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: CALLBACK,
    scope,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    nonce,
    state,
  })
  const callback = await authorizeAsUser(server, url, email)
  const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: state, idTokenExpected: true })
  return { tokens, nonce }
}

describe('openid-client v6', () => {
  test('discovery, PKCE and nonce, a validated id_token, fetchUserInfo, refresh with a new id_token, the end-session URL', async () => {
    const rp = createClient(['--post-logout-redirect-uri', 'http://127.0.0.1:9/bye'])
    const user = registerUser(server, 'olga@example.com', 'Olga Ode')
    const config = await client.discovery(new URL(server.url), rp.client_id, rp.client_secret, undefined, { execute: [client.allowInsecureRequests] })
    expect(config.serverMetadata().id_token_signing_alg_values_supported).toEqual(['RS256', 'ES256', 'EdDSA'])
    const { tokens, nonce } = await codeFlow(config, 'olga@example.com', 'openid profile email offline_access')
    const claims = tokens.claims()!
    expect(claims).toMatchObject({ iss: server.url, sub: user.id, aud: rp.client_id, nonce, email: 'olga@example.com', email_verified: true, name: 'Olga Ode' })
    expect(await verifiedWithJose(tokens.id_token!, rp.client_id)).toMatchObject({ sub: user.id, nonce })

    const info = await client.fetchUserInfo(config, tokens.access_token, user.id)
    expect(info).toMatchObject({ sub: user.id, email: 'olga@example.com', email_verified: true, name: 'Olga Ode', id: user.id })

    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!)
    expect(refreshed.claims()).toMatchObject({ sub: user.id, auth_time: claims.auth_time })
    expect(await verifiedWithJose(refreshed.id_token!, rp.client_id)).toMatchObject({ sub: user.id })

    const endSession = client.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: 'http://127.0.0.1:9/bye', state: 'bye' })
    expect(endSession.origin + endSession.pathname).toBe(`${server.url}/oauth/logout`)
    // Not signed in in this client: a verified hint and a registered URI go straight back.
    const res = await fetch(endSession, { redirect: 'manual' })
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('http://127.0.0.1:9/bye?state=bye')
  })
})

describe('ES256 and EdDSA ID tokens (--id-token-alg), checked by openid-client and jose', () => {
  for (const alg of ['ES256', 'EdDSA'] as const)
    test(`a client created with --id-token-alg ${alg}: openid-client validates the id_token it registered for, on the code and the refresh`, async () => {
      const rp = createClient(['--id-token-alg', alg])
      const user = registerUser(server, `${alg.toLowerCase()}@example.com`, `${alg} User`)
      // The client tells openid-client which algorithm to expect, as a relying party registered for it would.
      const config = await client.discovery(new URL(server.url), rp.client_id, { client_secret: rp.client_secret, id_token_signed_response_alg: alg }, undefined, {
        execute: [client.allowInsecureRequests],
      })
      const { tokens, nonce } = await codeFlow(config, `${alg.toLowerCase()}@example.com`, 'openid profile offline_access')
      expect(jose.decodeProtectedHeader(tokens.id_token!).alg).toBe(alg)
      expect(tokens.claims()).toMatchObject({ iss: server.url, sub: user.id, aud: rp.client_id, nonce, name: `${alg} User` })
      expect((await jose.jwtVerify(tokens.id_token!, jwks, { issuer: server.url, audience: rp.client_id, algorithms: [alg] })).payload.sub).toBe(user.id)
      const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!)
      expect(jose.decodeProtectedHeader(refreshed.id_token!).alg).toBe(alg)
      expect(refreshed.claims()!.sub).toBe(user.id)
    })
})

describe("oauth4webapi's OpenID Connect functions", () => {
  test('a valid id_token is accepted; a nonce mismatch is rejected by the library', async () => {
    const rp = createClient()
    registerUser(server, 'omar@example.com')
    const issuer = new URL(server.url)
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...options }))
    const c: oauth.Client = { client_id: rp.client_id }
    const run = async (nonce: string, expected: string) => {
      const verifier = oauth.generateRandomCodeVerifier()
      const url = new URL(as.authorization_endpoint!)
      url.search = new URLSearchParams({
        client_id: rp.client_id,
        redirect_uri: CALLBACK,
        response_type: 'code',
        scope: 'openid email',
        nonce,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      }).toString()
      const params = oauth.validateAuthResponse(as, c, await authorizeAsUser(server, url, 'omar@example.com'), oauth.expectNoState)
      const response = await oauth.authorizationCodeGrantRequest(as, c, oauth.ClientSecretBasic(rp.client_secret), params, CALLBACK, verifier, options)
      return oauth.processAuthorizationCodeResponse(as, c, response, { expectedNonce: expected, requireIdToken: true })
    }
    const good = await run('nonce-1', 'nonce-1')
    expect(oauth.getValidatedIdTokenClaims(good)!.nonce).toBe('nonce-1')
    expect(await verifiedWithJose(good.id_token!, rp.client_id)).toMatchObject({ nonce: 'nonce-1' })
    await expect(run('nonce-2', 'something else')).rejects.toThrow(/nonce/)
  })
})

describe('signing-key rotation on a running server', () => {
  test('`latchkey keys rotate`: new id_tokens carry the new kid within seconds; one signed before still verifies', async () => {
    const rp = createClient()
    registerUser(server, 'kim@example.com')
    const config = await client.discovery(new URL(server.url), rp.client_id, rp.client_secret, undefined, { execute: [client.allowInsecureRequests] })
    const tokenNow = async () => {
      const url = client.buildAuthorizationUrl(config, { redirect_uri: CALLBACK, scope: 'openid', state: 's' })
      const callback = await authorizeAsUser(server, url, 'kim@example.com')
      return (await client.authorizationCodeGrant(config, callback, { expectedState: 's' })).id_token!
    }
    const before = await tokenNow()
    const listed = JSON.parse(server.cli(['keys', 'list', '--json']).out) as Array<{ kid: string; alg: string; current: boolean }>
    // One current key per algorithm (the ES256 and EdDSA clients above made theirs); RS256's signs this client's tokens.
    expect(listed.filter((k) => k.current && k.alg === 'RS256').map((k) => k.kid)).toEqual([jose.decodeProtectedHeader(before).kid!])
    // A server that has run for a while: its next key has been published longer than the JWKS
    // max-age, so the rotation signs with it at once (a fresh one would wait six minutes).
    const backdate = 'UPDATE signing_keys SET created_at = created_at - 600000 WHERE signs_from IS NULL'
    if (testEngine === 'postgres') await server.query(backdate)
    else {
      const db = new Database(server.dbPath)
      db.run(backdate)
      db.close()
    }
    const rotate = server.cli(['keys', 'rotate'])
    expect(rotate.code).toBe(0)
    const rotated = JSON.parse(rotate.out) as Record<string, unknown>
    expect(Object.keys(rotated).sort()).toEqual(['alg', 'created_at', 'current', 'kid'])
    expect(rotate.out + server.cli(['keys', 'list']).out + server.output()).not.toMatch(/"d"|"p"|"q"|"dp"|"dq"|"qi"/)
    const started = performance.now()
    let after = await tokenNow()
    while (jose.decodeProtectedHeader(after).kid !== rotated.kid && performance.now() - started < 15_000) {
      await Bun.sleep(250)
      after = await tokenNow()
    }
    expect(jose.decodeProtectedHeader(after).kid).toBe(rotated.kid as string)
    console.log(`oidc: the running server signed with the rotated key after ${Math.round(performance.now() - started)} ms`)
    expect(await verifiedWithJose(before, rp.client_id)).toBeDefined()
    expect(await verifiedWithJose(after, rp.client_id)).toBeDefined()
  })
})

describe('a real browser through an OpenID Connect relying party', () => {
  let browser: Browser
  let rpServer: ReturnType<typeof Bun.serve>

  beforeAll(async () => {
    browser = await launchChromium()
  })
  afterAll(async () => {
    await browser?.close()
    rpServer?.stop(true)
  })

  test('sign in through the RP (openid-client), then sign out with RP-initiated logout back to the RP', async () => {
    const pending = new Map<string, { verifier: string; nonce: string }>()
    let idToken = ''
    rpServer = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (req) => rpRoutes(req) })
    const base = `http://127.0.0.1:${rpServer.port}`
    const rp = (() => {
      const r = server.cli(['client', 'create', '--name', 'Wiki', '--redirect-uri', `${base}/callback`, '--post-logout-redirect-uri', `${base}/bye`])
      return JSON.parse(r.out) as { client_id: string; client_secret: string }
    })()
    registerUser(server, 'bea@example.com', 'Bea Brown')
    const config = await client.discovery(new URL(server.url), rp.client_id, rp.client_secret, undefined, { execute: [client.allowInsecureRequests] })
    const html = (body: string) => new Response(`<!doctype html><title>Wiki</title>${body}`, { headers: { 'content-type': 'text/html' } })
    async function rpRoutes(req: Request): Promise<Response> {
      const url = new URL(req.url)
      if (url.pathname === '/login') {
        const state = client.randomState()
        const verifier = client.randomPKCECodeVerifier()
        const nonce = client.randomNonce()
        pending.set(state, { verifier, nonce })
        const target = client.buildAuthorizationUrl(config, {
          redirect_uri: `${base}/callback`,
          scope: 'openid profile email',
          state,
          nonce,
          code_challenge: await client.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
        })
        return Response.redirect(target.href, 302)
      }
      if (url.pathname === '/callback') {
        const state = url.searchParams.get('state')!
        const checks = pending.get(state)!
        const tokens = await client.authorizationCodeGrant(config, url, { pkceCodeVerifier: checks.verifier, expectedNonce: checks.nonce, expectedState: state })
        idToken = tokens.id_token!
        return html(`<h1>Hello ${tokens.claims()!.name}</h1><a href="/logout">Sign out</a>`)
      }
      if (url.pathname === '/logout')
        return Response.redirect(client.buildEndSessionUrl(config, { id_token_hint: idToken, post_logout_redirect_uri: `${base}/bye`, state: 'out' }).href, 302)
      if (url.pathname === '/bye') return html(`<h1>Signed out of the wiki (${url.searchParams.get('state')})</h1>`)
      return new Response('not found', { status: 404 })
    }

    const context = await browser.newContext()
    const page = await context.newPage()
    const violations: string[] = []
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text())
    })
    await page.goto(`${base}/login`)
    await page.getByLabel('Email').fill('bea@example.com')
    await page.getByLabel('Password').fill('e2e password 1')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL((u) => u.pathname === '/oauth/authorize')
    expect(await page.locator('main').innerText()).toContain('Sign you in with your account')
    await page.getByRole('button', { name: 'Allow' }).click()
    await page.waitForURL((u) => u.href.startsWith(`${base}/callback`))
    expect(await page.locator('h1').innerText()).toBe('Hello Bea Brown')
    expect(await verifiedWithJose(idToken, rp.client_id)).toMatchObject({ name: 'Bea Brown', email_verified: true })

    await page.getByRole('link', { name: 'Sign out' }).click()
    await page.waitForURL((u) => u.pathname === '/oauth/logout')
    expect(await page.locator('main').innerText()).toContain('bea@example.com')
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForURL((u) => u.href.startsWith(`${base}/bye`))
    expect(await page.locator('h1').innerText()).toBe('Signed out of the wiki (out)')
    // The Latchkey session is gone: the account page asks to sign in.
    await page.goto(`${server.url}/account`)
    expect(new URL(page.url()).pathname).toBe('/login')
    expect(violations).toEqual([])
  })
})
