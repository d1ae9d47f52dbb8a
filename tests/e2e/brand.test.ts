import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { accentFor, DARK, LIGHT } from '../../src/brand/colors'
import { writeFiles } from '../brand/fixtures'
import { type RunningBinary, launchChromium, startBinary } from './server'

// SPEC "Brand and language" → Brand (issue 36), in real Chromium against the binary: a branded
// server (name, light and dark logos, favicon, colour, stylesheet) and an app with its logo and
// launch URL — the sign-in, consent and /account pages axe-clean and without sideways scrolling at
// 1280 and 360 px, light and dark.
setDefaultTimeout(120_000)

const axeSource = readFileSync(join(import.meta.dir, '../../node_modules/axe-core/axe.min.js'), 'utf8')
const SHOTS = process.env.LATCHKEY_SHOTS
const BRAND = 'Acme Family Cloud'
const COLOR = '#0f766e'
const LONG_APP = 'Photos and Videos of the Whole Extended Family, Shared Albums Edition'
const PASSWORD = 'brand password'

const wordmark = (fill: string) =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="220" height="48" viewBox="0 0 220 48"><rect x="2" y="6" width="36" height="36" rx="9" fill="${fill}"/><path d="M12 34 L20 14 L28 34" stroke="#fff" stroke-width="4" fill="none"/><text x="48" y="32" font-family="sans-serif" font-size="20" font-weight="700" fill="${fill}">Acme Family</text></svg>`
const files = writeFiles({
  'logo.svg': wordmark('#0f766e'),
  'logo-dark.svg': wordmark('#5eead4'),
  'favicon.svg': '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="4" fill="#0f766e"/></svg>',
  'brand.css': 'header.brand img { max-height: 2.5rem; }\n',
  'photos.svg': '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" rx="14" fill="#f59e0b"/><circle cx="32" cy="30" r="12" fill="#fff"/></svg>',
})

let server: RunningBinary
let browser: Browser
let app: ReturnType<typeof Bun.serve>
let callback: string
let clientId: string

beforeAll(async () => {
  server = await startBinary({ BRAND_NAME: BRAND, BRAND_LOGO: files['logo.svg']!, BRAND_LOGO_DARK: files['logo-dark.svg']!, BRAND_FAVICON: files['favicon.svg']!, BRAND_COLOR: COLOR, BRAND_CSS: files['brand.css']! }, undefined, { localhost: true })
  app = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('<h1>App</h1>', { headers: { 'content-type': 'text/html' } }) })
  callback = `http://127.0.0.1:${app.port}/callback`
  const made = server.cli(['client', 'create', '--name', LONG_APP, '--redirect-uri', callback, '--logo-file', files['photos.svg']!, '--launch-url', `http://127.0.0.1:${app.port}/albums`])
  expect(made.code).toBe(0)
  clientId = JSON.parse(made.out).client_id
  // An app with a launch URL and no logo (its initial shows), open to everyone.
  expect(server.cli(['client', 'create', '--name', 'Wiki', '--redirect-uri', callback, '--launch-url', 'https://wiki.example-family.org/']).code).toBe(0)
  expect(server.cli(['user', 'create', '--email', 'mia@example.com', '--name', 'Mia Member', '--password-stdin'], `${PASSWORD}\n`).code).toBe(0)
  browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
  app?.stop(true)
  server?.cleanup()
})

/** Sideways scrolling and axe-core violations of the open page at one size and scheme. */
async function failuresAt(page: Page, width: number, scheme: 'light' | 'dark', shot: string): Promise<string[]> {
  await page.setViewportSize({ width, height: width === 360 ? 740 : 900 })
  await page.emulateMedia({ colorScheme: scheme })
  const where = `${new URL(page.url()).pathname} at ${width} ${scheme}`
  const failures: string[] = []
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }))
  if (scrollWidth > innerWidth) failures.push(`${where}: scrolls sideways (${scrollWidth} > ${innerWidth})`)
  // CSP (script-src 'self') keeps axe out of a <script> tag; the DevTools protocol evaluates it.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource)
  const violations = (await page.evaluate(() => (window as unknown as { axe: { run: (o: object) => Promise<{ violations: unknown[] }> } }).axe.run({ resultTypes: ['violations'] }).then((r) => r.violations))) as Array<{ id: string; nodes: Array<{ target: string[] }> }>
  for (const v of violations) failures.push(`${where}: axe ${v.id} at ${v.nodes.map((n) => n.target.join(' ')).join('; ')}`)
  if (SHOTS) {
    mkdirSync(SHOTS, { recursive: true })
    await page.screenshot({ path: join(SHOTS, `brand-${shot}-${width}-${scheme}.png`), fullPage: true })
  }
  return failures
}

async function everyScreen(page: Page, shot: string): Promise<string[]> {
  const failures: string[] = []
  for (const width of [1280, 360]) for (const scheme of ['light', 'dark'] as const) failures.push(...(await failuresAt(page, width, scheme, shot)))
  await page.emulateMedia({ colorScheme: 'light' })
  await page.setViewportSize({ width: 1280, height: 900 })
  return failures
}

/** What the brand header shows: the picture's chosen source, whether it drew, its alt. */
const brandMark = (page: Page) =>
  page.evaluate(() => {
    const img = document.querySelector('header.brand img') as HTMLImageElement | null
    return img && { src: new URL(img.currentSrc).pathname, drawn: img.complete && img.naturalWidth > 0, alt: img.alt }
  })

describe('a branded server in Chromium (issue 36)', () => {
  test('sign-in, consent with the app logo, /account "Your apps": the brand in light and dark, axe clean, no sideways scrolling at 360', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const csp: string[] = []
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) csp.push(m.text())
    })
    const failures: string[] = []

    await page.goto(`${server.url}/oauth/authorize?client_id=${clientId}&redirect_uri=${encodeURIComponent(callback)}&scope=openid%20profile&state=s`)
    expect(await page.title()).toBe(`Sign in · ${BRAND}`)
    expect(await brandMark(page)).toEqual({ src: '/assets/brand/logo', drawn: true, alt: BRAND })
    await page.emulateMedia({ colorScheme: 'dark' })
    await page.waitForFunction(() => (document.querySelector('header.brand img') as HTMLImageElement).currentSrc.includes('logo-dark'))
    expect(await brandMark(page)).toEqual({ src: '/assets/brand/logo-dark', drawn: true, alt: BRAND })
    // The buttons wear the brand colour, as adjusted for AA in each theme.
    const buttonColor = () => page.evaluate(() => getComputedStyle(document.querySelector('button[type=submit]')!).backgroundColor)
    const rgb = (hex: string) => `rgb(${[1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)).join(', ')})`
    expect(await buttonColor()).toBe(rgb(accentFor(COLOR, DARK).accent))
    await page.emulateMedia({ colorScheme: 'light' })
    expect(await buttonColor()).toBe(rgb(accentFor(COLOR, LIGHT).accent))
    failures.push(...(await everyScreen(page, 'login')))

    await page.getByLabel('Email').fill('mia@example.com')
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await page.waitForURL((u) => u.pathname === '/oauth/authorize')
    const logo = page.locator('main img.app-logo')
    expect(await logo.evaluate((img: HTMLImageElement) => ({ src: new URL(img.src).pathname, drawn: img.complete && img.naturalWidth > 0 }))).toEqual({ src: `/assets/apps/${clientId}/logo`, drawn: true })
    failures.push(...(await everyScreen(page, 'consent')))
    await page.getByRole('button', { name: 'Allow' }).click()
    await page.waitForURL((u) => u.href.startsWith(callback))

    await page.goto(`${server.url}/account`)
    const apps = page.locator('ul.your-apps li')
    expect(await apps.allInnerTexts()).toEqual([`${LONG_APP}\n127.0.0.1:${app.port}`, 'W\nWiki\nwiki.example-family.org'])
    expect(await page.getByRole('link', { name: LONG_APP }).getAttribute('href')).toBe(`http://127.0.0.1:${app.port}/albums`)
    failures.push(...(await everyScreen(page, 'account')))

    expect(failures).toEqual([])
    expect(csp).toEqual([])
    // The colour that missed AA in a theme was adjusted, and the server said so at start.
    expect(server.output()).toContain(`"msg":"BRAND_COLOR ${COLOR} reaches`)
    await context.close()
  })
})
