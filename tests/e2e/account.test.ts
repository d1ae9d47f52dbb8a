/**
 * /account's profile on the binary, in real Chromium (SPEC "Your account and your sessions"):
 * a new name and password, and "Delete my account" — after which a token issued before is
 * refused by userinfo at once.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { discover, obtainToken, registerClient, registerUser } from './flow'
import { type RunningBinary, launchChromium, startBinary } from './server'

setDefaultTimeout(60_000)

let server: RunningBinary
let browser: Browser

beforeAll(async () => {
  server = await startBinary()
  browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
  server?.cleanup()
})

async function signInTo(page: Page, email: string, password: string) {
  await page.goto(`${server.url}/login`)
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password', { exact: true }).fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForLoadState()
}

const fresh = async () => (await browser.newContext()).newPage()

describe('/account in a real browser', () => {
  test('a new name and a new password: the old password is refused at /login, the new one signs in', async () => {
    registerUser(server, 'pat@example.com', 'Pat Old')
    const page = await fresh()
    await signInTo(page, 'pat@example.com', 'e2e password 1')
    expect(new URL(page.url()).pathname).toBe('/account')
    await page.getByLabel('Full name').fill('Pat New')
    await page.getByRole('button', { name: 'Save profile' }).click()
    await page.waitForURL((u) => u.pathname === '/account')
    expect(await page.locator('h1').innerText()).toBe('Pat New')

    await page.getByLabel('Current password').fill('e2e password 1')
    await page.getByLabel('New password').fill('e2e password 2')
    await page.getByRole('button', { name: 'Change password' }).click()
    await page.getByText('Your password was changed. Your other browsers were signed out.').waitFor()

    const old = await fresh()
    await signInTo(old, 'pat@example.com', 'e2e password 1')
    expect(await old.locator('main').innerText()).toContain('Invalid email or password')
    const renewed = await fresh()
    await signInTo(renewed, 'pat@example.com', 'e2e password 2')
    expect(new URL(renewed.url()).pathname).toBe('/account')
    expect(await renewed.locator('h1').innerText()).toBe('Pat New')
  })

  test('a picture uploaded from a file is shown and served same-origin with its own type and a CSP; an SVG is refused and the picture stays', async () => {
    registerUser(server, 'upl@example.com', 'Up Loader')
    const page = await fresh()
    await signInTo(page, 'upl@example.com', 'e2e password 1')
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64')
    await page.getByLabel('Upload a picture').setInputFiles({ name: 'me.png', mimeType: 'image/png', buffer: png })
    await page.getByRole('button', { name: 'Upload picture' }).click()
    await page.waitForURL((u) => u.pathname === '/account')
    const src = (await page.locator('.profile img').getAttribute('src'))!
    expect(src).toStartWith(`${server.url}/avatars/`)
    // The browser loaded it (the page's own request, with its cookie).
    expect(await page.locator('.profile img').evaluate((img: HTMLImageElement) => img.decode().then(() => img.naturalWidth))).toBe(1)
    const served = await page.request.get(src)
    expect([served.status(), served.headers()['content-type'], served.headers()['x-content-type-options'], served.headers()['content-security-policy']]).toEqual([200, 'image/png', 'nosniff', "default-src 'none'"])
    expect(Buffer.from(await served.body()).equals(png)).toBe(true)

    await page.getByLabel('Upload a picture').setInputFiles({ name: 'x.png', mimeType: 'image/png', buffer: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>') })
    await page.getByRole('button', { name: 'Upload picture' }).click()
    await page.getByText('That file is not a PNG, JPEG or WebP picture. Your picture was not changed.').waitFor()
    expect(await page.locator('.profile img').getAttribute('src')).toBe(src)
  })

  test('"Delete my account": the confirmation names the app; afterwards a token issued before is refused by userinfo within 100 ms', async () => {
    registerUser(server, 'del@example.com', 'Del Gone')
    const client = registerClient(server)
    const token = (await obtainToken(server, await discover(server), client, 'del@example.com', 'profile')).access_token
    const userinfo = () => fetch(`${server.url}/api/oauth/userinfo`, { headers: { authorization: `Bearer ${token}` } })
    expect((await userinfo()).status).toBe(200)

    const page = await fresh()
    await signInTo(page, 'del@example.com', 'e2e password 1')
    await page.getByRole('link', { name: 'Delete my account…' }).click()
    await page.waitForURL((u) => u.pathname === '/account/delete')
    expect(await page.locator('main').innerText()).toContain('the access of 1 app you authorized: E2E App;')
    await page.getByLabel('Your password').fill('e2e password 1')
    const answered = page.waitForResponse((r) => new URL(r.url()).pathname === '/account/delete' && r.request().method() === 'POST')
    await page.getByRole('button', { name: 'Delete my account' }).click()
    expect((await answered).status()).toBe(200)
    const deletedAt = performance.now()
    // Poll with a generous deadline; the first refusal must come within 100 ms of the answer.
    let refusedAfter = Number.POSITIVE_INFINITY
    while (performance.now() - deletedAt < 5_000) {
      if ((await userinfo()).status === 401) {
        refusedAfter = performance.now() - deletedAt
        break
      }
    }
    expect(refusedAfter).toBeLessThan(100)
    await page.getByText('Your account and everything in it were deleted.').waitFor()
    const again = await fresh()
    await signInTo(again, 'del@example.com', 'e2e password 1')
    expect(await again.locator('main').innerText()).toContain('Invalid email or password')
  })
})
