import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { Browser, BrowserContext } from 'playwright-core'
import { type RunningBinary, launchChromium, startBinary } from './server'

// Spawns the binary and a browser: slower than in-process tests on a busy machine.
setDefaultTimeout(60_000)

const CHROME_LINUX = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'
const SAFARI_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1'

let server: RunningBinary
let browser: Browser

beforeAll(async () => {
  server = await startBinary()
  expect(server.cli(['user', 'create', '--email', 'ann@example.com', '--name', 'Ann Lee', '--password-stdin'], 'browser password\n').code).toBe(0)
  browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
  server?.cleanup()
})

async function signedInContext(userAgent: string): Promise<BrowserContext> {
  const context = await browser.newContext({ userAgent })
  const page = await context.newPage()
  await page.goto(`${server.url}/login`)
  await page.getByLabel('Email').fill('ann@example.com')
  await page.getByLabel('Password').fill('browser password')
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL((u) => u.pathname === '/account')
  return context
}

describe('"Where you\'re signed in" in a real browser (Chromium)', () => {
  test('two browsers of one user: A lists both and signs B out; B\'s next page load is signed out', async () => {
    const a = await signedInContext(CHROME_LINUX)
    const b = await signedInContext(SAFARI_IPHONE)
    const pageA = a.pages()[0]!
    await pageA.reload()
    const section = pageA.locator('#sessions')
    expect(await section.locator('h2').innerText()).toBe("Where you're signed in")
    const items = section.locator('li')
    expect(await items.count()).toBe(2)
    expect(await items.nth(0).innerText()).toContain('Chrome on Linux')
    expect(await items.nth(0).innerText()).toContain('This device')
    expect(await items.nth(1).innerText()).toContain('Safari on iPhone')
    expect(await items.nth(1).innerText()).not.toContain('This device')
    expect(await items.nth(1).innerText()).toContain('127.0.0.1')

    await items.nth(1).getByRole('button', { name: 'Sign out' }).click()
    await pageA.waitForURL((u) => u.pathname === '/account')
    expect(await pageA.locator('#sessions li').count()).toBe(1)

    const pageB = b.pages()[0]!
    await pageB.goto(`${server.url}/account`)
    expect(new URL(pageB.url()).pathname).toBe('/login')
    // A is still signed in.
    await pageA.reload()
    expect(new URL(pageA.url()).pathname).toBe('/account')
    await a.close()
    await b.close()
  })
})
