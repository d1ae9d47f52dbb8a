import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { decodeJwt } from 'jose'
import { testEngine } from '../store'
import { until } from '../wait'
import { TestSmtp, linkIn, subjectOf } from '../mail/smtp'
import { CookieClient, type RunningBinary, launchChromium, startBinary } from './server'

// A binary, a real SMTP server (STARTTLS, self-signed) and a browser: slower than in-process tests.
setDefaultTimeout(60_000)

let smtp: TestSmtp
let server: RunningBinary
const CALLBACK = 'http://127.0.0.1:9/callback'

const mailEnv = () => ({ SMTP_URL: smtp.url, MAIL_FROM: 'Latchkey <id@example.com>', NODE_EXTRA_CA_CERTS: smtp.tls.certPath, LOGIN_ATTEMPTS_PER_MINUTE: '1000', SIGNUP: 'open', NEW_DEVICE_EMAIL: 'off' })

beforeAll(async () => {
  smtp = await TestSmtp.start()
  server = await startBinary(mailEnv())
})

afterAll(async () => {
  server?.cleanup()
  await smtp?.down()
})

/** The next message to `to` (waiting for it), its subject and link. */
async function nextMessageTo(to: string, after: number, ms = 15_000) {
  for (;;) {
    const all = await smtp.waitFor(after + 1, ms)
    const found = all.slice(after).find((m) => m.to.includes(to))
    if (found) return { subject: subjectOf(found.raw), link: linkIn(found.raw), secure: found.secure }
    await smtp.waitFor(all.length + 1, ms)
  }
}

async function form(client: CookieClient, path: string, fields: Record<string, string>) {
  const page = await client.fetch(path)
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(await page.text())![1]!
  return client.fetch(path.split('?')[0]!, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ ...fields, csrf_token: csrf }) })
}

describe('mail from the binary, through a real SMTP server', () => {
  test('sign-up → "Verify your email" arrives over STARTTLS → its link verifies: email_verified true in the id_token', async () => {
    const before = smtp.received.length
    const app = JSON.parse(server.cli(['client', 'create', '--name', 'App', '--redirect-uri', CALLBACK, '--skip-consent']).out)
    const browser = new CookieClient(server.url)
    const signedUp = await form(browser, '/signup', { full_name: 'Eve New', email: 'eve@example.com', password: 'a long password' })
    expect(signedUp.status).toBe(303)
    const message = await nextMessageTo('eve@example.com', before)
    expect(message.subject).toBe('Verify your email')
    expect(message.secure).toBe(true)
    expect(message.link).toStartWith(`${server.url}/verify-email?token=`)
    // The link's page asks; "Confirm" (a POST from this signed-in browser) verifies.
    const verified = await form(browser, message.link.slice(server.url.length), { token: new URL(message.link).searchParams.get('token')! })
    expect(verified.status).toBe(200)
    const authorize = await browser.fetch(`/oauth/authorize?client_id=${app.client_id}&redirect_uri=${encodeURIComponent(CALLBACK)}&scope=openid%20email&state=s`)
    const code = new URL(authorize.headers.get('location')!).searchParams.get('code')!
    const tokens = await fetch(`${server.url}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'authorization_code', code, client_id: app.client_id, client_secret: app.client_secret, redirect_uri: CALLBACK }),
    })
    expect(decodeJwt(((await tokens.json()) as { id_token: string }).id_token)).toMatchObject({ email: 'eve@example.com', email_verified: true })
    expect(server.output()).not.toContain('s3cret-pass')
  })

  test('forgot password → the link → a new password works; the old one and the old sessions do not', async () => {
    expect(server.cli(['user', 'create', '--email', 'ann@example.com', '--name', 'Ann', '--password-stdin'], 'the old password\n').code).toBe(0)
    const old = new CookieClient(server.url)
    expect((await form(old, '/login', { email: 'ann@example.com', password: 'the old password' })).status).toBe(303)
    const before = smtp.received.length
    const anon = new CookieClient(server.url)
    const asked = await form(anon, '/forgot-password', { email: 'ann@example.com' })
    expect(asked.status).toBe(200)
    expect(await asked.text()).toContain('If an account exists for that address, we sent a link.')
    const message = await nextMessageTo('ann@example.com', before)
    expect(message.subject).toBe('Reset your password')
    const reset = new CookieClient(server.url)
    const path = message.link.slice(server.url.length)
    const page = await reset.fetch(path)
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(await page.text())![1]!
    const done = await reset.fetch('/reset-password', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf_token: csrf, token: new URL(message.link).searchParams.get('token')!, password: 'the new password' }),
    })
    expect(done.status).toBe(200)
    expect((await nextMessageTo('ann@example.com', before + 1)).subject).toBe('Your password was changed')
    expect((await old.fetch('/account')).status).toBe(303)
    expect((await form(new CookieClient(server.url), '/login', { email: 'ann@example.com', password: 'the old password' })).status).toBe(401)
    expect((await form(new CookieClient(server.url), '/login', { email: 'ann@example.com', password: 'the new password' })).status).toBe(303)
  })

  test('invite → "You\'re invited to Latchkey" → choose a password → sign in; --print-link and reset-link print the link alone', async () => {
    const before = smtp.received.length
    const invited = server.cli(['user', 'invite', '--email', 'ivy@example.com', '--name', 'Ivy'])
    expect(invited.code).toBe(0)
    expect(JSON.parse(invited.out)).toMatchObject({ email: 'ivy@example.com', full_name: 'Ivy' })
    const message = await nextMessageTo('ivy@example.com', before)
    expect(message.subject).toBe("You're invited to Latchkey")
    const client = new CookieClient(server.url)
    const page = await client.fetch(message.link.slice(server.url.length))
    expect(await page.text()).toContain('Choose your password')
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(await (await client.fetch(message.link.slice(server.url.length))).text())![1]!
    const set = await client.fetch('/reset-password', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf_token: csrf, token: new URL(message.link).searchParams.get('token')!, password: 'ivy password' }),
    })
    expect(set.status).toBe(200)
    expect((await form(new CookieClient(server.url), '/login', { email: 'ivy@example.com', password: 'ivy password' })).status).toBe(303)
    const ivy = (JSON.parse(server.cli(['user', 'list', '--json']).out) as Array<{ id: string; email: string }>).find((u) => u.email === 'ivy@example.com')!
    const printed = server.cli(['user', 'invite', '--email', 'joe@example.com', '--name', 'Joe', '--print-link'])
    expect(printed.out).toMatch(new RegExp(`^${server.url}/reset-password\\?token=[A-Za-z0-9_-]{43}\\n$`))
    expect(server.cli(['user', 'reset-link', ivy.id]).out).toMatch(new RegExp(`^${server.url}/reset-password\\?token=[A-Za-z0-9_-]{43}\\n$`))
    expect(server.cli(['user', 'reset-link', 'nobody']).code).not.toBe(0)
  })

  test('SMTP down while a request sends mail: the request answers at once; the message arrives once the server is back', async () => {
    expect(server.cli(['user', 'create', '--email', 'dot@example.com', '--name', 'Dot', '--password-stdin'], 'dot password\n').code).toBe(0)
    await smtp.down()
    const before = smtp.received.length
    try {
      const started = performance.now()
      const asked = await form(new CookieClient(server.url), '/forgot-password', { email: 'dot@example.com' })
      expect(asked.status).toBe(200)
      expect(performance.now() - started).toBeLessThan(2_000)
      // The sender tried, failed, and put the message back for later.
      await until(async () => {
        const [row] = await server.query('SELECT attempts, last_error FROM mail_outbox WHERE recipient = ? AND sent_at IS NULL', 'dot@example.com')
        return row !== undefined && Number(row.attempts) >= 1 && row.last_error !== null
      }, 'a failed attempt to send to dot@example.com')
    } finally {
      await smtp.up()
    }
    // The first retry comes within 30 s.
    const message = await nextMessageTo('dot@example.com', before, 45_000)
    expect(message.subject).toBe('Reset your password')
  }, 60_000)
})

describe.skipIf(testEngine !== 'postgres')('two instances on one PostgreSQL database (PostgreSQL only: SQLite is one process)', () => {
  test('share one outbox and deliver each of 100 messages once', async () => {
    const second = await startBinary({ ...mailEnv(), DATABASE_URL: server.databaseUrl })
    try {
      const before = smtp.received.length
      const now = Date.now()
      const values = Array.from({ length: 100 }, (_, i) => `('bulk${i}@example.com', 'Bulk', 'text', '<p>html</p>', ${now}, ${now})`).join(', ')
      await server.query(`INSERT INTO mail_outbox (recipient, subject, text_body, html_body, created_at, next_attempt_at) VALUES ${values}`)
      const all = await smtp.waitFor(before + 100, 45_000)
      // A duplicate is a second claim of a message before it was stamped sent, whose sender then
      // sends it: once all are stamped (no claim can follow) and no SMTP session is open (no send
      // is under way), every duplicate would have arrived, and stamped its row a second time.
      const bulkSent = async () => (await server.query('SELECT count(*)::int AS n FROM mail_outbox WHERE sent_at IS NOT NULL AND recipient LIKE ?', 'bulk%'))[0]!.n
      await until(async () => (await bulkSent()) === 100 && smtp.openConnections === 0, 'every bulk message stamped sent and no SMTP session open', { timeoutMs: 30_000 })
      expect(await server.query('SELECT count(*)::int AS n FROM mail_outbox WHERE attempts <> 1 AND recipient LIKE ?', 'bulk%')).toEqual([{ n: 0 }])
      const bulk = smtp.received.slice(before).filter((m) => m.to[0]!.startsWith('bulk'))
      expect(bulk).toHaveLength(100)
      expect(new Set(bulk.map((m) => m.to[0])).size).toBe(100)
      expect(all.length).toBeGreaterThanOrEqual(before + 100)
      expect(await server.query('SELECT count(*)::int AS n FROM mail_outbox WHERE sent_at IS NOT NULL AND recipient LIKE ?', 'bulk%')).toEqual([{ n: 100 }])
    } finally {
      second.cleanup()
    }
  })
})

describe('a real browser (Chromium) walks forgot-password → reset', () => {
  test('/login → "Forgot password?" → the link → a new password → signed in', async () => {
    expect(server.cli(['user', 'create', '--email', 'web@example.com', '--name', 'Web', '--password-stdin'], 'web old password\n').code).toBe(0)
    const browser = await launchChromium()
    try {
      const page = await (await browser.newContext()).newPage()
      const violations: string[] = []
      page.on('console', (m) => {
        if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text())
      })
      await page.goto(`${server.url}/login`)
      await page.getByRole('link', { name: 'Forgot password?' }).click()
      await page.getByLabel('Email').fill('web@example.com')
      const before = smtp.received.length
      await page.getByRole('button', { name: 'Send reset link' }).click()
      await page.getByRole('status').waitFor()
      const message = await nextMessageTo('web@example.com', before)
      await page.goto(message.link)
      await page.getByLabel('New password').fill('web new password')
      await page.getByRole('button', { name: 'Set password' }).click()
      await page.getByRole('link', { name: 'Sign in' }).click()
      await page.getByLabel('Email').fill('web@example.com')
      await page.getByLabel('Password').fill('web new password')
      await page.getByRole('button', { name: 'Sign in', exact: true }).click()
      await page.waitForURL((u) => u.pathname === '/account')
      expect(violations).toEqual([])
    } finally {
      await browser.close()
    }
  })
})
