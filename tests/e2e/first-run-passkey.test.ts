import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import { type RunningBinary, launchChromium, startBinary } from './server'

// A binary, a browser and a WebAuthn ceremony: slower than in-process tests on a busy machine.
setDefaultTimeout(60_000)

let server: RunningBinary
let browser: Browser

beforeAll(async () => {
  // A new server, as first-run.test.ts's; Chromium refuses WebAuthn on an IP origin: ISSUER=http://localhost:PORT.
  server = await startBinary({}, undefined, { localhost: true })
  browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
  server?.cleanup()
})

describe('first run with a passkey, in a real browser (Chromium, virtual authenticator)', () => {
  test('the setup link makes the first admin with a passkey and no password; the passkey signs them in again', async () => {
    const printed = server.cli(['setup-link'])
    expect(printed.code).toBe(0)
    const link = printed.out.trim()
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

    await page.goto(link)
    await page.getByLabel('Full name').fill('Olga Operator')
    await page.getByLabel('Email').fill('olga@example.com')
    // No password typed: the passkey button needs only the name and the email.
    await page.getByRole('button', { name: 'Create with a passkey instead' }).click()
    await page.waitForURL((u) => u.pathname === '/admin/users')
    expect(await page.locator('table.admin').innerText()).toContain('olga@example.com')
    expect(await server.query('SELECT email, password_hash FROM users')).toEqual([{ email: 'olga@example.com', password_hash: '' }])
    const [passkey] = await server.query('SELECT p.name FROM passkeys p JOIN users u ON u.id = p.user_id WHERE u.email = ?', 'olga@example.com')
    expect(passkey).toEqual({ name: 'Passkey' })
    // The link worked once.
    expect((await page.goto(link))!.status()).toBe(404)

    // Signed out, /login offers the passkey in the email field's autofill; the virtual authenticator answers at once.
    await page.goto(`${server.url}/account`)
    await page.getByRole('button', { name: 'Sign out', exact: true }).click()
    await page.waitForURL((u) => u.pathname === '/login', { waitUntil: 'commit' })
    await page.waitForURL((u) => u.pathname === '/account')
    await page.getByRole('link', { name: 'Administration' }).click()
    await page.waitForURL((u) => u.pathname === '/admin/users')
    expect(violations).toEqual([])
  })
})
