import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import docsArJson from '../../src/docs/translations/ar.json'
import docsDeJson from '../../src/docs/translations/de.json'
import { Database } from 'bun:sqlite'
import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { type RunningBinary, launchChromium, startBinary } from './server'

const docsDe: Record<string, string> = docsDeJson
const docsAr: Record<string, string> = docsArJson

// SPEC "Brand and language" → "Every screen" (issue 36), in real Chromium against the binary: every
// page fits 360 px with no sideways scrolling, and axe-core finds no violation on it, light or
// dark, 1280 or 360 wide. One browser, the pages in sequence.
setDefaultTimeout(120_000)

const axeSource = readFileSync(join(import.meta.dir, '../../node_modules/axe-core/axe.min.js'), 'utf8')
/** Where screenshots go when LATCHKEY_SHOTS names a folder (a person looks at them; the test does not). */
const SHOTS = process.env.LATCHKEY_SHOTS

const LONG_APP = 'Acme Customer-Relationship-Management-and-Billing-Platform Enterprise Edition for Distributed Teams'
const ADMIN = 'root.administrator.with.a.long.address@operations.example-company.com'
const PASSWORD = 'screens password'

let server: RunningBinary
let browser: Browser
let app: ReturnType<typeof Bun.serve>
let callback: string
let clientId: string

beforeAll(async () => {
  // Passkeys need a domain: ISSUER is http://localhost:PORT.
  server = await startBinary({ SIGNUP: 'open' }, undefined, { localhost: true })
  app = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('<h1>App callback</h1>', { headers: { 'content-type': 'text/html' } }) })
  callback = `http://127.0.0.1:${app.port}/callback`
  clientId = JSON.parse(server.cli(['client', 'create', '--name', LONG_APP, '--redirect-uri', callback]).out).client_id
  expect(server.cli(['user', 'create', '--email', ADMIN, '--name', 'Root Administrator', '--password-stdin', '--admin'], `${PASSWORD}\n`).code).toBe(0)
  expect(server.cli(['user', 'create', '--email', 'member@example.com', '--name', 'Mia Member', '--password-stdin'], `${PASSWORD}\n`).code).toBe(0)
  expect(server.cli(['group', 'create', 'engineering']).code).toBe(0)
  expect(server.cli(['group', 'add', 'engineering', 'member@example.com']).code).toBe(0)
  expect(server.cli(['group', 'add', 'engineering', ADMIN]).code).toBe(0)
  const mcp = ['resource', 'create', '--uri', 'https://mcp.internal.example-company.com/api/v1/model-context-protocol/endpoint', '--name', 'Home automation MCP']
  expect(server.cli([...mcp, '--scope', 'tools:read=Read your tools', '--scope', 'tools:call=Run tools']).code).toBe(0)
  browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
  app?.stop(true)
  server?.cleanup()
})

interface AxeViolation {
  id: string
  impact: string
  nodes: Array<{ target: string[]; failureSummary: string }>
}

/** A page's failures at one size and colour scheme: sideways scrolling, axe violations, ordinary words broken in /admin tables. */
async function failuresAt(page: Page, width: number, scheme: 'light' | 'dark'): Promise<string[]> {
  await page.setViewportSize({ width, height: width === 360 ? 740 : 900 })
  await page.emulateMedia({ colorScheme: scheme })
  const where = `${new URL(page.url()).pathname} at ${width} ${scheme}`
  const failures: string[] = []
  const { scrollWidth, innerWidth, dark } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
    dark: matchMedia('(prefers-color-scheme: dark)').matches,
  }))
  expect(dark).toBe(scheme === 'dark')
  if (scrollWidth > innerWidth) failures.push(`${where}: scrolls sideways (${scrollWidth} > ${innerWidth})`)
  // CSP (script-src 'self') keeps axe out of a <script> tag; the DevTools protocol evaluates it.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource)
  const violations = (await page.evaluate(() => (window as unknown as { axe: { run: (o: object) => Promise<{ violations: unknown[] }> } }).axe.run({ resultTypes: ['violations'] }).then((r) => r.violations))) as AxeViolation[]
  for (const v of violations) failures.push(`${where}: axe ${v.id} (${v.impact}) at ${v.nodes.map((n) => n.target.join(' ') + ' — ' + n.failureSummary).join('; ')}`)
  // A word in an /admin table breaks only where it is a long token (code, .long); a line break
  // inside any other word gives its range two boxes.
  const broken = await page.evaluate(() => {
    const found: string[] = []
    for (const cell of document.querySelectorAll('table.admin th, table.admin td')) {
      const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT)
      for (let node = walker.nextNode() as Text | null; node; node = walker.nextNode() as Text | null) {
        if (node.parentElement?.closest('code, .long')) continue
        for (const m of node.data.matchAll(/[^\s\-/]+/g)) {
          const range = document.createRange()
          range.setStart(node, m.index!)
          range.setEnd(node, m.index! + m[0].length)
          if (range.getClientRects().length > 1) found.push(m[0])
        }
      }
    }
    return found
  })
  if (broken.length > 0) failures.push(`${where}: words broken mid-way in a table: ${broken.join(', ')}`)
  return failures
}

/** Every size and scheme of the page now open; a screenshot of each when asked. */
async function everyScreen(page: Page, shot?: string): Promise<string[]> {
  const failures: string[] = []
  for (const width of [1280, 360])
    for (const scheme of ['light', 'dark'] as const) {
      failures.push(...(await failuresAt(page, width, scheme)))
      if (SHOTS && shot) {
        mkdirSync(SHOTS, { recursive: true })
        await page.screenshot({ path: join(SHOTS, `${shot}-${width}-${scheme}.png`), fullPage: true })
      }
    }
  // Between the two, a tablet: still no sideways scrolling.
  await page.emulateMedia({ colorScheme: 'light' })
  for (const width of [800, 641]) {
    await page.setViewportSize({ width, height: 900 })
    const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }))
    if (scrollWidth > innerWidth) failures.push(`${new URL(page.url()).pathname} at ${width}: scrolls sideways (${scrollWidth} > ${innerWidth})`)
  }
  await page.setViewportSize({ width: 1280, height: 900 })
  return failures
}

async function freshContext(): Promise<{ context: BrowserContext; page: Page; csp: string[] }> {
  const context = await browser.newContext()
  const page = await context.newPage()
  const csp: string[] = []
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) csp.push(m.text())
  })
  return { context, page, csp }
}

describe('every screen (issue 36): 360 px without sideways scrolling, axe-core clean, light and dark', () => {
  test('signed out: /login, /signup, and the HTML 404 a browser gets for an unknown page', async () => {
    const { page, csp } = await freshContext()
    const failures: string[] = []
    await page.goto(`${server.url}/login`)
    failures.push(...(await everyScreen(page, 'login')))
    // The keyboard's focus is drawn: a 3 px ring in the focus token's colour, light and dark.
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme })
      await page.locator('body').click({ position: { x: 1, y: 1 } })
      await page.keyboard.press('Tab')
      const ring = await page.evaluate(() => {
        const s = getComputedStyle(document.activeElement!)
        return { id: document.activeElement!.id, style: s.outlineStyle, width: s.outlineWidth, color: s.outlineColor }
      })
      expect(ring).toEqual({ id: 'email', style: 'solid', width: '3px', color: scheme === 'light' ? 'rgb(31, 79, 194)' : 'rgb(143, 176, 255)' })
    }
    await page.emulateMedia({ colorScheme: 'light' })
    await page.goto(`${server.url}/signup`)
    expect(await page.locator('h1').innerText()).toBe('Create account')
    failures.push(...(await everyScreen(page, 'signup')))
    const missing = await page.goto(`${server.url}/no-such-page`)
    expect(missing!.status()).toBe(404)
    expect(missing!.headers()['content-type']).toBe('text/html; charset=utf-8')
    expect(await page.locator('h1').innerText()).toBe('Page not found')
    failures.push(...(await everyScreen(page, 'not-found')))
    // The favicon the layout links is served from this origin and drawn.
    const icon = await page.evaluate(() => fetch('/favicon.svg').then((r) => r.headers.get('content-type')))
    expect(icon).toBe('image/svg+xml')
    expect(failures).toEqual([])
    expect(csp).toEqual([])
  })

  test('an admin: the consent page for a long-named app, /account with it and 3 passkeys, and every /admin page', async () => {
    const { context, page, csp } = await freshContext()
    const cdp = await context.newCDPSession(page)
    await cdp.send('WebAuthn.enable')
    const failures: string[] = []
    await page.goto(`${server.url}/oauth/authorize?client_id=${clientId}&redirect_uri=${encodeURIComponent(callback)}&scope=openid%20profile%20email%20settings:read%20settings:write&state=s`)
    await page.getByLabel('Email').fill(ADMIN)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await page.waitForURL((u) => u.pathname === '/oauth/authorize')
    expect(await page.locator('h1').innerText()).toBe(`${LONG_APP} wants to access your account`)
    failures.push(...(await everyScreen(page, 'consent')))
    await page.getByRole('button', { name: 'Allow' }).click()
    await page.waitForURL((u) => u.href.startsWith(callback))

    await page.goto(`${server.url}/account`)
    for (const name of ['Work laptop (Chromium on Linux)', 'Phone', 'A security key with a rather long name of its own']) {
      // One authenticator per passkey: the page excludes credentials the account already has.
      const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
      })
      await page.getByLabel('Passkey name').fill(name)
      await page.getByRole('button', { name: 'Add a passkey' }).click()
      await page.locator('ul.apps strong', { hasText: name }).waitFor()
      await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId })
    }
    expect(await page.locator('ul.apps:not(.sessions) li').count()).toBe(4)
    expect(await page.locator('main').innerText()).toContain(LONG_APP)
    failures.push(...(await everyScreen(page, 'account')))
    // The authenticator-app setup: a QR code and the secret as text.
    await page.getByRole('button', { name: 'Turn on two-step verification' }).click()
    await page.locator('.qr svg').waitFor()
    failures.push(...(await everyScreen(page, 'two-step-setup')))

    for (const path of ['/admin/users', '/admin/apps', `/admin/apps/edit?client_id=${clientId}`, '/admin/groups', '/admin/resources', '/admin/sites', '/admin/providers', '/admin/keys', '/admin/audit']) {
      const res = await page.goto(`${server.url}${path}`)
      expect([path, res!.status()]).toEqual([path, 200])
      failures.push(...(await everyScreen(page, path.slice(1).replace(/\?.*/, '').replace(/\//g, '-'))))
    }
    // A rule refused, its reason shown above the form that keeps what was typed.
    expect(server.cli(['site', 'create', '--host', 'photos.example.com', '--name', 'Photos']).code).toBe(0)
    await page.goto(`${server.url}/admin/sites`)
    await page.locator('#rule_paths').fill('^/(?!public/)')
    await page.getByRole('button', { name: 'Add rule' }).click()
    expect(await page.getByRole('alert').innerText()).toBe('Paths: “^/(?!public/)” is JavaScript syntax that RE2 does not read (a look-around, a back-reference, a \\u escape, a repetition count over 1000). Paths are matched in linear time with RE2’s syntax, as Authelia’s are.')
    failures.push(...(await everyScreen(page, 'admin-sites-rule-refused')))
    // The same refusal right to left, in Arabic.
    await context.addCookies([{ name: 'lk_lang', value: 'ar', url: server.url }])
    await page.goto(`${server.url}/admin/sites`)
    await page.locator('#rule_paths').fill('^/(?!public/)')
    await page.locator('form[action="/admin/sites/rule"] button[type="submit"]').click()
    // The pattern isolated (U+2068…U+2069) keeps its own order: `^/(?!public/)`, not `(/public!?)/^`.
    expect(await page.getByRole('alert').innerText()).toStartWith('المسارات: «\u2068^/(?!public/)\u2069» صياغة JavaScript لا يقرؤها RE2')
    expect(await page.locator('html').getAttribute('dir')).toBe('rtl')
    // As drawn: its `^` left of its last `)` (without the isolate the browser draws them the other way round).
    const drawn = await page.getByRole('alert').evaluate((alert) => {
      const walker = document.createTreeWalker(alert, NodeFilter.SHOW_TEXT)
      let node: Node | null
      while ((node = walker.nextNode()) && !node.textContent!.includes('^/(?!public/)'));
      const text = node!.textContent!
      const start = text.indexOf('^/(?!public/)')
      const left = (i: number) => {
        const range = document.createRange()
        range.setStart(node!, i)
        range.setEnd(node!, i + 1)
        return range.getBoundingClientRect().left
      }
      return { caret: left(start), close: left(start + '^/(?!public/'.length) }
    })
    expect(drawn.caret).toBeLessThan(drawn.close)
    // So does the field holding it, and every address, link and password field.
    expect(await page.locator('#rule_paths').evaluate((e) => getComputedStyle(e).direction)).toBe('ltr')
    expect(await page.locator('#site_host').evaluate((e) => getComputedStyle(e).direction)).toBe('ltr')
    expect(await page.locator('#site_name').evaluate((e) => getComputedStyle(e).direction)).toBe('rtl')
    failures.push(...(await everyScreen(page, 'admin-sites-rule-refused-ar')))
    await context.addCookies([{ name: 'lk_lang', value: 'en', url: server.url }])
    expect(failures).toEqual([])
    expect(csp).toEqual([])
  })

  test('an account with a connected account only (no password, no passkey): /account and the delete page, signed in a moment ago and an hour ago', async () => {
    const email = 'connie@example.com'
    expect(server.cli(['user', 'create', '--email', email, '--name', 'Connie Connected', '--password-stdin'], `${PASSWORD}\n`).code).toBe(0)
    const { context, page, csp } = await freshContext()
    const failures: string[] = []
    await page.goto(`${server.url}/login`)
    await page.getByLabel('Email').fill(email)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await page.waitForURL((u) => u.pathname === '/account')
    /** A write to the binary's database, as an operator's (server.query opens SQLite read-only). */
    const write = async (sql: string, ...params: Array<string | number>) => {
      if (server.databaseUrl !== server.dbPath) return void (await server.query(sql, ...params))
      const db = new Database(server.dbPath)
      db.run('PRAGMA busy_timeout = 5000')
      db.query(sql).run(...params)
      db.close()
    }
    // As an account made by a provider's sign-in: no password (and no passkey).
    await write("UPDATE users SET password_hash = '' WHERE email = ?", email)
    for (const [when, shift] of [['fresh', 0], ['stale', 3_600_000]] as const) {
      if (shift) await write('UPDATE sessions SET auth_time = auth_time - ? WHERE user_id = (SELECT id FROM users WHERE email = ?)', shift, email)
      await page.goto(`${server.url}/account`)
      expect(await page.locator('main').innerText()).toContain(when === 'fresh' ? 'You signed in a moment ago' : 'You sign in with a connected account only.')
      failures.push(...(await everyScreen(page, `account-connected-${when}`)))
      await page.goto(`${server.url}/account/delete`)
      failures.push(...(await everyScreen(page, `delete-connected-${when}`)))
    }
    expect(failures).toEqual([])
    expect(csp).toEqual([])
    await context.close()
  })

  test('in German (task i18a): /admin/audit with its times and addresses, and /docs with its frame translated', async () => {
    const context = await browser.newContext({ locale: 'de-DE' })
    const page = await context.newPage()
    const csp: string[] = []
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) csp.push(m.text())
    })
    const failures: string[] = []
    await page.goto(`${server.url}/login`)
    await page.locator('#email').fill(ADMIN)
    await page.locator('#password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Anmelden', exact: true }).click()
    await page.waitForURL((u) => u.pathname === '/account')
    await page.goto(`${server.url}/admin/audit`)
    expect(await page.locator('html').getAttribute('lang')).toBe('de')
    expect(await page.locator('h1').innerText()).toBe('Audit-Protokoll')
    expect(await page.locator('table.audit time').first().innerText()).toMatch(/^\d+\. [A-Za-zä]+\.? \d{4}, \d\d:\d\d:\d\d UTC$/)
    failures.push(...(await everyScreen(page, 'de-admin-audit')))
    await page.goto(`${server.url}/docs`)
    expect(await page.locator('html').getAttribute('lang')).toBe('de')
    // The reference itself in German too (src/docs/translations/de.json).
    expect(await page.locator('#post-api-oauth-token > p').first().innerText()).toBe(docsDe['Tokens: exchange a code, refresh, a client’s own token, or a device’s poll']!)
    failures.push(...(await everyScreen(page, 'de-docs')))
    expect(failures).toEqual([])
    expect(csp).toEqual([])
    await context.close()
  })

  test('in Arabic: /docs laid out right to left, its reference in Arabic', async () => {
    const context = await browser.newContext({ locale: 'ar' })
    const page = await context.newPage()
    await page.goto(`${server.url}/docs`)
    expect(await page.locator('html').getAttribute('lang')).toBe('ar')
    expect(await page.locator('html').getAttribute('dir')).toBe('rtl')
    expect(await page.locator('#post-api-oauth-token > p').first().innerText()).toBe(docsAr['Tokens: exchange a code, refresh, a client’s own token, or a device’s poll']!)
    expect(await everyScreen(page, 'ar-docs')).toEqual([])
    await context.close()
  })
})
