/**
 * SPEC "Sign in with another account", end to end: the compiled binary, a real OpenID Connect
 * provider started here (oidc-provider, with one account whose address is verified and one whose
 * is not), real Chromium clicking "Continue with Acme" through to an app's callback — the app is
 * openid-client, which then checks the id_token Latchkey issued — and connecting and disconnecting
 * the provider on /account.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import * as client from 'openid-client'
import type { Browser, Page } from 'playwright-core'
import { type RunningBinary, freePort, launchChromium, startBinary } from './server'
import { startUpstream, type Upstream } from '../providers/upstream'

setDefaultTimeout(60_000)

let server: RunningBinary
let upstream: Upstream
let browser: Browser
let app: ReturnType<typeof Bun.serve>
let appConfig: client.Configuration
let callback: string

beforeAll(async () => {
  const upstreamPort = await freePort()
  server = await startBinary({ CLIENT_ID_METADATA_ALLOW_HOSTS: `127.0.0.1:${upstreamPort}`, LOG_LEVEL: 'info' })
  upstream = await startUpstream({ port: upstreamPort, redirectUris: [`${server.url}/login/provider/acme/callback`] })
  upstream.accounts.set('u-verified', { email: 'vera@example.com', email_verified: true, name: 'Vera Verified' })
  upstream.accounts.set('u-unverified', { email: 'ursula@example.com', email_verified: false, name: 'Ursula Unverified' })
  upstream.accounts.set('u-ann', { email: 'ann.elsewhere@example.net', email_verified: true, name: 'Ann Elsewhere' })
  const secretFile = join(server.dir, 'acme.secret')
  writeFileSync(secretFile, upstream.clientSecret, { mode: 0o600 })
  const made = server.cli(['provider', 'create', '--id', 'acme', '--name', 'Acme', '--issuer', upstream.issuer, '--client-id', upstream.clientId, '--client-secret-file', secretFile, '--allow-create'])
  expect(made.err).toBe('')
  expect(JSON.parse(made.out).callback_url).toBe(`${server.url}/login/provider/acme/callback`)
  expect(server.cli(['user', 'create', '--email', 'ann@example.com', '--name', 'Ann Lee', '--password-stdin'], 'browser password\n').code).toBe(0)

  app = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('<h1>App callback</h1>', { headers: { 'content-type': 'text/html' } }) })
  callback = `http://127.0.0.1:${app.port}/callback`
  const registered = JSON.parse(server.cli(['client', 'create', '--name', 'Notes', '--redirect-uri', callback, '--skip-consent']).out)
  appConfig = await client.discovery(new URL(server.url), registered.client_id, registered.client_secret, undefined, { execute: [client.allowInsecureRequests] })
  browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
  app?.stop(true)
  await upstream?.close()
  server?.cleanup()
})

async function freshPage(): Promise<{ page: Page; violations: string[] }> {
  const context = await browser.newContext()
  const page = await context.newPage()
  const violations: string[] = []
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text())
  })
  return { page, violations }
}

/** The app starts a sign-in (PKCE, state, nonce), Chromium clicks "Continue with Acme", the app exchanges the code and checks the id_token. */
async function signInToApp(account: string) {
  const { page, violations } = await freshPage()
  const verifier = client.randomPKCECodeVerifier()
  const state = client.randomState()
  const nonce = client.randomNonce()
  const url = client.buildAuthorizationUrl(appConfig, { redirect_uri: callback, scope: 'openid email profile', state, nonce, code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' })
  upstream.next.account = account
  await page.goto(url.href)
  expect(new URL(page.url()).pathname).toBe('/login')
  expect(await page.locator('main').innerText()).toContain('to continue to Notes')
  await page.getByRole('link', { name: 'Continue with Acme' }).click()
  await page.waitForURL((u) => u.href.startsWith(callback))
  expect(await page.locator('h1').innerText()).toBe('App callback')
  const tokens = await client.authorizationCodeGrant(appConfig, new URL(page.url()), { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce })
  await page.context().close()
  return { claims: tokens.claims()!, violations }
}

describe('Continue with Acme (Chromium, the binary, oidc-provider)', () => {
  test('a new person with a verified address gets an account and reaches the app: amr ["fed"], email verified', async () => {
    const { claims, violations } = await signInToApp('u-verified')
    expect([claims.email, claims.email_verified, claims.amr, claims.name]).toEqual(['vera@example.com', true, ['fed'], 'Vera Verified'])
    expect(violations).toEqual([])
    // Signed in again with the same identity: the same account.
    const again = await signInToApp('u-verified')
    expect(again.claims.sub).toBe(claims.sub)
  })

  test('an address the provider did not verify makes an unverified account (email_verified false at the app)', async () => {
    const { claims } = await signInToApp('u-unverified')
    expect([claims.email, claims.email_verified, claims.amr]).toEqual(['ursula@example.com', false, ['fed']])
  })

  test('Ann connects Acme on /account (after her password) and disconnects it; the provider\'s tokens are in no log line', async () => {
    const { page, violations } = await freshPage()
    await page.goto(`${server.url}/login`)
    await page.getByLabel('Email').fill('ann@example.com')
    await page.getByLabel('Password').fill('browser password')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL((u) => u.pathname === '/account')
    const section = page.locator('#connected')
    expect(await section.locator('h2').innerText()).toBe('Connected accounts')
    upstream.next.account = 'u-ann'
    await section.getByRole('button', { name: 'Connect Acme' }).click()
    await page.waitForURL((u) => u.pathname === '/account' && u.hash === '#connected')
    expect(await section.innerText()).toContain('ann.elsewhere@example.net')
    const rows = await server.query('SELECT u.email AS email, i.subject AS subject FROM user_identities i JOIN users u ON u.id = i.user_id ORDER BY i.subject')
    expect(rows.map((r) => [r.email, r.subject])).toEqual([
      ['ann@example.com', 'u-ann'],
      ['ursula@example.com', 'u-unverified'],
      ['vera@example.com', 'u-verified'],
    ])
    await section.getByRole('button', { name: 'Disconnect Acme' }).click()
    await page.waitForURL((u) => u.pathname === '/account')
    expect(await section.getByRole('button', { name: 'Connect Acme' }).count()).toBe(1)
    expect((await server.query("SELECT subject FROM user_identities WHERE subject = 'u-ann'")).length).toBe(0)
    expect(violations).toEqual([])
    // The provider's answers reached no log line: no access token, no id_token, no code verifier.
    expect(server.output()).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\./)
    expect(server.output()).not.toContain('access_token')
  })
})

const axeSource = readFileSync(join(import.meta.dir, '../../node_modules/axe-core/axe.min.js'), 'utf8')

/** As tests/e2e/screens.test.ts checks every screen: no sideways scrolling at 360 px, axe-core clean, light and dark. */
async function screenFailures(page: Page): Promise<string[]> {
  const failures: string[] = []
  for (const width of [1280, 360])
    for (const scheme of ['light', 'dark'] as const) {
      await page.setViewportSize({ width, height: 800 })
      await page.emulateMedia({ colorScheme: scheme })
      const where = `${new URL(page.url()).pathname} at ${width} ${scheme}`
      const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }))
      if (scrollWidth > innerWidth) failures.push(`${where}: scrolls sideways (${scrollWidth} > ${innerWidth})`)
      if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource)
      const violations = (await page.evaluate(() => (window as unknown as { axe: { run: (o: object) => Promise<{ violations: Array<{ id: string }> }> } }).axe.run({ resultTypes: ['violations'] }).then((r) => r.violations))) as Array<{ id: string }>
      for (const v of violations) failures.push(`${where}: axe ${v.id}`)
    }
  return failures
}

describe('the pages (360 px, axe-core, light and dark)', () => {
  test('/login with Continue with Acme, /account with Connected accounts, /admin/providers, a refused callback', async () => {
    expect(server.cli(['user', 'create', '--email', 'root@example.com', '--name', 'Root Admin', '--password-stdin', '--admin'], 'browser password\n').code).toBe(0)
    const { page, violations } = await freshPage()
    const failures: string[] = []
    await page.goto(`${server.url}/login`)
    expect(await page.getByRole('link', { name: 'Continue with Acme' }).count()).toBe(1)
    failures.push(...(await screenFailures(page)))
    await page.getByLabel('Email').fill('root@example.com')
    await page.getByLabel('Password').fill('browser password')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL((u) => u.pathname === '/account')
    failures.push(...(await screenFailures(page)))
    await page.goto(`${server.url}/admin/providers`)
    expect(await page.locator('h1').innerText()).toBe('Sign-in providers')
    failures.push(...(await screenFailures(page)))
    const refused = await page.goto(`${server.url}/login/provider/acme/callback?state=nothing&code=x`)
    expect(refused!.status()).toBe(400)
    expect(await page.locator('h1').innerText()).toBe('Sign-in failed')
    failures.push(...(await screenFailures(page)))
    expect(failures).toEqual([])
    expect(violations).toEqual([])
  })
})

describe('a second Latchkey as the provider', () => {
  let upstreamLatchkey: RunningBinary
  let local: RunningBinary

  beforeAll(async () => {
    upstreamLatchkey = await startBinary({})
    // On localhost: cookies are per host, not per port, and each Latchkey keeps its own.
    local = await startBinary({ CLIENT_ID_METADATA_ALLOW_HOSTS: new URL(upstreamLatchkey.url).host }, undefined, { localhost: true })
    const registered = JSON.parse(upstreamLatchkey.cli(['client', 'create', '--name', 'Our Latchkey', '--redirect-uri', `${local.url}/login/provider/corp/callback`, '--skip-consent']).out)
    expect(upstreamLatchkey.cli(['user', 'create', '--email', 'dora@example.com', '--name', 'Dora Upstream', '--password-stdin'], 'upstream password\n').code).toBe(0)
    // Dora has an account here too; the CLI vouches for both addresses (email_verified).
    expect(local.cli(['user', 'create', '--email', 'dora@example.com', '--name', 'Dora Local', '--password-stdin'], 'local password 1\n').code).toBe(0)
    const secretFile = join(local.dir, 'corp.secret')
    writeFileSync(secretFile, registered.client_secret, { mode: 0o600 })
    const made = local.cli(['provider', 'create', '--id', 'corp', '--name', 'Corp Latchkey', '--issuer', upstreamLatchkey.url, '--client-id', registered.client_id, '--client-secret-file', secretFile, '--link-verified-email', '--trust-mfa'])
    expect(made.err).toBe('')
  })

  afterAll(() => {
    local?.cleanup()
    upstreamLatchkey?.cleanup()
  })

  test('Dora signs in at the other Latchkey and is linked to her account here by her verified address; the identity is the other Latchkey\'s sub', async () => {
    const { page, violations } = await freshPage()
    await page.goto(`${local.url}/login`)
    await page.getByRole('link', { name: 'Continue with Corp Latchkey' }).click()
    await page.waitForURL((u) => u.origin === upstreamLatchkey.url && u.pathname === '/login')
    await page.getByLabel('Email').fill('dora@example.com')
    await page.getByLabel('Password').fill('upstream password')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL((u) => u.origin === local.url && u.pathname === '/account')
    expect(await page.locator('h1').innerText()).toBe('Dora Local')
    const [upstreamDora] = await upstreamLatchkey.query("SELECT id FROM users WHERE email = 'dora@example.com'")
    const identities = await local.query('SELECT provider_id, subject, email FROM user_identities')
    expect(identities).toEqual([{ provider_id: 'corp', subject: upstreamDora!.id, email: 'dora@example.com' }])
    const [session] = await local.query('SELECT amr FROM sessions')
    // The other Latchkey's sign-in was a password (amr ["pwd"]): --trust-mfa has nothing to trust.
    expect(session!.amr).toBe('fed')
    expect(violations).toEqual([])
  })
})
