import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { TestSmtp, linkIn, subjectOf } from '../mail/smtp'
import { CookieClient, type RunningBinary, launchChromium, startBinary } from './server'

// Two runs of the binary, a real SMTP server and a browser with a virtual authenticator.
setDefaultTimeout(90_000)

let smtp: TestSmtp
let browser: Browser
const running: RunningBinary[] = []

beforeAll(async () => {
  smtp = await TestSmtp.start()
  browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
  for (const server of running) server.cleanup()
  await smtp?.down()
})

/** A browser profile with Chromium's virtual authenticator (CTAP2, resident keys, user verification). */
async function intruderBrowser(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext()
  const page = await context.newPage()
  const cdp = await context.newCDPSession(page)
  await cdp.send('WebAuthn.enable')
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  })
  return { context, page }
}

async function form(client: CookieClient, path: string, fields: Record<string, string>) {
  const page = await client.fetch(path)
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(await page.text())![1]!
  return client.fetch(path.split('?')[0]!, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ ...fields, csrf_token: csrf }) })
}

describe('pre-account takeover, through the binary (SPEC "Recovery")', () => {
  test("an intruder signs up with Ann's address and adds a passkey; Ann's reset link removes it: the intruder's passkey sign-in then fails", async () => {
    // The server runs without mail first: sign-up asks for no proof and a passkey may be added.
    const first = await startBinary({ LOGIN_ATTEMPTS_PER_MINUTE: '1000', SIGNUP: 'open' }, undefined, { localhost: true })
    running.push(first)
    const { page } = await intruderBrowser()
    await page.goto(`${first.url}/signup`)
    await page.getByLabel('Full name').fill('Not Ann')
    await page.getByLabel('Email').fill('ann@example.com')
    await page.getByLabel('Password').fill('intruder password')
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.waitForURL((u) => u.pathname === '/account')
    await page.getByLabel('Passkey name').fill('Intruder key')
    await page.getByRole('button', { name: 'Add a passkey' }).click()
    await page.locator('ul.apps strong', { hasText: 'Intruder key' }).waitFor()
    // The passkey signs in (autofill on /login picks it at once).
    await page.getByRole('button', { name: 'Sign out', exact: true }).click()
    await page.waitForURL((u) => u.pathname === '/account')
    expect(await first.query('SELECT CAST(count(*) AS INTEGER) AS n FROM passkeys')).toEqual([{ n: 1 }])
    expect(await first.stop('SIGTERM')).toBe(0)

    // The same database, now with mail. Ann, the address's owner, uses "Forgot password".
    const server = await startBinary(
      { SMTP_URL: smtp.url, MAIL_FROM: 'Latchkey <id@example.com>', NODE_EXTRA_CA_CERTS: smtp.tls.certPath, LOGIN_ATTEMPTS_PER_MINUTE: '1000', NEW_DEVICE_EMAIL: 'off', DATABASE_URL: first.databaseUrl },
      first.dir,
      { localhost: true },
    )
    running.push(server)
    const before = smtp.received.length
    const ann = new CookieClient(server.direct)
    expect((await form(ann, '/forgot-password', { email: 'ann@example.com' })).status).toBe(200)
    const [message] = (await smtp.waitFor(before + 1, 30_000)).slice(before)
    expect(subjectOf(message!.raw)).toBe('Reset your password')
    const link = linkIn(message!.raw)
    expect(link).toStartWith(`${server.url}/reset-password?token=`)
    const resetPage = await ann.fetch(link.slice(server.url.length))
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(await resetPage.text())![1]!
    const done = await ann.fetch('/reset-password', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf_token: csrf, token: new URL(link).searchParams.get('token')!, password: 'ann owns this now' }),
    })
    expect(done.status).toBe(200)
    const html = await done.text()
    expect(html).toContain('Everything set up on it before was removed:')
    expect(html).toContain('<li>The passkey &quot;Intruder key&quot;</li>')
    expect(await first.query('SELECT CAST(count(*) AS INTEGER) AS n FROM passkeys')).toEqual([{ n: 0 }])

    // The intruder's browser: its session is gone, and its passkey no longer signs in.
    await page.goto(`${server.url}/account`)
    await page.waitForURL((u) => u.pathname === '/login', { waitUntil: 'commit' })
    const refused = await page.waitForResponse((r) => r.url().endsWith('/login/passkey') && r.request().method() === 'POST')
    expect(refused.status()).toBe(401)
    expect(await first.query('SELECT CAST(count(*) AS INTEGER) AS n FROM sessions')).toEqual([{ n: 0 }])
    // Ann signs in with her password, with no second step.
    expect((await form(new CookieClient(server.direct), '/login', { email: 'ann@example.com', password: 'ann owns this now' })).headers.get('location')).toBe('/account')
  })
})
