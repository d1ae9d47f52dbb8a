import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Database } from 'bun:sqlite'
import { SETUP_TTL_MS, newSetupLink, offerSetupLink } from '../../src/admin/setup-link'
import { sha256 } from '../../src/lib/crypto'
import { createLogger } from '../../src/lib/log'
import { ORIGIN, addUser, cookieHeader, cookiesFrom, createTestApp, csrfFrom, postForm, type TestApp } from '../helpers'
import { SoftAuthenticator } from '../soft-authenticator'
import { LOCAL, passkeySignIn } from '../accounts/mfa-flows'

const ADMIN = { full_name: 'Olga Operator', email: 'olga@example.com', password: 'a long operator password' }

/** The path and query of a setup link (the app is handled in-process at ORIGIN). */
const pathOf = (link: string) => {
  expect(link).toStartWith(`${ORIGIN}/setup?token=`)
  return link.slice(ORIGIN.length)
}
const tokenOf = (link: string) => new URL(link).searchParams.get('token')!

async function link(t: TestApp) {
  return newSetupLink(t.store, t.config.issuer, t.clock.now())
}

/** Opens the setup page and submits it: the page's CSRF cookie and token, the link's token. */
async function setUp(t: TestApp, setupLink: string, fields: Record<string, string> = ADMIN) {
  const page = await t.handle(pathOf(setupLink))
  expect(page.status).toBe(200)
  const jar = cookiesFrom(page)
  return { res: await postForm(t, '/setup', { csrf_token: csrfFrom(await page.text()), token: tokenOf(setupLink), ...fields }, jar), jar }
}

const users = async (t: TestApp) =>
  (await t.store.users.listUsers()).map((u) => ({ email: u.email, admin: u.admin })).sort((a, b) => a.email.localeCompare(b.email))

async function refusal(res: Response, status: number, words: string) {
  expect(res.status).toBe(status)
  expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
  expect(await res.text()).toContain(words)
}

describe('/setup: the first admin (SPEC "First run")', () => {
  test('the link shows the form; submitting it makes an admin, signs them in and lands on /admin; /setup is gone after', async () => {
    const t = await createTestApp()
    const setupLink = await link(t)
    const { res, jar } = await setUp(t, setupLink)
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/admin')
    const session = cookiesFrom(res, jar)
    expect((await t.handle('/admin/users', { headers: { cookie: cookieHeader(session) } })).status).toBe(200)
    expect(await users(t)).toEqual([{ email: 'olga@example.com', admin: true }])
    expect((await t.store.users.findUserByEmail('olga@example.com'))!.emailVerified).toBe(true)
    // /account links to /admin for an admin.
    expect(await (await t.handle('/account', { headers: { cookie: cookieHeader(session) } })).text()).toContain('<a href="/admin">Administration</a>')
    // Once an admin exists, /setup is a path no route serves, whatever the token.
    for (const path of [pathOf(setupLink), '/setup']) {
      const again = await t.handle(path)
      expect(again.status).toBe(404)
      expect(await again.json()).toEqual({ error: 'not_found', error_description: 'no route for GET /setup' })
    }
    const replay = await postForm(t, '/setup', { token: tokenOf(setupLink), ...ADMIN, email: 'mallory@example.com' }, jar)
    expect(replay.status).toBe(404)
    expect(await users(t)).toEqual([{ email: 'olga@example.com', admin: true }])
  })

  test('a wrong, missing, replaced or expired token is refused (400, 410) and nothing is created', async () => {
    const t = await createTestApp()
    await refusal(await t.handle('/setup'), 400, 'This setup link is not valid.')
    const first = await link(t)
    await refusal(await t.handle('/setup?token=' + 'x'.repeat(43)), 400, 'This setup link is not valid.')
    // A new link (latchkey setup-link) invalidates the last one.
    const second = await link(t)
    await refusal(await t.handle(pathOf(first)), 400, 'This setup link is not valid.')
    // An hour is good; a millisecond more is not — for the page and for a form opened in time.
    const page = await t.handle(pathOf(second))
    const jar = cookiesFrom(page)
    const csrf = csrfFrom(await page.text())
    t.clock.advance(SETUP_TTL_MS)
    expect((await t.handle(pathOf(second))).status).toBe(200)
    t.clock.advance(1)
    await refusal(await t.handle(pathOf(second)), 410, 'This setup link has expired')
    await refusal(await postForm(t, '/setup', { csrf_token: csrf, token: tokenOf(second), ...ADMIN }, jar), 410, 'This setup link has expired')
    await refusal(await postForm(t, '/setup', { csrf_token: csrf, token: tokenOf(first), ...ADMIN }, jar), 400, 'This setup link is not valid.')
    expect(await users(t)).toEqual([])
  })

  test('a used token is refused (410) while the server again has no admin; the form needs its CSRF token', async () => {
    const t = await createTestApp()
    const setupLink = await link(t)
    const page = await t.handle(pathOf(setupLink))
    const jar = cookiesFrom(page)
    await refusal(await postForm(t, '/setup', { token: tokenOf(setupLink), ...ADMIN }, jar), 403, 'This form has expired')
    expect(await users(t)).toEqual([])
    expect((await setUp(t, setupLink)).res.status).toBe(303)
    // The admin is disabled from the CLI: no admin again, but the used link stays used.
    const olga = (await t.store.users.findUserByEmail('olga@example.com'))!
    await t.store.users.setDisabled(olga.id, true, t.clock.now())
    await refusal(await t.handle(pathOf(setupLink)), 410, 'This setup link was already used.')
    await refusal(await postForm(t, '/setup', { csrf_token: csrfFrom(await page.text()), token: tokenOf(setupLink), ...ADMIN, email: 'eve@example.com' }, jar), 410, 'already used')
    expect(await users(t)).toEqual([{ email: 'olga@example.com', admin: true }])
  })

  test('a form that fails validation keeps what was typed, and the token stays good', async () => {
    const t = await createTestApp()
    await addUser(t, 'bob@example.com', 'Bob Member')
    const setupLink = await link(t)
    const short = await setUp(t, setupLink, { ...ADMIN, password: 'short' })
    expect(short.res.status).toBe(400)
    const html = await short.res.text()
    expect(html).toContain('value="Olga Operator"')
    expect(html).toContain('value="olga@example.com"')
    expect(html).toContain('Password must be 8 to 256 characters.')
    const taken = await setUp(t, setupLink, { ...ADMIN, email: 'bob@example.com' })
    expect(taken.res.status).toBe(409)
    expect(await taken.res.text()).toContain('An account with this email already exists')
    expect(await users(t)).toEqual([{ email: 'bob@example.com', admin: false }])
    expect((await setUp(t, setupLink)).res.status).toBe(303)
    expect(await users(t)).toEqual([
      { email: 'bob@example.com', admin: false },
      { email: 'olga@example.com', admin: true },
    ])
  })

  test('two setups with one token at once: exactly one admin', async () => {
    const t = await createTestApp()
    const setupLink = await link(t)
    const forms = await Promise.all(
      ['olga@example.com', 'oscar@example.com', 'otto@example.com'].map(async (email) => {
        const page = await t.handle(pathOf(setupLink))
        return { jar: cookiesFrom(page), fields: { csrf_token: csrfFrom(await page.text()), token: tokenOf(setupLink), ...ADMIN, email } }
      }),
    )
    const answers = await Promise.all(forms.map((f) => postForm(t, '/setup', f.fields, f.jar)))
    const statuses = answers.map((a) => a.status).sort()
    expect(statuses[0]).toBe(303)
    // The losers were checked while the token was live: the store's claim refuses them (410), or they came after the admin (404).
    for (const status of statuses.slice(1)) expect([404, 410]).toContain(status)
    const admins = (await t.store.users.listUsers()).filter((u) => u.admin)
    expect(admins.length).toBe(1)
    expect((await t.store.users.listUsers()).length).toBe(1)
  })

  test('serve logs one setup link while no admin exists, and none after', async () => {
    const t = await createTestApp()
    const lines: string[] = []
    const log = createLogger('warn', (line) => lines.push(line))
    await offerSetupLink(t.store, t.config.issuer, t.clock.now(), log)
    log.flush()
    expect(lines.length).toBe(1)
    const logged = JSON.parse(lines[0]!) as { level: string; msg: string; setup_link: string }
    expect(logged.level).toBe('warn')
    expect(logged.msg).toBe('no admin yet: open the setup link to create the first admin (valid 1 hour, once; `latchkey setup-link` makes a new one)')
    expect((await t.handle(pathOf(logged.setup_link))).status).toBe(200)
    // Stored hashed: the token is nowhere in the database.
    expect(JSON.stringify(await t.rows('SELECT name, value FROM server_secrets'))).not.toContain(tokenOf(logged.setup_link))
    expect((await setUp(t, logged.setup_link)).res.status).toBe(303)
    await offerSetupLink(t.store, t.config.issuer, t.clock.now(), log)
    log.flush()
    expect(lines.length).toBe(1)
  })
})

/** "Create with a passkey instead": the page, the options (with the form's fields), the authenticator, the form posted to /setup/passkey. */
async function setUpWithPasskey(t: TestApp, setupLink: string, key: SoftAuthenticator, fields: Record<string, string> = { full_name: ADMIN.full_name, email: ADMIN.email }) {
  const page = await t.handle(pathOf(setupLink))
  expect(page.status).toBe(200)
  const jar = cookiesFrom(page)
  const form = { csrf_token: csrfFrom(await page.text()), token: tokenOf(setupLink), ...fields }
  const options = await postForm(t, '/setup/passkey/options', form, jar)
  if (options.status !== 200) return { res: options, jar, form }
  const credential = await key.register((await options.json()) as { challenge: string; user: { id: string } }, LOCAL)
  return { res: await postForm(t, '/setup/passkey', { ...form, credential: JSON.stringify(credential) }, jar), jar, form }
}

describe('/setup with a passkey instead of a password (SPEC "First run")', () => {
  test('the page offers it (same-origin scripts); the admin is made with the passkey and no password, signed in, and signs in with it later', async () => {
    const t = await createTestApp()
    const setupLink = await link(t)
    const res = await t.handle(pathOf(setupLink))
    const html = await res.text()
    expect(html).toContain('<div id="setup-passkey" hidden>')
    expect(html).toContain('<script src="/assets/webauthn.js" defer></script><script src="/assets/passkeys.js" defer></script>')
    expect(html).not.toMatch(/<script>|<script [^>]*>[^<]/)
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'")

    const key = await SoftAuthenticator.create()
    const { res: made, jar } = await setUpWithPasskey(t, setupLink, key)
    expect(made.status).toBe(303)
    expect(made.headers.get('location')).toBe('/admin')
    expect((await t.handle('/admin/users', { headers: { cookie: cookieHeader(cookiesFrom(made, jar)) } })).status).toBe(200)
    const admin = (await t.store.users.findUserByEmail('olga@example.com'))!
    expect(admin).toMatchObject({ fullName: 'Olga Operator', emailVerified: true, passwordHash: '' })
    expect(await users(t)).toEqual([{ email: 'olga@example.com', admin: true }])
    expect(await t.store.mfa.listPasskeys(admin.id)).toEqual([expect.objectContaining({ credentialId: key.id, userId: admin.id, name: 'Passkey' })])
    expect((await t.rows("SELECT kind FROM audit_events WHERE kind IN ('user.created', 'passkey.added') ORDER BY id")).map((r) => r.kind)).toEqual(['user.created', 'passkey.added'])
    // The token is spent and /setup gone; the passkey signs the admin in.
    expect((await t.handle(pathOf(setupLink))).status).toBe(404)
    expect((await postForm(t, '/setup/passkey/options', { token: tokenOf(setupLink) }, {})).status).toBe(404)
    t.clock.advance(60_000)
    const later = await passkeySignIn(t, key)
    expect(later.res.status).toBe(303)
    expect((await t.handle('/admin/users', { headers: { cookie: cookieHeader(later.jar) } })).status).toBe(200)
  })

  test('a wrong, used or expired token, a missing CSRF token, bad fields or a forged answer: refused, nothing created', async () => {
    const t = await createTestApp()
    const key = await SoftAuthenticator.create()
    const setupLink = await link(t)
    // A wrong token: refused before anything else is read.
    const first = await t.handle(pathOf(setupLink))
    const firstJar = cookiesFrom(first)
    const firstForm = { csrf_token: csrfFrom(await first.text()), full_name: 'Olga', email: 'olga@example.com' }
    await refusal(await postForm(t, '/setup/passkey/options', { ...firstForm, token: 'x'.repeat(43) }, firstJar), 400, 'This setup link is not valid.')
    await refusal(await postForm(t, '/setup/passkey', { ...firstForm, token: 'x'.repeat(43), credential: '{}' }, firstJar), 400, 'This setup link is not valid.')
    // Options: the name and email are checked first, and said as JSON for the page's script.
    const bad = await setUpWithPasskey(t, setupLink, key, { full_name: ' ', email: 'olga@example.com' })
    expect(bad.res.status).toBe(400)
    expect(await bad.res.json()).toEqual({ error: 'invalid_request', error_description: expect.stringMatching(/^[A-Z].*name.*\.$/i) })
    // Without the page's CSRF token: refused.
    const page = await t.handle(pathOf(setupLink))
    const jar = cookiesFrom(page)
    expect((await postForm(t, '/setup/passkey/options', { token: tokenOf(setupLink), full_name: 'Olga', email: 'olga@example.com' }, jar)).status).toBe(403)
    // An answer made for another challenge (another browser's): refused, the form keeps what was typed.
    const form = { csrf_token: csrfFrom(await page.text()), token: tokenOf(setupLink), full_name: 'Olga Operator', email: 'olga@example.com' }
    const options = (await (await postForm(t, '/setup/passkey/options', form, jar)).json()) as { challenge: string; user: { id: string } }
    const forged = await key.register({ ...options, challenge: 'AAAAAAAAAAAAAAAAAAAAAA' }, LOCAL)
    const refused = await postForm(t, '/setup/passkey', { ...form, credential: JSON.stringify(forged) }, jar)
    expect(refused.status).toBe(400)
    const again = await refused.text()
    expect(again).toContain('The passkey could not be verified. Try again.')
    expect(again).toContain('value="olga@example.com"')
    // Past the hour: expired, nothing made.
    const late = await link(t)
    t.clock.advance(SETUP_TTL_MS + 1)
    expect((await t.handle(pathOf(late))).status).toBe(410)
    await refusal(await postForm(t, '/setup/passkey', { ...form, token: tokenOf(late), credential: '{}' }, jar), 410, 'This setup link has expired')
    expect(await users(t)).toEqual([])
    expect(await t.rows('SELECT credential_id FROM passkeys')).toEqual([])
  })

  test('the same browser sets up again with a new link once the admin is disabled: another account, not a clash', async () => {
    const t = await createTestApp()
    const first = await setUpWithPasskey(t, await link(t), await SoftAuthenticator.create())
    expect(first.res.status).toBe(303)
    const olga = (await t.store.users.findUserByEmail('olga@example.com'))!
    await t.store.users.setDisabled(olga.id, true, t.clock.now())
    // The browser keeps its cookies (its CSRF secret): the new link still makes a new account.
    const again = await link(t)
    const page = await t.handle(pathOf(again), { headers: { cookie: cookieHeader(first.jar) } })
    const form = { csrf_token: csrfFrom(await page.text()), token: tokenOf(again), full_name: 'Oscar', email: 'oscar@example.com' }
    const options = (await (await postForm(t, '/setup/passkey/options', form, first.jar)).json()) as { challenge: string; user: { id: string } }
    const credential = await (await SoftAuthenticator.create()).register(options, LOCAL)
    expect((await postForm(t, '/setup/passkey', { ...form, credential: JSON.stringify(credential) }, first.jar)).status).toBe(303)
    expect(await users(t)).toEqual([{ email: 'olga@example.com', admin: true }, { email: 'oscar@example.com', admin: true }])
  })

  test('a passkey and a password setup at once with one token: exactly one admin, and no passkey of the loser', async () => {
    const t = await createTestApp()
    const setupLink = await link(t)
    const key = await SoftAuthenticator.create()
    // The passkey's form up to its last step, then both posted at once.
    const page = await t.handle(pathOf(setupLink))
    const jar = cookiesFrom(page)
    const form = { csrf_token: csrfFrom(await page.text()), token: tokenOf(setupLink), full_name: 'Pat Passkey', email: 'pat@example.com' }
    const options = (await (await postForm(t, '/setup/passkey/options', form, jar)).json()) as { challenge: string; user: { id: string } }
    const credential = JSON.stringify(await key.register(options, LOCAL))
    const other = await t.handle(pathOf(setupLink))
    const otherJar = cookiesFrom(other)
    const [a, b] = await Promise.all([
      postForm(t, '/setup/passkey', { ...form, credential }, jar),
      postForm(t, '/setup', { csrf_token: csrfFrom(await other.text()), token: tokenOf(setupLink), ...ADMIN }, otherJar),
    ])
    const statuses = [a.status, b.status].sort()
    expect(statuses[0]).toBe(303)
    expect([404, 410]).toContain(statuses[1]!)
    expect((await t.store.users.listUsers()).length).toBe(1)
    const passkeys = await t.rows('SELECT user_id FROM passkeys')
    expect(passkeys.length).toBe(a.status === 303 ? 1 : 0)
  })
})

describe('latchkey setup-link', () => {
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-setup-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const dbPath = join(dir, 'latchkey.sqlite')
  const cli = (args: string[]) => {
    const proc = Bun.spawnSync(['bun', join(import.meta.dir, '../../src/index.ts'), ...args], {
      env: { ...process.env, DATABASE_URL: dbPath, ISSUER: 'https://id.example.com', LOG_LEVEL: 'error' },
      stdin: 'ignore',
      cwd: dir,
    })
    return { code: proc.exitCode, out: proc.stdout.toString(), err: proc.stderr.toString() }
  }

  test('prints a new link (the last one stops working); refused once an admin exists', () => {
    expect(cli(['migrate']).code).toBe(0)
    const first = cli(['setup-link'])
    expect(first).toMatchObject({ code: 0, err: '' })
    expect(first.out).toMatch(/^https:\/\/id\.example\.com\/setup\?token=[A-Za-z0-9_-]{43}\n$/)
    const second = cli(['setup-link'])
    expect(second.out).not.toBe(first.out)
    const db = new Database(dbPath)
    const stored = db.query("SELECT value FROM server_secrets WHERE name = 'setup'").get() as { value: string }
    expect(stored.value).toBe(sha256(tokenOf(second.out.trim())))
    db.query("INSERT INTO users (id, email, full_name, password_hash, created_at, is_admin) VALUES ('u1', 'a@example.com', 'A', '', 0, 1)").run()
    db.close()
    const refused = cli(['setup-link'])
    expect(refused.code).toBe(2)
    expect(refused.out).toBe('')
    expect(refused.err).toStartWith('latchkey: this server already has an admin')
    expect(cli(['setup-link', 'extra']).code).toBe(2)
  }, 60_000) // four CLI processes: more than 5 s on a busy machine
})
