import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createRemoteJWKSet, jwtVerify } from 'jose'
import { TOTP } from 'otpauth'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { type RunningBinary, launchChromium, startBinary } from './server'

// A browser, a binary and WebAuthn ceremonies: slower than in-process tests on a busy machine.
setDefaultTimeout(45_000)

let server: RunningBinary
let browser: Browser
let app: ReturnType<typeof Bun.serve>
let callback: string
let vault: { client_id: string; client_secret: string }

beforeAll(async () => {
  // Chromium refuses WebAuthn on an IP origin: this server's ISSUER is http://localhost:PORT.
  server = await startBinary({}, undefined, { localhost: true })
  app = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('<h1>App callback</h1>', { headers: { 'content-type': 'text/html' } }) })
  callback = `http://127.0.0.1:${app.port}/callback`
  vault = JSON.parse(server.cli(['client', 'create', '--name', 'Vault', '--redirect-uri', callback, '--skip-consent', '--require-mfa']).out)
  for (const email of ['pia@example.com', 'tom@example.com', 'kim@example.com']) expect(server.cli(['user', 'create', '--email', email, '--name', 'Pia Tom', '--password-stdin'], 'browser password\n').code).toBe(0)
  browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
  app?.stop(true)
  server?.cleanup()
})

/** A fresh profile that records CSP violations, with Chromium's virtual authenticator (CTAP2, resident keys, user verification). */
async function freshPage(): Promise<{ context: BrowserContext; page: Page; violations: string[] }> {
  const context = await browser.newContext()
  const page = await context.newPage()
  const violations: string[] = []
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text())
  })
  const cdp = await context.newCDPSession(page)
  await cdp.send('WebAuthn.enable')
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  })
  return { context, page, violations }
}

async function passwordSignIn(page: Page, email: string, path = '/login') {
  await page.goto(`${server.url}${path}`)
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password').fill('browser password')
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
}

async function signOut(page: Page) {
  await page.goto(`${server.url}/account`)
  await page.getByRole('button', { name: 'Sign out', exact: true }).click()
  await page.waitForURL((u) => u.pathname === '/login')
}

/** The Vault app's callback: its code exchanged, the id_token verified against the JWKS with jose. */
async function exchangeAtCallback(page: Page): Promise<Record<string, unknown>> {
  await page.waitForURL((u) => u.href.startsWith(callback))
  const code = new URL(page.url()).searchParams.get('code')!
  const res = await fetch(`${server.direct}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${btoa(`${vault.client_id}:${vault.client_secret}`)}` },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: callback }),
  })
  expect(res.status).toBe(200)
  const { id_token } = (await res.json()) as { id_token: string }
  const jwks = createRemoteJWKSet(new URL(`${server.direct}/.well-known/jwks.json`))
  const { payload } = await jwtVerify(id_token, jwks, { issuer: server.url, audience: vault.client_id })
  return payload
}

/** The Vault app (--require-mfa) from its authorization link, already signed in with two factors. */
async function authorizeVault(page: Page): Promise<Record<string, unknown>> {
  await page.goto(`${server.url}/oauth/authorize?client_id=${vault.client_id}&redirect_uri=${encodeURIComponent(callback)}&scope=openid%20email&state=v&nonce=n1`)
  return exchangeAtCallback(page)
}

describe('passkeys and two-step sign-in in a real browser (Chromium, virtual authenticator)', () => {
  test('add a passkey on /account; sign in with it from /login (autofill); step up with it for a --require-mfa app: amr ["hwk","user","mfa"]', async () => {
    const { context, page, violations } = await freshPage()
    await passwordSignIn(page, 'pia@example.com')
    await page.waitForURL((u) => u.pathname === '/account')
    await page.getByLabel('Passkey name').fill('Virtual key')
    await page.getByRole('button', { name: 'Add a passkey' }).click()
    await page.locator('ul.apps strong', { hasText: 'Virtual key' }).waitFor()
    expect(await page.locator('main').innerText()).toContain('not used yet')

    // Signed out, /login offers the passkey in the email field's autofill (conditional mediation);
    // Chromium's virtual authenticator picks it at once, so the page signs in without a click.
    await page.getByRole('button', { name: 'Sign out', exact: true }).click()
    await page.waitForURL((u) => u.pathname === '/login', { waitUntil: 'commit' })
    await page.waitForURL((u) => u.pathname === '/account')
    expect(await page.locator('main').innerText()).toContain('last used')

    // A password sign-in (in a tab without the authenticator) is one factor: the app asks for a
    // second, and "Use a passkey" on /login/two-step gives it.
    const plain = await context.newPage()
    await passwordSignIn(plain, 'pia@example.com', '/login?reauth=1')
    await plain.waitForURL((u) => u.pathname === '/account')
    await page.goto(`${server.url}/oauth/authorize?client_id=${vault.client_id}&redirect_uri=${encodeURIComponent(callback)}&scope=openid%20email&state=v&nonce=n1`)
    await page.waitForURL((u) => u.pathname === '/login/two-step')
    expect(await page.locator('main').innerText()).toContain('Vault requires two-step verification.')
    await page.getByRole('button', { name: 'Use a passkey' }).click()
    const claims = await exchangeAtCallback(page)
    expect(claims.amr).toEqual(['hwk', 'user', 'mfa'])
    expect(claims.nonce).toBe('n1')
    expect(violations).toEqual([])
  })

  test('TOTP: set up from the QR page with a code, sign in with a code, then with a recovery code; the app gets ["pwd","otp","mfa"]', async () => {
    const { page, violations } = await freshPage()
    await passwordSignIn(page, 'tom@example.com')
    await page.waitForURL((u) => u.pathname === '/account')
    await page.getByRole('button', { name: 'Turn on two-step verification' }).click()
    await page.waitForURL((u) => u.pathname === '/account/two-step')
    expect(await page.locator('.qr svg').count()).toBe(1)
    const secret = (await page.locator('code.secret').innerText()).replace(/\s/g, '')
    const totp = new TOTP({ secret, algorithm: 'SHA1', digits: 6, period: 30 })
    await page.getByLabel('Authentication code').fill(totp.generate())
    await page.getByRole('button', { name: 'Turn on' }).click()
    await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor()
    const codes = await page.locator('ul.codes code').allInnerTexts()
    expect(codes).toHaveLength(10)

    await signOut(page)
    await passwordSignIn(page, 'tom@example.com')
    await page.waitForURL((u) => u.pathname === '/login/two-step')
    // The set-up's code was used: the next step's (one step of drift is allowed).
    await page.getByLabel('Authentication code').fill(totp.generate({ timestamp: Date.now() + 30_000 }))
    await page.getByRole('button', { name: 'Verify' }).click()
    await page.waitForURL((u) => u.pathname === '/account')
    expect(await page.locator('main').innerText()).toContain('10 recovery codes left.')

    await signOut(page)
    await passwordSignIn(page, 'tom@example.com')
    await page.waitForURL((u) => u.pathname === '/login/two-step')
    await page.getByRole('link', { name: 'Use a recovery code' }).click()
    await page.getByLabel('Recovery code').fill(codes[0]!)
    await page.getByRole('button', { name: 'Verify' }).click()
    await page.waitForURL((u) => u.pathname === '/account')
    expect(await page.locator('main').innerText()).toContain('9 recovery codes left.')

    expect((await authorizeVault(page)).amr).toEqual(['pwd', 'otp', 'mfa'])
    expect(violations).toEqual([])

    // Lost phone: the operator resets it; user list shows who has what.
    const tom = (JSON.parse(server.cli(['user', 'list', '--json']).out) as Array<{ id: string; email: string; mfa: unknown }>).find((u) => u.email === 'tom@example.com')!
    expect(tom.mfa).toEqual({ totp: true, passkeys: 0 })
    expect(server.cli(['user', 'reset-mfa', tom.id]).code).toBe(0)
    const after = (JSON.parse(server.cli(['user', 'list', '--json']).out) as Array<{ email: string; mfa: unknown }>).find((u) => u.email === 'tom@example.com')!
    expect(after.mfa).toEqual({ totp: false, passkeys: 0 })
    await passwordSignIn(page, 'tom@example.com')
    await page.waitForURL((u) => u.pathname === '/account')
  })

  test('a user with one factor and none to add sees why the app refuses, and Cancel returns access_denied', async () => {
    expect(server.cli(['user', 'create', '--email', 'una@example.com', '--name', 'Una', '--password-stdin'], 'browser password\n').code).toBe(0)
    const { page, violations } = await freshPage()
    await passwordSignIn(page, 'una@example.com')
    await page.waitForURL((u) => u.pathname === '/account')
    await page.goto(`${server.url}/oauth/authorize?client_id=${vault.client_id}&redirect_uri=${encodeURIComponent(callback)}&scope=openid&state=c`)
    expect(await page.locator('main').innerText()).toContain('Vault requires two-step verification.')
    await page.getByRole('button', { name: 'Cancel' }).click()
    await page.waitForURL((u) => u.href.startsWith(callback))
    expect(new URL(page.url()).searchParams.get('error')).toBe('access_denied')
    expect(violations).toEqual([])
  })
  test('a fresh passkey instead of the password: change it, set one on a passkey-only account, delete the account', async () => {
    const { page, violations } = await freshPage()
    await passwordSignIn(page, 'kim@example.com')
    await page.waitForURL((u) => u.pathname === '/account')
    await page.getByLabel('Passkey name').fill('Kim key')
    await page.getByRole('button', { name: 'Add a passkey' }).click()
    await page.locator('ul.apps strong', { hasText: 'Kim key' }).waitFor()

    // "Change password" with the passkey in place of the current password (left empty).
    await page.getByLabel('New password').fill('kim second password')
    await page.getByRole('button', { name: 'Use a passkey instead' }).click()
    await page.getByText('Your password was changed. Your other browsers were signed out.').waitFor()

    // Passkey only: a password again takes the passkey.
    await page.getByRole('button', { name: 'Remove password' }).click()
    await page.getByText('You sign in with a passkey only: confirm with it to set a password.').waitFor()
    await page.getByLabel('New password').fill('kim third password')
    await page.getByRole('button', { name: 'Confirm with your passkey and set password' }).click()
    await page.getByRole('button', { name: 'Remove password' }).waitFor()

    // And without a password, deleting the account takes the passkey too.
    await page.getByRole('button', { name: 'Remove password' }).click()
    await page.getByText('You sign in with a passkey only').waitFor()
    await page.goto(`${server.url}/account/delete`)
    expect(await page.getByLabel('Your password').count()).toBe(0)
    await page.getByRole('button', { name: 'Confirm with your passkey and delete' }).click()
    await page.getByText('Your account and everything in it were deleted.').waitFor()
    const users = JSON.parse(server.cli(['user', 'list', '--json']).out) as Array<{ email: string }>
    expect(users.map((u) => u.email)).not.toContain('kim@example.com')
    expect(violations).toEqual([])
  })
})
