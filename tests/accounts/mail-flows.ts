/** Browser steps for the mail tests (recovery, email change): the outbox as the sender sees it, and the forms a user fills. */
import { createApp } from '../../src/app'
import { loadConfig } from '../../src/config'
import { createContext } from '../../src/context'
import { ORIGIN, PASSWORD, cookieHeader, cookiesFrom, csrfFrom, postForm, type TestApp } from '../helpers'
import { csrfOf, type Jar } from './mfa-flows'

/** Mail set up, and sign-up open: most flows start at /signup (SIGNUP is closed by default). */
// "New sign-in" notices (tests/sessions/new-device.test.ts) are off: these tests count the other messages.
export const SMTP = { SMTP_URL: 'smtp://127.0.0.1:2525', LOGIN_ATTEMPTS_PER_MINUTE: '1000', SIGNUP: 'open', NEW_DEVICE_EMAIL: 'off' }

export interface Sent {
  to: string
  subject: string
  link?: string
  text: string
  html: string
}

/** The outbox: recipient, subject, text and HTML, and the first link of each message. */
export async function outbox(t: TestApp): Promise<Sent[]> {
  const rows = (await t.rows('SELECT recipient, subject, text_body, html_body FROM mail_outbox ORDER BY id')) as Array<Record<string, string>>
  return rows.map((r) => ({ to: r.recipient!, subject: r.subject!, text: r.text_body!, html: r.html_body!, link: /https?:\/\/\S+/.exec(r.text_body!)?.[0] }))
}

/** The outbox once it holds `count` messages (/forgot-password writes its link after answering). */
export async function outboxOf(t: TestApp, count: number): Promise<Sent[]> {
  const deadline = Date.now() + 5_000
  for (;;) {
    const messages = await outbox(t)
    if (messages.length >= count || Date.now() > deadline) return messages
    await Bun.sleep(5)
  }
}

export const pathOf = (link: string) => link.slice(link.indexOf('/', 8))
export const get = (t: TestApp, path: string, jar: Jar = {}) => t.handle(path, { headers: { cookie: cookieHeader(jar) } })

/** Self sign-up through /signup (with `return_to` when given); the jar holds the new session. */
export async function signUp(t: TestApp, email: string, opts: { name?: string; returnTo?: string } = {}) {
  const jar: Jar = {}
  const csrf = await csrfOf(t, '/signup', jar)
  const res = await postForm(t, '/signup', { full_name: opts.name ?? 'Eve New', email, password: PASSWORD, csrf_token: csrf, return_to: opts.returnTo }, jar)
  cookiesFrom(res, jar)
  return { res, jar }
}

export async function forgot(t: TestApp, email: string) {
  const jar: Jar = {}
  const csrf = await csrfOf(t, '/forgot-password', jar)
  return postForm(t, '/forgot-password', { csrf_token: csrf, email }, jar)
}

/** Opens a reset (or invitation) link and sets the password. */
export async function reset(t: TestApp, link: string, password: string) {
  const jar: Jar = {}
  const page = await get(t, pathOf(link), jar)
  if (page.status !== 200) return page
  cookiesFrom(page, jar)
  const csrf = csrfFrom(await page.text())
  return postForm(t, '/reset-password', { csrf_token: csrf, token: new URL(link).searchParams.get('token')!, password }, jar)
}

/** Marks an account's email verified, as a used link would. */
export async function markVerified(t: TestApp, email: string) {
  await t.rows('UPDATE users SET email_verified = ? WHERE email = ?', true, email)
}

/**
 * The same database and clock served with other settings: a server that ran without mail and is
 * restarted with SMTP_URL set.
 */
export async function restartedWith(t: TestApp, env: Record<string, string>): Promise<TestApp> {
  const config = loadConfig({ DATABASE_URL: ':memory:', ISSUER: ORIGIN, ...env })
  const ctx = await createContext({ store: t.store, config, clock: t.clock })
  const app = createApp(ctx)
  return { ...t, app, ctx, config, handle: (path: string, init?: RequestInit) => app.handle(new Request(ORIGIN + path, init)) }
}

/**
 * Opens a verify link in the browser of `jar` (a session of the link's account) and presses
 * "Confirm": opening it changes nothing, the POST verifies (SPEC "Verify"). The POST's answer.
 */
export async function confirmVerify(t: TestApp, link: string, jar: Jar) {
  const page = await get(t, pathOf(link), jar)
  if (page.status !== 200) throw new Error(`the verify page answered ${page.status}`)
  const html = await page.text()
  const url = new URL(link)
  return postForm(t, '/verify-email', { csrf_token: csrfFrom(html), token: url.searchParams.get('token')!, return_to: url.searchParams.get('return_to') ?? undefined }, jar)
}
