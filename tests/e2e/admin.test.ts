import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { type RunningBinary, launchChromium, startBinary } from './server'

// Spawns the binary and a browser: slower than in-process tests on a busy machine.
setDefaultTimeout(60_000)

let server: RunningBinary
let browser: Browser
let app: ReturnType<typeof Bun.serve>
let callback: string

beforeAll(async () => {
  server = await startBinary()
  app = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('<h1>App callback</h1>', { headers: { 'content-type': 'text/html' } }) })
  callback = `http://127.0.0.1:${app.port}/callback`
  expect(server.cli(['user', 'create', '--email', 'root@example.com', '--name', 'Root Admin', '--password-stdin', '--admin'], 'admin password\n').code).toBe(0)
  for (const [email, name] of [['kid@example.com', 'Kid Member'], ['guest@example.com', 'Guest Stranger']] as const)
    expect(server.cli(['user', 'create', '--email', email, '--name', name, '--password-stdin'], 'user password\n').code).toBe(0)
  browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
  app?.stop(true)
  server?.cleanup()
})

/** A fresh browser profile that records every CSP violation. */
async function freshPage(): Promise<{ page: Page; violations: string[] }> {
  const page = await (await browser.newContext()).newPage()
  const violations: string[] = []
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text())
  })
  return { page, violations }
}

async function signIn(page: Page, email: string, password: string, start = `${server.url}/login`) {
  await page.goto(start)
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
}

describe('/admin in a real browser (Chromium), against the binary', () => {
  test('an admin creates a group and an app restricted to it; a non-member is denied at authorize, a member gets through', async () => {
    const { page, violations } = await freshPage()
    await signIn(page, 'root@example.com', 'admin password')
    await page.waitForURL((u) => u.pathname === '/account')

    // A group, with a member added by email.
    await page.goto(`${server.url}/admin/groups`)
    await page.getByLabel('Name').fill('family')
    await page.getByRole('button', { name: 'Create group' }).click()
    await page.waitForURL((u) => u.pathname === '/admin/groups')
    await page.getByLabel('Add a member to family').fill('kid@example.com')
    await page.getByRole('button', { name: 'Add member' }).click()
    await page.waitForURL((u) => u.pathname === '/admin/groups')
    expect(await page.locator('section.group').innerText()).toContain('kid@example.com')

    // An app only the group may use: its secret is shown once.
    await page.goto(`${server.url}/admin/apps`)
    await page.getByLabel('Name').fill('Family Photos')
    await page.getByLabel('Redirect URIs (one per line)', { exact: true }).fill(callback)
    await page.getByLabel('family', { exact: true }).check()
    await page.getByRole('button', { name: 'Create app' }).click()
    const shown = await page.locator('main').innerText()
    expect(shown).toContain('Copy the secret now: it is not shown again.')
    const clientId = /Client ID (\w+)/.exec(shown)![1]!
    expect(shown).toMatch(/Client secret lk_cs_[A-Za-z0-9_-]{43}/)
    await page.getByRole('link', { name: 'Done' }).click()
    expect(await page.getByLabel('family', { exact: true }).isChecked()).toBe(true)
    expect(violations).toEqual([])

    // The CLI sees what the pages made.
    expect(JSON.parse(server.cli(['client', 'list', '--json']).out)).toEqual([expect.objectContaining({ client_id: clientId, name: 'Family Photos', allowed_groups: ['family'] })])

    const authorize = `${server.url}/oauth/authorize?client_id=${clientId}&redirect_uri=${encodeURIComponent(callback)}&scope=openid%20groups&state=st1&response_type=code&code_challenge=${'a'.repeat(43)}&code_challenge_method=S256`
    const guest = await freshPage()
    await signIn(guest.page, 'guest@example.com', 'user password', authorize)
    await guest.page.waitForURL((u) => u.pathname === '/oauth/authorize')
    expect(await guest.page.locator('h1').innerText()).toBe('Access denied')
    await guest.page.getByRole('link', { name: 'Back to the app' }).click()
    await guest.page.waitForURL((u) => u.href.startsWith(callback))
    const denied = new URL(guest.page.url()).searchParams
    expect([denied.get('error'), denied.get('state'), denied.get('iss')]).toEqual(['access_denied', 'st1', server.url])
    expect(guest.violations).toEqual([])

    const kid = await freshPage()
    await signIn(kid.page, 'kid@example.com', 'user password', authorize)
    await kid.page.waitForURL((u) => u.pathname === '/oauth/authorize')
    expect(await kid.page.locator('main').innerText()).toContain('Family Photos wants to access your account')
    await kid.page.getByRole('button', { name: 'Allow' }).click()
    await kid.page.waitForURL((u) => u.href.startsWith(callback))
    expect(new URL(kid.page.url()).searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(kid.violations).toEqual([])

    // The audit log shows the admin's changes, with the admin as actor.
    await page.goto(`${server.url}/admin/audit?kind=client.created`)
    expect(await page.locator('table.audit').innerText()).toContain(clientId)
  })

  test('a non-admin gets the 404 of an unknown path; an admin cannot disable themselves', async () => {
    const guest = await freshPage()
    await signIn(guest.page, 'guest@example.com', 'user password')
    await guest.page.waitForURL((u) => u.pathname === '/account')
    const res = await guest.page.goto(`${server.url}/admin/users`)
    expect(res!.status()).toBe(404)
    // A browser gets the very page every unknown path gets (issue 36).
    const refused = await res!.text()
    expect(await guest.page.locator('h1').innerText()).toBe('Page not found')
    const unknown = await guest.page.goto(`${server.url}/no-such-page`)
    expect([unknown!.status(), await unknown!.text()]).toEqual([404, refused])

    const { page, violations } = await freshPage()
    await signIn(page, 'root@example.com', 'admin password')
    await page.waitForURL((u) => u.pathname === '/account')
    await page.goto(`${server.url}/admin/users?q=guest`)
    const row = page.locator('tr', { hasText: 'guest@example.com' })
    await row.getByRole('button', { name: 'Disable' }).click()
    await page.waitForURL((u) => u.pathname === '/admin/users')
    expect(await page.locator('tr', { hasText: 'guest@example.com' }).getByRole('button', { name: 'Enable' }).count()).toBe(1)
    // Her browser is signed out at once.
    await guest.page.goto(`${server.url}/account`)
    expect(new URL(guest.page.url()).pathname).toBe('/login')
    // Root's own row offers no Disable.
    expect(await page.locator('tr', { hasText: 'root@example.com' }).getByRole('button', { name: 'Disable' }).count()).toBe(0)
    expect(violations).toEqual([])
  })
})
