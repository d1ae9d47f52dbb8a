/**
 * Machines and devices (issue 38) against the compiled binary with openid-client v6: client
 * credentials, PAR, the device grant (the /device pages walked by a cookie-keeping client) and
 * private_key_jwt (its --jwks-uri served over https from loopback); oauth4webapi, Python Authlib and Go's
 * x/oauth2 with their defaults.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { join } from 'node:path'
import * as jose from 'jose'
import * as client from 'openid-client'
import * as oauth from 'oauth4webapi'
import { CALLBACK, authorizeAsUser, csrfOf, discover, options, registerUser } from './flow'
import { readFileSync } from 'node:fs'
import type { Page } from 'playwright-core'
import { CookieClient, launchChromium, startBinary, type RunningBinary } from './server'
import { DocumentServer } from '../agents/document-server'

setDefaultTimeout(60_000)

let server: RunningBinary
// Serves --jwks-uri key sets over https from loopback, on a certificate the binary trusts through NODE_EXTRA_CA_CERTS.
const docs = new DocumentServer()
const insecure = { execute: [client.allowInsecureRequests] }

beforeAll(async () => {
  server = await startBinary({ LOGIN_ATTEMPTS_PER_MINUTE: '1000', CLIENT_ID_METADATA_ALLOW_HOSTS: docs.host, NODE_EXTRA_CA_CERTS: docs.tls.certPath })
  const r = server.cli(['resource', 'create', '--uri', 'https://reports.example', '--name', 'Reports', '--scope', 'reports:read=Read reports'])
  if (r.code !== 0) throw new Error(r.err)
  registerUser(server, 'dana@example.com', 'Dana Device')
})
afterAll(() => {
  server?.cleanup()
  docs.stop()
})

function cli(args: string[]) {
  const r = server.cli(args)
  if (r.code !== 0) throw new Error(r.err)
  return JSON.parse(r.out) as { client_id: string; client_secret: string | null }
}

/**
 * The person, on another device: the code's page (303 to sign-in, signed out), signing in as Dana,
 * and the consent page it comes back to (200). Returns the browser and the consent page's HTML.
 */
async function consentPage(verificationUriComplete: string): Promise<{ browser: CookieClient; consent: string }> {
  const browser = new CookieClient(server.url)
  let res = await browser.fetch(verificationUriComplete)
  expect(res.status).toBe(303)
  const loginHtml = await (await browser.fetch(res.headers.get('location')!)).text()
  const returnTo = /name="return_to" value="([^"]+)"/.exec(loginHtml)![1]!.replaceAll('&amp;', '&')
  res = await browser.fetch('/login', { method: 'POST', body: new URLSearchParams({ email: 'dana@example.com', password: 'e2e password 1', csrf_token: csrfOf(loginHtml), return_to: returnTo }) })
  res = await browser.fetch(res.headers.get('location')!)
  expect(res.status).toBe(200)
  return { browser, consent: await res.text() }
}

async function introspect(rp: { client_id: string; client_secret: string | null }, token: string) {
  const res = await fetch(`${server.direct}/api/oauth/introspect`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${btoa(`${rp.client_id}:${rp.client_secret}`)}` },
    body: new URLSearchParams({ token }),
  })
  return (await res.json()) as Record<string, unknown>
}

test('clientCredentialsGrant: a token for the resource, sub = the client, no refresh token; userinfo refuses it', async () => {
  const job = cli(['client', 'create', '--name', 'Nightly job', '--grant', 'client_credentials', '--allowed-scope', 'reports:read'])
  const config = await client.discovery(new URL(server.url), job.client_id, job.client_secret!, undefined, insecure)
  expect(config.serverMetadata().grant_types_supported).toContain('client_credentials')
  const tokens = await client.clientCredentialsGrant(config, { scope: 'reports:read', resource: 'https://reports.example' })
  expect(tokens.token_type).toBe('bearer')
  expect(tokens.refresh_token).toBeUndefined()
  expect(tokens.scope).toBe('reports:read')
  expect(await introspect(job, tokens.access_token)).toMatchObject({ active: true, sub: job.client_id, client_id: job.client_id, aud: 'https://reports.example' })
  const userinfo = await fetch(`${server.direct}/api/oauth/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
  expect(userinfo.status).toBe(401)
})

test('buildAuthorizationUrlWithPAR: the browser carries only client_id and request_uri; the code exchange works', async () => {
  const rp = cli(['client', 'create', '--name', 'Pushing app', '--redirect-uri', CALLBACK, '--require-par'])
  const config = await client.discovery(new URL(server.url), rp.client_id, rp.client_secret!, undefined, insecure)
  const verifier = client.randomPKCECodeVerifier()
  const state = client.randomState()
  const url = await client.buildAuthorizationUrlWithPAR(config, { redirect_uri: CALLBACK, scope: 'openid email', code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state })
  expect([...url.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri'])
  const callback = await authorizeAsUser(server, url, 'dana@example.com')
  const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, idTokenExpected: true })
  expect(tokens.claims()).toMatchObject({ email: 'dana@example.com', aud: rp.client_id })
  // The same request_uri again: an error page.
  expect((await fetch(url, { redirect: 'manual' })).status).toBe(400)
})

test('initiateDeviceAuthorization + pollDeviceAuthorizationGrant, the user allowing on /device', async () => {
  const tv = cli(['client', 'create', '--name', 'Kitchen TV', '--public', '--grant', 'urn:ietf:params:oauth:grant-type:device_code'])
  const config = await client.discovery(new URL(server.url), tv.client_id, undefined, client.None(), insecure)
  const started = await client.initiateDeviceAuthorization(config, { scope: 'openid email' })
  expect(started.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/)
  expect(started.verification_uri).toBe(`${server.url}/device`)
  const polling = client.pollDeviceAuthorizationGrant(config, started)

  // The user, on another device: the code's page, sign-in, the consent page, Allow.
  const { browser, consent } = await consentPage(started.verification_uri_complete!)
  expect(consent).toContain('Kitchen TV')
  expect(consent).toContain('Only continue if you started this yourself, on a device in front of you')
  const done = await browser.fetch('/device', { method: 'POST', body: new URLSearchParams({ csrf_token: csrfOf(consent), user_code: started.user_code, decision: 'allow' }) })
  expect(await done.text()).toContain('Device connected')

  const tokens = await polling
  expect(tokens.refresh_token).toBeTruthy()
  expect(tokens.claims()).toMatchObject({ email: 'dana@example.com', aud: tv.client_id })
})

test('PrivateKeyJwt: client credentials with an ES256 assertion; a secret is not accepted for it', async () => {
  const { privateKey, publicKey } = await jose.generateKeyPair('ES256', { extractable: true })
  const file = join(server.dir, 'signer-jwks.json')
  await Bun.write(file, JSON.stringify({ keys: [{ ...(await jose.exportJWK(publicKey)), kid: 'signer-1', alg: 'ES256' }] }))
  const signer = cli(['client', 'create', '--name', 'Signer', '--grant', 'client_credentials', '--allowed-scope', 'reports:read', '--auth-method', 'private_key_jwt', '--jwks-file', file])
  expect(signer.client_secret).toBeNull()
  const config = await client.discovery(new URL(server.url), signer.client_id, {}, client.PrivateKeyJwt({ key: privateKey, kid: 'signer-1' }), insecure)
  expect(config.serverMetadata().token_endpoint_auth_methods_supported).toContain('private_key_jwt')
  const tokens = await client.clientCredentialsGrant(config, { scope: 'reports:read' })
  expect(tokens.scope).toBe('reports:read')
  const again = await client.clientCredentialsGrant(config, { scope: 'reports:read' })
  expect(again.access_token).not.toBe(tokens.access_token)
  const withSecret = await fetch(`${server.direct}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'reports:read', client_id: signer.client_id, client_secret: 'anything' }),
  })
  expect(withSecret.status).toBe(401)
})

test('PrivateKeyJwt with --jwks-uri: the key set fetched over https from loopback (a test CA) once, and cached; an assertion signed by a key not in it is refused', async () => {
  const { privateKey, publicKey } = await jose.generateKeyPair('ES256', { extractable: true })
  const jwks = { keys: [{ ...(await jose.exportJWK(publicKey)), kid: 'remote-1', alg: 'ES256' }] }
  const uri = docs.route('/remote-signer.jwks', () => Response.json(jwks, { headers: { 'cache-control': 'max-age=3600' } }))
  const signer = cli(['client', 'create', '--name', 'Remote signer', '--grant', 'client_credentials', '--allowed-scope', 'reports:read', '--auth-method', 'private_key_jwt', '--jwks-uri', uri])
  expect(docs.hits.get('/remote-signer.jwks') ?? 0).toBe(0)
  const config = await client.discovery(new URL(server.url), signer.client_id, {}, client.PrivateKeyJwt({ key: privateKey, kid: 'remote-1' }), insecure)
  const first = await client.clientCredentialsGrant(config, { scope: 'reports:read' })
  const second = await client.clientCredentialsGrant(config, { scope: 'reports:read' })
  expect([first.scope, second.scope, first.access_token === second.access_token]).toEqual(['reports:read', 'reports:read', false])
  expect(docs.hits.get('/remote-signer.jwks')).toBe(1)
  const stranger = await jose.generateKeyPair('ES256', { extractable: true })
  const forged = await client.discovery(new URL(server.url), signer.client_id, {}, client.PrivateKeyJwt({ key: stranger.privateKey, kid: 'remote-1' }), insecure)
  const refused = await client.clientCredentialsGrant(forged, { scope: 'reports:read' }).catch((error: unknown) => error as { error?: string; status?: number })
  expect([(refused as { status?: number }).status, (refused as { error?: string }).error]).toEqual([401, 'invalid_client'])
})

test('oauth4webapi with its defaults: client credentials (ClientSecretBasic), a pushed request, and a device authorization polled (authorization_pending), another denied (access_denied, then invalid_grant)', async () => {
  const as = await discover(server)
  const job = cli(['client', 'create', '--name', 'Backup job', '--grant', 'client_credentials', '--allowed-scope', 'reports:read'])
  const issued = await oauth.processClientCredentialsResponse(as, { client_id: job.client_id }, await oauth.clientCredentialsGrantRequest(as, { client_id: job.client_id }, oauth.ClientSecretBasic(job.client_secret!), { scope: 'reports:read' }, options))
  expect([issued.token_type, issued.scope, issued.refresh_token]).toEqual(['bearer', 'reports:read', undefined])
  expect(await introspect(job, issued.access_token)).toMatchObject({ active: true, sub: job.client_id })

  const rp = cli(['client', 'create', '--name', 'Pushing app 2', '--redirect-uri', CALLBACK])
  const pushed = await oauth.processPushedAuthorizationResponse(as, { client_id: rp.client_id }, await oauth.pushedAuthorizationRequest(as, { client_id: rp.client_id }, oauth.ClientSecretBasic(rp.client_secret!), { response_type: 'code', redirect_uri: CALLBACK, scope: 'openid', code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()), code_challenge_method: 'S256' }, options))
  expect([pushed.request_uri.startsWith('urn:ietf:params:oauth:request_uri:'), pushed.expires_in]).toEqual([true, 60])

  const tv = cli(['client', 'create', '--name', 'Hall TV', '--public', '--grant', 'urn:ietf:params:oauth:grant-type:device_code'])
  const device = { client_id: tv.client_id }
  const started = await oauth.processDeviceAuthorizationResponse(as, device, await oauth.deviceAuthorizationRequest(as, device, oauth.None(), { scope: 'openid' }, options))
  expect([started.verification_uri, started.expires_in, started.interval]).toEqual([`${server.url}/device`, 600, 5])
  const poll = async (deviceCode: string) => {
    try {
      await oauth.processDeviceCodeResponse(as, device, await oauth.deviceCodeGrantRequest(as, device, oauth.None(), deviceCode, options))
      return 'tokens'
    } catch (error) {
      return (error as oauth.ResponseBodyError).error
    }
  }
  expect(await poll(started.device_code)).toBe('authorization_pending')
  // Another request the person says no to on /device, polled for the first time after that: access_denied, and then the code is spent.
  const refused = await oauth.processDeviceAuthorizationResponse(as, device, await oauth.deviceAuthorizationRequest(as, device, oauth.None(), { scope: 'openid' }, options))
  const { browser, consent } = await consentPage(refused.verification_uri_complete!)
  expect(consent).toContain('Hall TV')
  const denied = await browser.fetch('/device', { method: 'POST', body: new URLSearchParams({ csrf_token: csrfOf(consent), user_code: refused.user_code, decision: 'deny' }) })
  expect(denied.status).toBe(200)
  expect(await poll(refused.device_code)).toBe('access_denied')
  expect(await poll(refused.device_code)).toBe('invalid_grant')
})

const axeSource = readFileSync(join(import.meta.dir, '../../node_modules/axe-core/axe.min.js'), 'utf8')

/** The page as a phone shows it: no sideways scrolling, no axe-core violation. */
async function phoneFailures(page: Page): Promise<string[]> {
  const where = new URL(page.url()).pathname
  const failures: string[] = []
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }))
  if (scrollWidth > innerWidth) failures.push(`${where}: scrolls sideways (${scrollWidth} > ${innerWidth})`)
  // CSP (script-src 'self') keeps axe out of a <script> tag; the DevTools protocol evaluates it.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource)
  const violations = (await page.evaluate(() => (window as unknown as { axe: { run: (o: object) => Promise<{ violations: unknown[] }> } }).axe.run({ resultTypes: ['violations'] }).then((r) => r.violations))) as Array<{ id: string; nodes: unknown[] }>
  for (const v of violations) failures.push(`${where}: axe ${v.id} (${v.nodes.length} nodes)`)
  return failures
}

test('the device flow on a phone (Chromium, 360×780): the code typed at /device, sign-in, a consent page naming the app, time and address with the warning, Allow → the poller gets tokens; axe-core clean', async () => {
  const tv = cli(['client', 'create', '--name', 'Living-room TV', '--public', '--grant', 'urn:ietf:params:oauth:grant-type:device_code'])
  const config = await client.discovery(new URL(server.url), tv.client_id, undefined, client.None(), insecure)
  const started = await client.initiateDeviceAuthorization(config, { scope: 'openid email' })
  const polling = client.pollDeviceAuthorizationGrant(config, started)
  const browser = await launchChromium()
  try {
    const page = await browser.newPage({ viewport: { width: 360, height: 780 }, isMobile: true, hasTouch: true })
    const failures: string[] = []
    await page.goto(started.verification_uri)
    failures.push(...(await phoneFailures(page)))
    // Typed as a person would: lower case, without the hyphen.
    await page.getByLabel('Code').fill(started.user_code.replace('-', '').toLowerCase())
    await page.getByRole('button', { name: 'Continue' }).click()
    await page.waitForURL((url) => url.pathname === '/login')
    failures.push(...(await phoneFailures(page)))
    await page.getByLabel('Email').fill('dana@example.com')
    await page.getByLabel('Password', { exact: true }).fill('e2e password 1')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL((url) => url.pathname === '/device' && url.searchParams.get('user_code') === started.user_code)
    const consent = page.locator('main')
    const text = await consent.innerText()
    expect(text).toContain('Living-room TV on a device wants to access your account')
    expect(text).toMatch(/Requested .+ UTC from the address 127\.0\.0\.1\./)
    expect(text).toContain('Only continue if you started this yourself, on a device in front of you.')
    expect(await page.locator('time').getAttribute('datetime')).toMatch(/^\d{4}-\d\d-\d\dT/)
    failures.push(...(await phoneFailures(page)))
    await page.getByRole('button', { name: 'Allow' }).click()
    await page.getByRole('heading', { name: 'Device connected' }).waitFor()
    failures.push(...(await phoneFailures(page)))
    expect(failures).toEqual([])
    const tokens = await polling
    expect(tokens.refresh_token).toBeTruthy()
    expect(tokens.claims()).toMatchObject({ email: 'dana@example.com', aud: tv.client_id })
  } finally {
    await browser.close()
  }
})

/**
 * Python's Authlib (Debian's python3-authlib): client credentials and the device flow with its
 * defaults, through tests/e2e/authlib/client.py.
 */
function authlib(args: string[]) {
  const proc = Bun.spawn(['/usr/bin/python3', join(import.meta.dir, 'authlib/client.py'), server.url, ...args], { stdout: 'pipe', stderr: 'pipe' })
  const lines = (async function* () {
    let buffered = ''
    for await (const chunk of proc.stdout.pipeThrough(new TextDecoderStream())) {
      buffered += chunk
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        yield JSON.parse(buffered.slice(0, nl)) as Record<string, unknown>
        buffered = buffered.slice(nl + 1)
      }
    }
    const err = await new Response(proc.stderr).text()
    if (err) throw new Error(`authlib: ${err}`)
  })()
  return { next: async () => (await lines.next()).value as Record<string, unknown>, proc }
}

test('Python Authlib: client credentials (client_secret_basic, its default) — a token for the resource, sub = the client', async () => {
  const job = cli(['client', 'create', '--name', 'Python job', '--grant', 'client_credentials', '--allowed-scope', 'reports:read'])
  const run = authlib(['client_credentials', job.client_id, job.client_secret!, 'reports:read', 'https://reports.example'])
  const token = await run.next()
  expect(await run.proc.exited).toBe(0)
  expect(token).toMatchObject({ token_type: 'Bearer', scope: 'reports:read', expires_in: 3600 })
  expect(token.refresh_token).toBeUndefined()
  expect(await introspect(job, token.access_token as string)).toMatchObject({ active: true, sub: job.client_id, aud: 'https://reports.example' })
})

test('Python Authlib: the device flow — it polls (authorization_pending) while the user allows on /device, then gets the tokens', async () => {
  const tv = cli(['client', 'create', '--name', 'Python TV', '--public', '--grant', 'urn:ietf:params:oauth:grant-type:device_code'])
  const run = authlib(['device', tv.client_id, 'openid email'])
  const started = (await run.next()) as { user_code: string; verification_uri_complete: string; interval: number }
  expect(started.interval).toBe(5)
  const { browser, consent } = await consentPage(started.verification_uri_complete)
  expect(consent).toContain('Python TV')
  const done = await browser.fetch('/device', { method: 'POST', body: new URLSearchParams({ csrf_token: csrfOf(consent), user_code: started.user_code, decision: 'allow' }) })
  expect(await done.text()).toContain('Device connected')
  const tokens = await run.next()
  expect(await run.proc.exited).toBe(0)
  expect(tokens).toMatchObject({ token_type: 'Bearer', scope: 'openid email' })
  expect(tokens.refresh_token).toBeTruthy()
  expect(tokens.id_token).toBeTruthy()
})

/**
 * Go's golang.org/x/oauth2/clientcredentials, Debian's (golang-golang-x-oauth2-dev 0.3.0, built
 * offline in GOPATH mode). Its DeviceAuth came in 0.13, which Debian does not ship and Go modules
 * cannot be fetched here: the device flow is covered by openid-client and Authlib above.
 */
test('Go x/oauth2 clientcredentials: a token for the resource with its defaults (Basic, id and secret form-encoded)', async () => {
  const job = cli(['client', 'create', '--name', 'Go job', '--grant', 'client_credentials', '--allowed-scope', 'reports:read'])
  const cache = join(server.dir, 'go-build')
  const env = { ...process.env, GO111MODULE: 'off', GOPATH: '/usr/share/gocode', GOCACHE: cache, HOME: server.dir }
  const proc = Bun.spawn(['/usr/bin/go', 'run', join(import.meta.dir, 'go/clientcredentials.go'), server.url, job.client_id, job.client_secret!, 'reports:read', 'https://reports.example'], { env, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  expect(err).toBe('')
  expect(code).toBe(0)
  const token = JSON.parse(out) as Record<string, unknown>
  expect(token).toEqual({ access_token: expect.any(String), token_type: 'Bearer', has_refresh: false, scope: 'reports:read', expires_in: 3600 })
  expect(await introspect(job, token.access_token as string)).toMatchObject({ active: true, sub: job.client_id, aud: 'https://reports.example' })
})
