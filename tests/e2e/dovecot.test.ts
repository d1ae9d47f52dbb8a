/**
 * Issue 33 finding 6: a mail server validates the users' tokens with credentials of its own.
 * Real Dovecot 2.3 (Debian's dovecot-imapd) with `passdb { driver = oauth2 }` introspecting
 * (RFC 7662, `introspection_mode = post`) against the compiled binary, and an IMAP client that
 * logs in with SASL OAUTHBEARER (RFC 7628) over a raw socket.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { userInfo } from 'node:os'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { discover, obtainToken, registerClient, registerUser } from './flow'
import { freePort, startBinary, type RunningBinary } from './server'

setDefaultTimeout(60_000)

const DOVECOT = '/usr/sbin/dovecot'

let server: RunningBinary
let dir: string
let dovecot: Subprocess<'ignore', 'pipe', 'pipe'> | undefined
let imapPort: number

/** The whole configuration in a folder of its own: nothing of the system's /etc/dovecot is read. */
function writeConfig(rs: { client_id: string; client_secret: string | null }): string {
  const root = process.getuid?.() === 0
  const me = userInfo()
  mkdirSync(join(dir, 'run'))
  mkdirSync(join(dir, 'state'))
  mkdirSync(join(dir, 'mail'))
  // As root, Dovecot runs the mail process as nobody: it must reach the mail folder.
  chmodSync(dir, 0o755)
  chmodSync(join(dir, 'mail'), 0o777)
  const introspection = new URL('/api/oauth/introspect', server.direct)
  introspection.username = rs.client_id
  introspection.password = rs.client_secret!
  writeFileSync(
    join(dir, 'dovecot-oauth2.conf.ext'),
    [
      'introspection_mode = post',
      `introspection_url = ${introspection.href}`,
      // Latchkey's introspection names the user by `sub` (the user id); the SASL authzid must match it.
      'username_attribute = sub',
      'active_attribute = active',
      'active_value = true',
      'force_introspection = yes',
      '',
    ].join('\n'),
  )
  const lines = [
    `base_dir = ${dir}/run`,
    `state_dir = ${dir}/state`,
    `log_path = ${dir}/dovecot.log`,
    'protocols = imap',
    'listen = 127.0.0.1',
    'ssl = no',
    'auth_mechanisms = oauthbearer',
    'auth_verbose = yes',
    // No auth cache (the default, said aloud): a revoked token must be asked about again.
    'auth_cache_size = 0',
    // A refusal is answered at once (the default waits 2 s to slow guessing).
    'auth_failure_delay = 0',
    'service imap-login {',
    '  chroot =',
    `  inet_listener imap {\n    address = 127.0.0.1\n    port = ${imapPort}\n  }`,
    '  inet_listener imaps {\n    port = 0\n  }',
    '}',
    'passdb {',
    '  driver = oauth2',
    '  mechanisms = oauthbearer',
    `  args = ${dir}/dovecot-oauth2.conf.ext`,
    '}',
    'userdb {',
    '  driver = static',
    `  args = uid=${root ? 'nobody' : me.uid} gid=${root ? 'nogroup' : me.gid} home=${dir}/mail/%u`,
    '}',
    `mail_location = maildir:${dir}/mail/%u`,
    // Not root: every Dovecot service runs as this user.
    ...(root ? [] : [`default_internal_user = ${me.username}`, `default_login_user = ${me.username}`, `default_internal_group = ${me.username}`]),
    '',
  ]
  const conf = join(dir, 'dovecot.conf')
  writeFileSync(conf, lines.join('\n'))
  return conf
}

/** A tiny IMAP client on a raw Bun socket: reads lines, writes commands. */
async function imapSession() {
  let buffer = ''
  let wake: (() => void) | undefined
  const socket = await Bun.connect({
    hostname: '127.0.0.1',
    port: imapPort,
    socket: {
      data(_s, chunk) {
        buffer += chunk.toString()
        wake?.()
      },
      close() {
        wake?.()
      },
    },
  })
  /** The next whole line the server sends. */
  async function line(): Promise<string> {
    const deadline = Date.now() + 15_000
    for (;;) {
      const end = buffer.indexOf('\r\n')
      if (end >= 0) {
        const l = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        return l
      }
      if (Date.now() > deadline) throw new Error(`no line from Dovecot; had ${JSON.stringify(buffer)}`)
      await new Promise<void>((resolve) => {
        wake = resolve
        setTimeout(resolve, 200)
      })
    }
  }
  return { line, send: (text: string) => socket.write(text + '\r\n'), close: () => socket.end() }
}

/**
 * `AUTHENTICATE OAUTHBEARER` with the initial response (RFC 7628 §3.1; IMAP SASL-IR, RFC 4959):
 * base64 of `n,a=USER,^Aauth=Bearer TOKEN^A^A`. A failure first comes as a `+` challenge holding
 * the error JSON (§3.2.2), which the client answers with a lone ^A. The tagged answer line.
 */
async function authenticate(user: string, token: string): Promise<string> {
  const imap = await imapSession()
  try {
    const greeting = await imap.line()
    expect(greeting).toStartWith('* OK')
    expect(greeting).toContain('AUTH=OAUTHBEARER')
    const initial = Buffer.from(`n,a=${user},\x01auth=Bearer ${token}\x01\x01`).toString('base64')
    imap.send(`a1 AUTHENTICATE OAUTHBEARER ${initial}`)
    for (;;) {
      const l = await imap.line()
      if (l.startsWith('+')) imap.send(Buffer.from('\x01').toString('base64'))
      else if (l.startsWith('a1 ')) return l
    }
  } finally {
    imap.close()
  }
}

/** Waits until Dovecot greets on its port (or says why it could not start). */
async function dovecotReady(): Promise<void> {
  const deadline = Date.now() + 20_000
  for (;;) {
    if (dovecot!.exitCode !== null) throw new Error(`dovecot exited with ${dovecot!.exitCode}: ${await new Response(dovecot!.stderr).text()} ${logOf()}`)
    try {
      const imap = await imapSession()
      const greeting = await imap.line()
      imap.close()
      if (greeting.startsWith('* OK')) return
    } catch {}
    if (Date.now() > deadline) throw new Error(`dovecot did not greet on ${imapPort}: ${logOf()}`)
    await Bun.sleep(100)
  }
}

function logOf(): string {
  try {
    return readFileSync(join(dir, 'dovecot.log'), 'utf8')
  } catch {
    return '(no log)'
  }
}

let app: { client_id: string; client_secret: string | null }
let rs: { client_id: string; client_secret: string | null }
let userId: string

beforeAll(async () => {
  server = await startBinary()
  dir = mkdtempSync(join(tmpdir(), 'latchkey-dovecot-'))
  imapPort = await freePort()
  app = registerClient(server)
  // The mail server: a confidential client of its own, given no introspection right yet.
  const made = server.cli(['client', 'create', '--name', 'Dovecot', '--redirect-uri', 'https://mail.example/unused'])
  expect(made.code).toBe(0)
  rs = JSON.parse(made.out)
  userId = registerUser(server, 'mia@example.com').id
  dovecot = Bun.spawn([DOVECOT, '-F', '-c', writeConfig(rs)], { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  await dovecotReady()
})

afterAll(async () => {
  if (dovecot && dovecot.exitCode === null) {
    dovecot.kill('SIGTERM')
    await dovecot.exited
  }
  server?.cleanup()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

describe('Dovecot validates users’ tokens by introspection with credentials of its own (--introspect)', () => {
  test('NO before --introspect; OK after; NO once the token is revoked', async () => {
    const as = await discover(server)
    const tokens = await obtainToken(server, as, app, 'mia@example.com', 'openid email')
    // Before: the mail server may introspect only its own tokens, so the user's is {active: false}.
    expect(await authenticate(userId, tokens.access_token)).toStartWith('a1 NO')

    const granted = server.cli(['client', 'update', rs.client_id, '--introspect', app.client_id])
    expect(granted.code).toBe(0)
    expect(JSON.parse(granted.out).introspects).toEqual([app.client_id])
    const ok = await authenticate(userId, tokens.access_token)
    expect(ok).toStartWith('a1 OK')
    expect(ok).toContain('Logged in')
    // The token names another user than the one logging in: refused.
    expect(await authenticate('someone-else', tokens.access_token)).toStartWith('a1 NO')

    const revoked = await fetch(`${server.direct}/api/oauth/revoke`, {
      method: 'POST',
      headers: { authorization: `Basic ${btoa(`${app.client_id}:${app.client_secret}`)}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: tokens.refresh_token!, token_type_hint: 'refresh_token' }),
    })
    expect(revoked.status).toBe(200)
    expect(await authenticate(userId, tokens.access_token)).toStartWith('a1 NO')
    expect(logOf()).toContain('oauth2')
  })
})
