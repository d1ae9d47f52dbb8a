/**
 * Forward-auth through Debian's nginx (`auth_request`) and Caddy (`forward_auth`), each configured
 * with the README's own snippet, in front of a small app that echoes the Remote-* headers; a real Chromium resolves the test
 * domains to 127.0.0.1 (`--host-resolver-rules`): sign in once, land on the page, and the second
 * domain is signed in without a password; someone outside the site's group is turned away; a
 * two-factor site asks a one-factor session for its second step; signing out ends every site. On
 * PostgreSQL the proxies speak to two Latchkey instances on one database behind Debian's haproxy.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TOTP } from 'otpauth'
import type { Browser, Page } from 'playwright-core'
import { startHaproxy, type Balancer } from '../haproxy'
import { freshPgDatabase } from '../pg-store'
import { testEngine } from '../store'
import { freePort, startBinary, type RunningBinary } from './server'

setDefaultTimeout(60_000)

const PASSWORD = 'forward auth password'
let server: RunningBinary
/** On PostgreSQL: the second instance and the balancer in front of both (`server` is the first, reached through it). */
let second: RunningBinary | undefined
let balancer: Balancer | undefined
let app: ReturnType<typeof Bun.serve>
let nginx: ReturnType<typeof Bun.spawn> | undefined
let browser: Browser
let port: number
let nginxLog = ''

/** A configuration block of the README's forward-auth section, as written there. */
async function readmeSnippet(lang: string): Promise<string> {
  const readme = await Bun.file(join(import.meta.dir, '../../README.md')).text()
  const section = readme.slice(readme.indexOf('## Put any app behind Latchkey'))
  return new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(section)![1]!
}

/** The README's nginx block for one site, pointed at this test's Latchkey, app and port. */
async function siteBlock(host: string): Promise<string> {
  return (await readmeSnippet('nginx'))
    .replace('listen 80;', `listen 127.0.0.1:${port};`)
    .replace('server_name photos.example.com;', `server_name ${host};`)
    .replaceAll('http://latchkey:3000', server.url)
    .replace('http://photos:8080', `http://127.0.0.1:${app.port}`)
}

let caddy: ReturnType<typeof Bun.spawn> | undefined

/** Debian's Caddy with the README's Caddyfile block for each site (http, on 127.0.0.1). */
async function startCaddy(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-caddy-'))
  const caddyPort = await freePort()
  const snippet = await readmeSnippet('caddyfile')
  const site = (host: string) =>
    snippet
      .replace('photos.example.com {', `http://${host}:${caddyPort} {\n\tbind 127.0.0.1`)
      .replaceAll('latchkey:3000', server.url.replace('http://', ''))
      .replace('photos:8080', `127.0.0.1:${app.port}`)
  writeFileSync(join(dir, 'Caddyfile'), `{\n\tadmin off\n\tauto_https off\n\tstorage file_system ${dir}/data\n}\n${site('photos.example.com')}\n${site('wiki.example.org')}\n${site('secure.example.org')}`)
  const env = { PATH: process.env.PATH ?? '', HOME: dir, XDG_CONFIG_HOME: dir, XDG_DATA_HOME: dir }
  caddy = Bun.spawn(['/usr/bin/caddy', 'run', '--config', join(dir, 'Caddyfile'), '--adapter', 'caddyfile'], { cwd: dir, env, stdout: 'pipe', stderr: 'pipe' })
  let log = ''
  void new Response(caddy.stderr as ReadableStream).text().then((t) => (log += t))
  for (let i = 0; i < 400; i++) {
    const ok = await fetch(`http://127.0.0.1:${caddyPort}/`, { headers: { host: `photos.example.com:${caddyPort}` }, redirect: 'manual' }).then(() => true, () => false)
    if (ok) return caddyPort
    if (caddy.exitCode !== null) throw new Error(`caddy exited: ${log}`)
    await Bun.sleep(25)
  }
  throw new Error(`caddy did not start: ${log}`)
}

async function startNginx(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-nginx-'))
  mkdirSync(join(dir, 'logs'))
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `${t}_temp_path ${dir}/${t};`).join('\n  ')
  const conf = `daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/logs/error.log warn;
events { worker_connections 64; }
http {
  access_log off;
  ${temp}
${await siteBlock('photos.example.com')}
${await siteBlock('wiki.example.org')}
${await siteBlock('secure.example.org')}
}
`
  writeFileSync(join(dir, 'nginx.conf'), conf)
  nginx = Bun.spawn(['/usr/sbin/nginx', '-p', dir, '-e', `${dir}/logs/error.log`, '-c', join(dir, 'nginx.conf')], { stdout: 'pipe', stderr: 'pipe' })
  void new Response(nginx.stderr as ReadableStream).text().then((t) => (nginxLog += t))
  // Ready when it answers (a 401-turned-302 from the auth subrequest).
  for (let i = 0; i < 200; i++) {
    const ok = await fetch(`http://127.0.0.1:${port}/`, { headers: { host: 'photos.example.com' }, redirect: 'manual' }).then(() => true, () => false)
    if (ok) return
    if (nginx.exitCode !== null) throw new Error(`nginx exited: ${nginxLog}`)
    await Bun.sleep(25)
  }
  throw new Error('nginx did not start')
}

/** One instance on SQLite; on PostgreSQL two on one database, behind haproxy (ISSUER is the balancer). */
async function startLatchkey(): Promise<void> {
  if (testEngine !== 'postgres') {
    server = await startBinary({ TRUSTED_PROXIES: '127.0.0.1' })
    return
  }
  const lbPort = await freePort()
  const env = { DATABASE_URL: await freshPgDatabase(), ISSUER: `http://127.0.0.1:${lbPort}`, TRUSTED_PROXIES: '127.0.0.1' }
  const [a, b] = await Promise.all([startBinary(env), startBinary(env)])
  second = b
  balancer = await startHaproxy(lbPort, [a, b].map((s) => new URL(s.url).host))
  server = { ...a, url: balancer.url }
}

beforeAll(async () => {
  await startLatchkey()
  for (const [email, name] of [['ann@example.com', 'Ann Lee'], ['bob@example.com', 'Bob Stone'], ['tess.nginx@example.com', 'Tess Nginx'], ['tess.caddy@example.com', 'Tess Caddy']])
    expect(server.cli(['user', 'create', '--email', email!, '--name', name!, '--password-stdin'], `${PASSWORD}\n`).code).toBe(0)
  expect(server.cli(['group', 'create', 'family']).code).toBe(0)
  expect(server.cli(['group', 'add', 'family', 'ann@example.com']).code).toBe(0)
  expect(server.cli(['site', 'create', '--host', 'photos.example.com', '--name', 'Photos', '--allowed-group', 'family']).code).toBe(0)
  expect(server.cli(['site', 'create', '--host', '*.example.org', '--name', 'Wikis']).code).toBe(0)
  expect(server.cli(['site', 'rule', 'add', 'photos.example.com', '--path', '^/public/', '--policy', 'bypass']).code).toBe(0)
  // An exact host wins over the wildcard: this one asks for two factors.
  expect(server.cli(['site', 'create', '--host', 'secure.example.org', '--name', 'Vault', '--policy', 'two-factor']).code).toBe(0)
  app = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (request) => {
      const url = new URL(request.url)
      const who = ['remote-user', 'remote-email', 'remote-name', 'remote-groups'].map((h) => `<li id="${h}">${request.headers.get(h) ?? ''}</li>`).join('')
      return new Response(`<!doctype html><title>App</title><h1>${url.pathname}${url.search}</h1><ul>${who}</ul>`, { headers: { 'content-type': 'text/html' } })
    },
  })
  port = await freePort()
  await startNginx()
  const { chromium } = await import('playwright-core')
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-dev-shm-usage', '--host-resolver-rules=MAP photos.example.com 127.0.0.1, MAP wiki.example.org 127.0.0.1, MAP secure.example.org 127.0.0.1'],
  })
})

afterAll(async () => {
  await browser?.close()
  nginx?.kill()
  caddy?.kill()
  await nginx?.exited
  await caddy?.exited
  app?.stop(true)
  balancer?.stop()
  server?.cleanup()
  second?.cleanup()
})

/** Latchkey's sign-in page, filled and sent (it returns wherever the flow began). */
async function signIn(page: Page, email: string): Promise<void> {
  expect(page.url()).toStartWith(`${server.url}/login?return_to=`)
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password').fill(PASSWORD)
  await page.getByRole('button', { name: 'Sign in' }).click()
}

/**
 * The browser's journey through a proxy on `proxyPort`: sign in once at Latchkey, land on the
 * page with the Remote-* headers; the second domain needs no password; a cookie copied to the
 * other host opens nothing; another browser opening a callback link gets no session; the
 * /.latchkey/logout button ends both.
 */
async function journey(proxyPort: number, tess: string): Promise<void> {
  // A bypassed path, nobody signed in: a forged Remote-User never reaches the app.
  const forged = await fetch(`http://127.0.0.1:${proxyPort}/public/a.png`, { headers: { host: `photos.example.com:${proxyPort}`, 'remote-user': 'admin@example.com', 'remote-groups': 'admins' } })
  expect(forged.status).toBe(200)
  const echoed = await forged.text()
  expect(echoed).toContain('<h1>/public/a.png</h1>')
  expect(echoed).toContain('<li id="remote-user"></li>')
  expect(echoed).toContain('<li id="remote-groups"></li>')

  const context = await browser.newContext()
  const page = await context.newPage()
  const photos = `http://photos.example.com:${proxyPort}/albums/1?sort=new`
  await page.goto(photos)
  expect(page.url()).toStartWith(`${server.url}/login?return_to=`)
  await page.getByLabel('Email').fill('ann@example.com')
  await page.getByLabel('Password').fill(PASSWORD)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(photos)
  expect(await page.locator('h1').innerText()).toBe('/albums/1?sort=new')
  expect(await page.locator('#remote-user').innerText()).toBe('ann@example.com')
  expect(await page.locator('#remote-name').innerText()).toBe('Ann Lee')
  expect(await page.locator('#remote-groups').innerText()).toBe('family')
  const cookies = await context.cookies(`http://photos.example.com:${proxyPort}/`)
  expect(cookies.map((c) => [c.name, c.domain, c.httpOnly, c.sameSite])).toEqual([['lk_site', 'photos.example.com', true, 'Lax']])

  // Single sign-on on another domain: straight through /authz/start, no sign-in page.
  const visited: string[] = []
  page.on('framenavigated', (frame) => visited.push(frame.url()))
  const wiki = `http://wiki.example.org:${proxyPort}/page`
  await page.goto(wiki)
  expect(page.url()).toBe(wiki)
  expect(await page.locator('#remote-user').innerText()).toBe('ann@example.com')
  expect(visited.some((u) => u.includes('/login'))).toBe(false)

  // The photos cookie, copied to the wiki's host, opens nothing there.
  const copied = await browser.newContext()
  await copied.addCookies([{ ...cookies[0]!, domain: 'wiki.example.org', path: '/' }])
  const thief = await copied.newPage()
  await thief.goto(wiki)
  expect(thief.url()).toStartWith(`${server.url}/login?return_to=`)
  await copied.close()

  // Login CSRF: a callback link with a code Ann's browser asked for, opened in another browser,
  // signs that browser into nothing — it is sent to sign in as itself.
  const rd = `http://photos.example.com:${proxyPort}/albums/2`
  const started = await page.request.get(`${server.url}/authz/start?rd=${encodeURIComponent(rd)}&state=${'s'.repeat(43)}`, { maxRedirects: 0 })
  const link = started.headers()['location']!
  expect(link).toStartWith(`http://photos.example.com:${proxyPort}/.latchkey/callback?code=`)
  const victim = await browser.newContext()
  const victimPage = await victim.newPage()
  await victimPage.goto(link)
  expect(victimPage.url()).toStartWith(`${server.url}/login?return_to=`)
  expect((await victim.cookies(rd)).map((c) => c.name)).toEqual(['lk_state'])
  await victim.close()

  // Bob is not in the family group the photos site allows: signed in, then turned away.
  const outsider = await browser.newContext()
  const bobPage = await outsider.newPage()
  await bobPage.goto(photos)
  const denied = bobPage.waitForResponse((r) => r.url().startsWith(`${server.url}/authz/start`) && r.request().isNavigationRequest())
  await signIn(bobPage, 'bob@example.com')
  expect((await denied).status()).toBe(403)
  expect(await bobPage.locator('h1').innerText()).toBe('Access denied')
  // The wiki names no group: Bob's one sign-in lets him in there.
  await bobPage.goto(wiki)
  expect(await bobPage.locator('#remote-user').innerText()).toBe('bob@example.com')
  await outsider.close()

  // A two-factor site: a session signed in with a password alone is asked for its second step,
  // then lands on the page it asked for.
  const secure = `http://secure.example.org:${proxyPort}/vault`
  const stepper = await browser.newContext()
  const tessPage = await stepper.newPage()
  await tessPage.goto(secure)
  await signIn(tessPage, tess)
  await tessPage.getByText('Two-step sign-in required').waitFor()
  await tessPage.goto(`${server.url}/account`)
  await tessPage.getByRole('button', { name: 'Turn on two-step verification' }).click()
  await tessPage.waitForURL((u) => u.pathname === '/account/two-step')
  const totp = new TOTP({ secret: (await tessPage.locator('code.secret').innerText()).replace(/\s/g, ''), algorithm: 'SHA1', digits: 6, period: 30 })
  await tessPage.getByLabel('Authentication code').fill(totp.generate())
  await tessPage.getByRole('button', { name: 'Turn on' }).click()
  await tessPage.getByRole('heading', { name: 'Your recovery codes' }).waitFor()
  await tessPage.goto(secure)
  await tessPage.waitForURL((u) => u.pathname === '/login/two-step')
  // The code that turned it on is spent: the next step's (one step of drift is allowed).
  await tessPage.getByLabel('Authentication code').fill(totp.generate({ timestamp: Date.now() + 30_000 }))
  await tessPage.getByRole('button', { name: 'Verify' }).click()
  await tessPage.waitForURL(secure)
  expect(await tessPage.locator('h1').innerText()).toBe('/vault')
  expect(await tessPage.locator('#remote-user').innerText()).toBe(tess)
  await stepper.close()

  // /.latchkey/logout: a link alone signs nobody out; its button does.
  await page.goto(`http://photos.example.com:${proxyPort}/.latchkey/logout`)
  expect(page.url()).toBe(`http://photos.example.com:${proxyPort}/.latchkey/logout`)
  await page.getByRole('button', { name: 'Sign out' }).click()
  await page.waitForURL(`${server.url}/login`)
  // Every site's session ended with the sign-in session (on PostgreSQL, whichever instance answers).
  for (const site of [wiki, photos]) {
    await page.goto(site)
    expect(page.url()).toStartWith(`${server.url}/login?return_to=`)
  }
  await context.close()
}

describe(`forward-auth in Chromium (${testEngine === 'postgres' ? 'two instances on PostgreSQL behind haproxy' : 'SQLite'})`, () => {
  test('behind nginx (auth_request, the README snippet): sign-in, return, single sign-on across domains, a bypassed path, denied outside the group, a two-factor step-up, copied cookie and foreign callback refused, sign-out ending every site', async () => {
    await journey(port, 'tess.nginx@example.com')
  })

  test('behind Caddy (forward_auth, the README snippet): the same journey', async () => {
    const caddyPort = await startCaddy()
    await journey(caddyPort, 'tess.caddy@example.com')
  })
})
