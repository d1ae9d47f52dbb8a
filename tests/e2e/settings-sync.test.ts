/**
 * Settings sync against the binary (issue 22), both engines: a web app's EventSource in Chromium
 * (through a one-time ticket, cross-origin) and a plain fetch reader receive set and delete events
 * in order; /account's download and delete in the real browser; SIGTERM ends streams cleanly.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import type { Browser } from 'playwright-core'
import { SseReader } from '../settings/sse'
import { discover, obtainToken, registerClient, registerUser } from './flow'
import { launchChromium, startBinary, type RunningBinary } from './server'

setDefaultTimeout(60_000)

let server: RunningBinary
let browser: Browser
let webApp: ReturnType<typeof Bun.serve>
let client: { client_id: string; client_secret: string | null }
let token: string

// The web app: another origin, as a real one is; it asks for a ticket with its token and opens EventSource with it.
const PAGE = `<!doctype html><meta charset="utf-8"><title>Web app</title><script>
window.events = []
window.start = async (issuer, token) => {
  const res = await fetch(issuer + '/api/settings-events/ticket', { method: 'POST', headers: { authorization: 'Bearer ' + token } })
  const { ticket } = await res.json()
  const source = new EventSource(issuer + '/api/settings-events?ticket=' + encodeURIComponent(ticket))
  for (const type of ['set', 'delete']) source.addEventListener(type, (e) => window.events.push({ type, id: e.lastEventId, data: JSON.parse(e.data) }))
  await new Promise((resolve, reject) => { source.onopen = resolve; source.onerror = reject })
  return ticket
}
</script>`

beforeAll(async () => {
  server = await startBinary()
  client = registerClient(server, ['--skip-consent'])
  registerUser(server, 'sync@example.com', 'Sync User')
  token = (await obtainToken(server, await discover(server), client, 'sync@example.com', 'settings:read settings:write')).access_token
  webApp = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response(PAGE, { headers: { 'content-type': 'text/html' } }) })
  browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
  webApp?.stop(true)
  server?.cleanup()
})

const bearer = () => ({ authorization: `Bearer ${token}` })
const write = (key: string, value: unknown) =>
  fetch(`${server.url}/api/settings`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ client_id: client.client_id, key, value }) })
const remove = (key: string) => fetch(`${server.url}/api/settings/${key}?client_id=${client.client_id}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } })

describe('settings sync against the binary', () => {
  test("a web app's EventSource (Chromium, a ticket, another origin) and a fetch reader get set and delete events in order", async () => {
    const page = await (await browser.newContext()).newPage()
    await page.goto(`http://127.0.0.1:${webApp.port}/`)
    const ticket = await page.evaluate(([issuer, t]) => (window as unknown as { start(i: string, t: string): Promise<string> }).start(issuer!, t!), [server.url, token])
    expect(ticket).toMatch(/^lk_st_/)
    const reader = new SseReader(await fetch(`${server.url}/api/settings-events`, { headers: { authorization: `Bearer ${token}` } }))

    const saved = await write('theme', 'dark')
    expect(saved.status).toBe(200)
    expect((await write('lang', 'en')).status).toBe(200)
    expect((await remove('theme')).status).toBe(200)

    await page.waitForFunction(() => (window as unknown as { events: unknown[] }).events.length >= 3, undefined, { timeout: 10_000 })
    const inBrowser = await page.evaluate(() => (window as unknown as { events: unknown[] }).events)
    expect(inBrowser).toEqual([
      { type: 'set', id: '1', data: { key: 'theme', value: 'dark', client_id: client.client_id, updated_at: expect.any(String), etag: saved.headers.get('etag') } },
      { type: 'set', id: '2', data: { key: 'lang', value: 'en', client_id: client.client_id, updated_at: expect.any(String), etag: expect.any(String) } },
      { type: 'delete', id: '3', data: { key: 'theme' } },
    ])
    const fetched = await reader.collect((e) => e.id === '3')
    expect(fetched.map((e) => [e.id, e.event])).toEqual([
      ['1', 'set'],
      ['2', 'set'],
      ['3', 'delete'],
    ])
    // The ticket worked once.
    expect((await fetch(`${server.url}/api/settings-events?ticket=${ticket}`)).status).toBe(401)
    await reader.cancel()
    await page.context().close()
  })

  test('/account in the browser: "Download data" saves the app\'s settings, "Delete data" asks first and deletes them', async () => {
    expect((await write('a', { n: 1 })).status).toBe(200)
    const reader = new SseReader(await fetch(`${server.url}/api/settings-events`, { headers: bearer() }))
    const context = await browser.newContext({ acceptDownloads: true })
    const page = await context.newPage()
    await page.goto(`${server.url}/login`)
    await page.getByLabel('Email').fill('sync@example.com')
    await page.getByLabel('Password').fill('e2e password 1')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL((u) => u.pathname === '/account')
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download data' }).click()])
    const saved = JSON.parse(readFileSync((await download.path())!, 'utf8'))
    expect(saved).toEqual({
      app: { client_id: client.client_id, name: 'E2E App' },
      settings: [
        { key: 'a', value: { n: 1 }, updated_at: expect.any(String) },
        { key: 'lang', value: 'en', updated_at: expect.any(String) },
      ],
    })
    const [all] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download all my data' }).click()])
    const mine = JSON.parse(readFileSync((await all.path())!, 'utf8'))
    expect(mine.profile).toMatchObject({ email: 'sync@example.com', full_name: 'Sync User' })
    expect(mine.apps).toEqual([{ client_id: client.client_id, name: 'E2E App', scopes: ['settings:read', 'settings:write'], settings: saved.settings }])

    // Asked first: the app and how many settings go; then /account says what was deleted.
    await page.getByRole('link', { name: 'Delete data' }).click()
    await page.waitForURL((u) => u.pathname === '/account/data/delete')
    expect(await page.locator('main').innerText()).toContain('2 settings that E2E App saved for you will be deleted, on every device.')
    await page.getByRole('button', { name: 'Delete data' }).click()
    await page.getByText('Deleted 2 settings of E2E App.').waitFor()
    const list = (await (await fetch(`${server.url}/api/settings`, { headers: bearer() })).json()) as { settings: unknown[]; revision: number }
    expect(list).toEqual({ settings: [], revision: 6 })
    expect((await reader.collect((e) => e.id === '6')).map((e) => [e.id, e.event, JSON.parse(e.data!).key])).toEqual([
      ['5', 'delete', 'a'],
      ['6', 'delete', 'lang'],
    ])
    await reader.cancel()
    await context.close()
  })

  test('SIGTERM ends open streams cleanly (event: end, "shutdown") and the server exits 0', async () => {
    const reader = new SseReader(await fetch(`${server.url}/api/settings-events`, { headers: bearer() }))
    const stopped = server.stop('SIGTERM')
    expect(await reader.collect((e) => e.event === 'end', 10_000)).toEqual([{ event: 'end', data: '{"reason":"shutdown"}' }])
    expect(await stopped).toBe(0)
  })
})
