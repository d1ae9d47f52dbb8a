import { createApp } from '../src/app'
import { createContext } from '../src/context'
import { loadConfig } from '../src/config'
import { insertUser, type User } from '../src/accounts/users'
import { createClient, type Client } from '../src/oauth/clients'
import { issueCode } from '../src/oauth/codes'
import { mintForCode } from '../src/oauth/token/issue'
import { manualClock } from '../src/lib/clock'
import { hashPassword, sha256 } from '../src/lib/crypto'
import { openTestStore, type TestStore } from './store'
import { generateSigningKey } from '../src/oidc/keys'
import type { SaveRules, SigningKeyRecord } from '../src/db/store'
import { parseCookies } from '../src/lib/cookies'
import { createLogger, type Logger } from '../src/lib/log'
import { peerAddresses } from '../src/web/client-address'

export const ORIGIN = 'http://localhost:3000'
export const CALLBACK = 'https://app.example/callback'
export const PASSWORD = 'correct horse battery'

let passwordHash: Promise<string> | undefined

/**
 * The app with a hand-moved clock, as STYLE's createTestApp: on a fresh `:memory:` SQLite
 * database, or — when LATCHKEY_TEST_DATABASE_URL is set — on a fresh PostgreSQL schema.
 * `rows` runs SQL on it for assertions (write `?` placeholders; they suit either engine).
 */
export async function createTestApp(env: Record<string, string> = {}, opts: { log?: Logger } = {}) {
  const config = loadConfig({ DATABASE_URL: ':memory:', ISSUER: ORIGIN, ...env })
  const test = await openTestStore()
  await test.store.keys.ensureSigningKeys(await testSigningKey(), await testSigningKey('next'))
  const clock = manualClock()
  const ctx = await createContext({ store: test.store, config, clock, log: opts.log })
  const app = createApp(ctx)
  const handle = (path: string, init?: RequestInit) => app.handle(new Request(ORIGIN + path, init))
  return { app, ctx, store: test.store, clock, config, handle, rows: test.rows, row: test.row, engine: test.store.engine }
}

export type TestApp = Awaited<ReturnType<typeof createTestApp>>

const signingKeys = new Map<string, Promise<SigningKeyRecord>>()
/** RSA keys shared by every test app of the run (the signing one and the next): making one costs ~50 ms. */
export function testSigningKey(which: 'signing' | 'next' = 'signing'): Promise<SigningKeyRecord> {
  let key = signingKeys.get(which)
  if (!key) signingKeys.set(which, (key = generateSigningKey(Date.UTC(2026, 0, 1))))
  return key
}
export type { TestStore }

export async function addClient(t: TestApp, opts: { name?: string; public?: boolean; skipConsent?: boolean; redirectUris?: string[] } = {}) {
  return (await createClient(
    t.store,
    { name: opts.name ?? 'Demo App', redirectUris: opts.redirectUris ?? [CALLBACK], public: opts.public ?? false, skipConsent: opts.skipConsent ?? false },
    t.clock.now(),
  )) as { client: Client; secret: string }
}

export async function addUser(t: TestApp, email = 'ann@example.com', fullName = 'Ann Lee'): Promise<User> {
  passwordHash ??= hashPassword(PASSWORD)
  return insertUser(t.store, { email, fullName, avatarUrl: null, passwordHash: await passwordHash }, t.clock.now())
}

/** Tokens minted through the store's own code exchange (the HTTP flow is covered by the oauth tests). */
export async function mintTokenPair(t: Pick<TestApp, 'store' | 'ctx' | 'clock'>, clientId: string, userId: string, scope = 'settings:read settings:write', resource: string | null = null) {
  const code = await issueCode(t.store, { clientId, userId, redirectUri: CALLBACK, scope, codeChallenge: null, resource }, t.clock.now(), 60)
  const minted = mintForCode(t.ctx, clientId)
  const expect = { clientId, redirectUri: CALLBACK, challenge: null, audience: undefined }
  const outcome = await t.store.grants.exchangeCode({ codeHash: sha256(code), now: t.clock.now(), expect, tokens: minted.tokens })
  if (!outcome.ok) throw new Error('minting a token failed')
  return minted.response(outcome, outcome.code)
}

export async function mintToken(t: Pick<TestApp, 'store' | 'ctx' | 'clock'>, clientId: string, userId: string, scope = 'settings:read settings:write') {
  return (await mintTokenPair(t, clientId, userId, scope)).access_token
}

/** Cookies from a response's Set-Cookie headers, as a Cookie header value. */
export function cookiesFrom(response: Response, jar: Record<string, string> = {}): Record<string, string> {
  for (const line of response.headers.getSetCookie()) {
    const [pair] = line.split(';')
    const [name, value] = pair!.split('=') as [string, string]
    if (value === '') delete jar[name]
    else jar[name] = value
  }
  return jar
}

export function cookieHeader(jar: Record<string, string>): string {
  return Object.entries(jar)
    .map(([k, v]) => `${k}=${v}`)
    .join('; ')
}

export function csrfFrom(html: string): string {
  const m = /name="csrf_token" value="([^"]+)"/.exec(html)
  if (!m) throw new Error('no csrf_token in page')
  return m[1]!
}

export function form(fields: Record<string, string | undefined>): URLSearchParams {
  const body = new URLSearchParams()
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) body.append(k, v)
  return body
}

/** A browser's form POST: urlencoded fields, with the cookie jar when given. */
export function postForm(t: TestApp, path: string, fields: Record<string, string | undefined>, jar?: Record<string, string>) {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' }
  if (jar) headers.cookie = cookieHeader(jar)
  return t.handle(path, { method: 'POST', headers, body: form(fields) })
}

/** Signs in through the real login page; returns the cookie jar. */
export async function signIn(t: TestApp, email = 'ann@example.com', password = PASSWORD) {
  const page = await t.handle('/login')
  const jar = cookiesFrom(page)
  const csrf = csrfFrom(await page.text())
  const res = await postForm(t, '/login', { email, password, csrf_token: csrf }, jar)
  if (res.status !== 303) throw new Error(`sign-in failed: ${res.status}`)
  return cookiesFrom(res, jar)
}

/** An app with one registered client and a signed-in user: the start of most OAuth tests. */
export async function signedInApp(env: Record<string, string> = {}) {
  const t = await createTestApp(env)
  const client = await addClient(t)
  await addUser(t)
  return { t, client, jar: await signIn(t) }
}

export function authorizePath(params: Record<string, string | undefined>): string {
  return '/oauth/authorize?' + form(params).toString()
}

/** Goes through consent and clicks Allow; returns the callback URL. */
export async function authorizeAndAllow(t: TestApp, jar: Record<string, string>, params: Record<string, string | undefined>) {
  const page = await t.handle(authorizePath(params), { headers: { cookie: cookieHeader(jar) } })
  if (page.status === 303) return new URL(page.headers.get('location')!)
  const csrf = csrfFrom(await page.text())
  const res = await postForm(t, '/oauth/authorize', { ...params, csrf_token: csrf, decision: 'allow' }, jar)
  return new URL(res.headers.get('location')!)
}

export function tokenRequest(t: TestApp, body: Record<string, string | undefined>, headers: Record<string, string> = {}) {
  return t.handle('/api/oauth/token', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
}

/** A token through the real flow: sign in, consent, exchange. */
export async function tokenThroughFlow(t: TestApp, client: { client: Client; secret: string }, scope: string, email?: string) {
  const jar = await signIn(t, email)
  const callback = await authorizeAndAllow(t, jar, { client_id: client.client.id, redirect_uri: CALLBACK, scope, state: 's' })
  const res = await tokenRequest(t, {
    grant_type: 'authorization_code',
    code: callback.searchParams.get('code')!,
    client_id: client.client.id,
    client_secret: client.secret,
    redirect_uri: CALLBACK,
  })
  if (res.status !== 200) throw new Error(`token exchange failed: ${res.status} ${await res.text()}`)
  return ((await res.json()) as { access_token: string }).access_token
}

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` }
}

/**
 * Ends the current event-loop turn. Real requests never share a turn with one sent after them;
 * in-process `app.handle` calls awaited back to back do, so tests that model "the next request"
 * after another process's commit cross a turn first (see ExternalWrites.check).
 */
/** Save rules without limits or preconditions: a store-level write at `now` (tests and the scale bench). */
export function unlimited(now: number): SaveRules {
  return { now, valueBytes: 0, maxKeys: Number.MAX_SAFE_INTEGER, maxUserBytes: Number.MAX_SAFE_INTEGER }
}

export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

export { parseCookies }

/** A logger that keeps its lines, for tests of what is (and is not) logged. */
export function capturingLogger() {
  const lines: string[] = []
  const log = createLogger('debug', (chunk) => lines.push(...chunk.trimEnd().split('\n')))
  return {
    log,
    entries: () => {
      log.flush()
      return lines.map((l) => JSON.parse(l) as Record<string, unknown>)
    },
    text: () => {
      log.flush()
      return lines.join('\n')
    },
  }
}

/** A request as the server sees it from `peer` (the socket address Bun.serve reports). */
export function handleFrom(t: TestApp, peer: string, path: string, init?: RequestInit) {
  const request = new Request(ORIGIN + path, init)
  peerAddresses.set(request, peer)
  return t.app.handle(request)
}
