import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { type RunningBinary, launchChromium, startBinary } from './server'

// Spawns the binary and a browser: slower than in-process tests on a busy machine.
setDefaultTimeout(60_000)

let server: RunningBinary
let browser: Browser

beforeAll(async () => {
  // An empty folder, no configuration but the address: what a new operator starts with.
  server = await startBinary()
  browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
  server?.cleanup()
})

/** The setup link the server logs after its "listening" line (README quick start, step 2). */
async function loggedSetupLink(): Promise<string> {
  const deadline = Date.now() + 10_000
  for (;;) {
    const line = server
      .output()
      .split('\n')
      .find((l) => l.includes('"setup_link"'))
    if (line) return (JSON.parse(line) as { setup_link: string }).setup_link
    if (Date.now() > deadline) throw new Error(`no setup link logged: ${server.output()}`)
    await Bun.sleep(20)
  }
}

async function freshPage(): Promise<{ page: Page; violations: string[] }> {
  const context = await browser.newContext()
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url })
  const page = await context.newPage()
  const violations: string[] = []
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text())
  })
  return { page, violations }
}

const count = async (table: string) => Number((await server.query(`SELECT CAST(count(*) AS INTEGER) AS n FROM ${table}`))[0]!.n)

describe('first run, in a real browser (Chromium), against the binary', () => {
  test('the logged setup link makes the first admin, who lands on /admin; the link then is gone', async () => {
    const logged = await loggedSetupLink()
    expect(logged).toStartWith(`${server.url}/setup?token=`)
    expect(server.output().split('\n').filter((l) => l.includes('"setup_link"')).length).toBe(1)
    // `latchkey setup-link` makes a new one: the logged one stops working.
    const printed = server.cli(['setup-link'])
    expect(printed.code).toBe(0)
    const link = printed.out.trim()
    expect(link).toStartWith(`${server.url}/setup?token=`)

    const { page, violations } = await freshPage()
    const old = await page.goto(logged)
    expect(old!.status()).toBe(400)
    expect(await page.locator('main').innerText()).toContain('This setup link is not valid.')

    await page.goto(link)
    await page.getByLabel('Full name').fill('Olga Operator')
    await page.getByLabel('Email').fill('olga@example.com')
    await page.getByLabel('Password').fill('a long operator password')
    await page.getByRole('button', { name: 'Create administrator' }).click()
    await page.waitForURL((u) => u.pathname === '/admin/users')
    expect(await page.locator('table.admin').innerText()).toContain('olga@example.com')
    expect(await server.query('SELECT email, is_admin FROM users')).toEqual([{ email: 'olga@example.com', is_admin: server.databaseUrl.startsWith('postgres') ? true : 1 }])
    // /account leads back to /admin.
    await page.goto(`${server.url}/account`)
    await page.getByRole('link', { name: 'Administration' }).click()
    await page.waitForURL((u) => u.pathname === '/admin/users')

    // The link worked once: now /setup is a path no route serves.
    const again = await page.goto(link)
    expect(again!.status()).toBe(404)
    expect(violations).toEqual([])
  })

  test('an app: its endpoints with copy buttons; deleting it asks first, names what happens, and ends on a notice', async () => {
    const { page, violations } = await freshPage()
    await page.goto(`${server.url}/login`)
    await page.getByLabel('Email').fill('olga@example.com')
    await page.getByLabel('Password').fill('a long operator password')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL((u) => u.pathname === '/account')

    await page.goto(`${server.url}/admin/apps`)
    // A refused form keeps what was typed.
    await page.getByLabel('Name').fill('Grafana')
    await page.getByLabel('Redirect URIs (one per line)', { exact: true }).fill('not a url')
    await page.getByRole('button', { name: 'Create app' }).click()
    expect(await page.locator('p.error').innerText()).toBe('The redirect URI “not a url” is not an absolute URL.')
    expect(await page.getByLabel('Name').inputValue()).toBe('Grafana')
    await page.getByLabel('Redirect URIs (one per line)', { exact: true }).fill('https://grafana.example.com/login/generic_oauth')
    await page.getByRole('button', { name: 'Create app' }).click()
    expect(await page.locator('p.notice').innerText()).toBe('Created Grafana. Copy the secret now: it is not shown again.')
    // Every endpoint, with a copy button the same-origin script shows and that copies it.
    const endpoints = await page.locator('table.endpoints').innerText()
    for (const url of [server.url, `${server.url}/.well-known/openid-configuration`, `${server.url}/oauth/authorize`, `${server.url}/api/oauth/token`, `${server.url}/.well-known/jwks.json`]) expect(endpoints).toContain(url)
    await page.getByRole('button', { name: 'Copy the Token URL' }).click()
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(`${server.url}/api/oauth/token`)
    await page.getByRole('link', { name: 'Done' }).click()
    await page.waitForURL((u) => u.pathname === '/admin/apps/edit')

    // Delete: a confirmation page first, and nothing changed yet.
    await page.getByRole('button', { name: 'Delete app' }).click()
    expect(await page.locator('p.confirm').innerText()).toBe('Delete Grafana: 0 users lose access, 0 settings are deleted')
    expect(await count('clients')).toBe(1)
    await page.getByRole('button', { name: 'Delete Grafana' }).click()
    await page.waitForURL((u) => u.pathname === '/admin/apps')
    expect(await page.locator('p.notice').innerText()).toBe('Deleted Grafana.')
    expect(await count('clients')).toBe(0)
    // Shown once.
    await page.reload()
    expect(await page.locator('p.notice').count()).toBe(0)
    expect(violations).toEqual([])
  })
})
