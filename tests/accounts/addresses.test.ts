import { afterAll, beforeEach, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ApplyError, planApply } from '../../src/admin/declarative'
import { normalizeEmail } from '../../src/accounts/users'
import { PASSWORD, addUser, cookieHeader, createTestApp, csrfFrom, postForm, signIn, type TestApp } from '../helpers'
import { SMTP, outbox, signUp } from './mail-flows'
import { csrfOf } from './mfa-flows'

// The CLI cases spawn processes.
setDefaultTimeout(30_000)

/**
 * SPEC "Addresses": a plain `local@domain` (RFC 5321 addr-spec) only. Each of these names one
 * mailbox to Latchkey's eyes and another (or several) to a mail server.
 */
const HOSTILE = ['x<attacker@evil.example>', 'victim@corp.example,x', '"victim"@corp.example', 'victim@corp.example;x', 'a(comment)@corp.example', 'victim@[192.0.2.1]']
const REFUSED = 'email address must be a plain address like name@example.com, without a name, brackets, commas, spaces or quotes'
const userCount = async (t: TestApp) => Number((await t.row('SELECT count(*) AS n FROM users'))!.n)

test('normalizeEmail refuses display names, brackets, commas, quotes and comments; plain addresses pass', () => {
  for (const raw of HOSTILE) expect(() => normalizeEmail(raw), raw).toThrow(REFUSED)
  for (const raw of ['Victim <victim@corp.example>', 'victim @corp.example', 'a@b@corp.example']) expect(() => normalizeEmail(raw), raw).toThrow('email address is not valid')
  for (const raw of ['ann@example.com', 'ann.lee+tag@mail.example.co.uk', "o'neil@example.com", 'ops@localhost', 'zoë@exämple.de'])
    expect(normalizeEmail(raw)).toBe(raw)
})

describe('each surface that takes an address', () => {
  let t: TestApp
  beforeEach(async () => {
    t = await createTestApp(SMTP)
  })

  test('sign-up: 400 with the reason, no account, no message', async () => {
    for (const email of HOSTILE) {
      const { res } = await signUp(t, email)
      expect(res.status).toBe(400)
      expect(await res.text()).toContain('Email address must be a plain address like name@example.com')
    }
    expect(await userCount(t)).toBe(0)
    expect(await outbox(t)).toEqual([])
  })

  test('change of email on /account: 400, nothing sent', async () => {
    await addUser(t)
    const jar = await signIn(t)
    for (const email of HOSTILE) {
      const res = await postForm(t, '/account/email', { csrf_token: await csrfOf(t, '/account', jar), email }, jar)
      expect(res.status).toBe(400)
      expect(await res.text()).toContain('The email address must be a plain address like name@example.com')
    }
    expect(await outbox(t)).toEqual([])
  })

  test('the admin pages: create and invite refuse it, nothing is made', async () => {
    const ann = await addUser(t)
    await t.store.users.setAdmin(ann.id, true)
    const jar = await signIn(t)
    const csrf = csrfFrom(await (await t.handle('/admin/users', { headers: { cookie: cookieHeader(jar) } })).text())
    for (const email of HOSTILE) {
      const created = await postForm(t, '/admin/users', { csrf_token: csrf, email, full_name: 'Victim', password: PASSWORD }, jar)
      expect(created.status).toBe(400)
      const invited = await postForm(t, '/admin/users/invite', { csrf_token: csrf, email, full_name: 'Victim' }, jar)
      expect(invited.status).toBe(400)
      expect(await invited.text()).toContain('mail address must be a plain address like name@example.com')
    }
    expect(await userCount(t)).toBe(1)
    expect(await outbox(t)).toEqual([])
  })

  test('an account made before addresses had to be plain still signs in; "Forgot password" mails nothing to it', async () => {
    await addUser(t, 'x<legacy@example.com>', 'Legacy')
    expect(Object.keys(await signIn(t, 'x<legacy@example.com>'))).toContain('lk_session')
    const jar = {}
    const csrf = await csrfOf(t, '/forgot-password', jar)
    // A refused address is answered at once, before anything is looked up or written.
    expect((await postForm(t, '/forgot-password', { csrf_token: csrf, email: 'x<legacy@example.com>' }, jar)).status).toBe(200)
    expect(await outbox(t)).toEqual([])
  })

  test('apply: each user and group member with such an address is an error, and nothing changes', async () => {
    const doc = { users: HOSTILE.map((email) => ({ email, full_name: 'Victim' })), groups: [{ name: 'family', members: [HOSTILE[0]] }] }
    const error = await planApply(t.store, t.config, doc, { prune: false, baseDir: '.', now: t.clock.now() }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ApplyError)
    expect((error as ApplyError).errors).toEqual([...HOSTILE.map((_, i) => `users[${i}].email: ${REFUSED}`), `groups[0].members[0]: ${REFUSED}`])
    expect(await userCount(t)).toBe(0)
  })
})

describe('the CLI (SQLite file)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-addresses-'))
  const dbPath = join(dir, 'latchkey.sqlite')
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const cli = (args: string[], stdin?: string) => {
    const proc = Bun.spawnSync(['bun', join(import.meta.dir, '../../src/index.ts'), ...args], {
      env: { ...process.env, DATABASE_URL: dbPath, LOG_LEVEL: 'error', ISSUER: 'http://localhost:3000' },
      stdin: stdin === undefined ? 'ignore' : new TextEncoder().encode(stdin),
      cwd: dir,
    })
    return { code: proc.exitCode, out: proc.stdout.toString(), err: proc.stderr.toString() }
  }

  test('user create and user invite refuse it with the reason; no user is made', () => {
    expect(cli(['migrate']).code).toBe(0)
    for (const email of HOSTILE.slice(0, 3)) {
      const created = cli(['user', 'create', '--email', email, '--name', 'Victim', '--password-stdin'], `${PASSWORD}\n`)
      expect(created.code).not.toBe(0)
      expect(created.err).toContain(REFUSED)
      const invited = cli(['user', 'invite', '--email', email, '--name', 'Victim', '--print-link'])
      expect(invited.code).not.toBe(0)
      expect(invited.err).toContain(REFUSED)
      expect(invited.out).toBe('')
    }
    expect(JSON.parse(cli(['user', 'list', '--json']).out)).toEqual([])
  })
})
