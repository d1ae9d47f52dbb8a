import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import { type RunningBinary, launchChromium, startBinary } from './server'

// Issue 36 in real Chromium against the binary: an Arabic page laid out right to left, and the
// footer's language menu (a form, no JavaScript needed) switching the page's language.
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

describe('languages in a browser', () => {
  test('a browser that asks for Arabic gets the page right to left: lang, dir, and its heading on the right; its address and password fields left to right', async () => {
    const context = await browser.newContext({ locale: 'ar-EG' })
    const page = await context.newPage()
    await page.goto(`${server.url}/login`)
    const layout = await page.evaluate(() => {
      const h1 = document.querySelector('h1')!
      const range = document.createRange()
      range.selectNodeContents(h1)
      const text = range.getBoundingClientRect()
      const main = document.querySelector('main')!.getBoundingClientRect()
      return { lang: document.documentElement.lang, dir: document.documentElement.dir, direction: getComputedStyle(h1).direction, textLeft: text.left, mainCentre: main.left + main.width / 2 }
    })
    expect([layout.lang, layout.dir, layout.direction]).toEqual(['ar', 'rtl', 'rtl'])
    expect(layout.textLeft).toBeGreaterThan(layout.mainCentre)
    // An address and a password read left to right in their fields: never `com.example@you`.
    for (const field of ['#email', '#password']) expect([field, await page.locator(field).evaluate((e) => getComputedStyle(e).direction)]).toEqual([field, 'ltr'])
    await context.close()
  })

  test('the footer menu switches the language of the page it is on, and later pages keep it', async () => {
    const context = await browser.newContext({ locale: 'en-US', javaScriptEnabled: false })
    const page = await context.newPage()
    await page.goto(`${server.url}/login?return_to=%2Faccount`)
    expect(await page.locator('h1').textContent()).toBe('Sign in')
    await page.selectOption('#lk-language', 'de')
    await page.getByRole('button', { name: 'Change', exact: true }).click()
    // The form's POST sets the cookie and comes back (303) to the same page, now in German.
    await page.locator('html[lang="de"]').waitFor({ state: 'attached' })
    expect(page.url()).toBe(`${server.url}/login?return_to=%2Faccount`)
    expect(await page.locator('h1').textContent()).toBe('Anmelden')
    expect(await page.locator('#lk-language').inputValue()).toBe('de')
    await page.goto(`${server.url}/signup-does-not-exist`)
    expect(await page.locator('h1').textContent()).toBe('Seite nicht gefunden')
    await context.close()
  })
})
