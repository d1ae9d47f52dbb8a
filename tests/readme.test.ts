import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { CookieClient, type RunningBinary, startBinary, binary } from './e2e/server'
import { copyFileSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

setDefaultTimeout(60_000)

/**
 * The README's examples, run as written: every ```sh block, in order, in a folder holding
 * `./latchkey` while it serves; the ```json or ```text block after one is its expected output
 * (random values — ids, secrets, tokens, times, ETags — compared by shape). A reader copies
 * values by hand into the `export` lines; this harness puts the real ones there, and does the
 * reader's browser step (sign in, Allow) over HTTP.
 */
type Block = { lang: string; body: string }

function blocks(markdown: string): Block[] {
  return [...markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1]!, body: m[2]! }))
}

function normalize(text: string): string {
  return text
    .replace(/lk_at_[0-9a-z]+\.[A-Za-z0-9_-]{43}/g, 'lk_at_<token>')
    .replace(/lk_rt_[0-9a-z]+\.[A-Za-z0-9_-]{65}/g, 'lk_rt_<token>')
    .replace(/lk_cs_[A-Za-z0-9_-]{43}/g, 'lk_cs_<secret>')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
    .replace(/\b[0-9a-f]{24}\b/g, '<client_id>')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, '<time>')
}

const README = await Bun.file(join(import.meta.dir, '../README.md')).text()
let server: RunningBinary
const vars: Record<string, string> = {}
let user = { email: '', password: '' }

beforeAll(async () => {
  // Serve from the folder the examples run in, on "localhost" as the README says (another port).
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-readme-'))
  copyFileSync(await binary(), join(dir, 'latchkey'))
  server = await startBinary({}, dir)
})
afterAll(() => server?.cleanup())

const local = (s: string) => s.replaceAll('http://localhost:3000', server.url).replaceAll('http%3A%2F%2Flocalhost%3A3000', encodeURIComponent(server.url))

async function authorizeAsReader(): Promise<string> {
  const authorize = blocks(README).find((b) => b.lang === 'text' && b.body.includes('/oauth/authorize?'))!
  const url = local(authorize.body.trim()).replace('$CLIENT_ID', vars.CLIENT_ID!)
  const browser = new CookieClient(server.url)
  let res = await browser.fetch(url)
  const login = await (await browser.fetch(res.headers.get('location')!)).text()
  const returnTo = /name="return_to" value="([^"]+)"/.exec(login)![1]!.replaceAll('&amp;', '&')
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(login)![1]!
  res = await browser.fetch('/login', { method: 'POST', body: new URLSearchParams({ ...user, csrf_token: csrf, return_to: returnTo }) })
  res = await browser.fetch(res.headers.get('location')!)
  if (res.status === 200) {
    const page = await res.text()
    const fields = new URLSearchParams()
    for (const m of page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/>/g)) fields.append(m[1]!, m[2]!.replaceAll('&amp;', '&'))
    fields.append('decision', 'allow')
    res = await browser.fetch('/oauth/authorize', { method: 'POST', body: fields })
  }
  const callback = new URL(res.headers.get('location')!)
  expect(callback.searchParams.get('state')).toBe('af0ifjsldkj')
  return callback.searchParams.get('code')!
}

async function freshTokens(): Promise<{ access_token: string; refresh_token: string }> {
  const res = await fetch(`${server.url}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'authorization_code', code: await authorizeAsReader(), client_id: vars.CLIENT_ID, client_secret: vars.CLIENT_SECRET, redirect_uri: 'http://localhost:8080/callback' }),
  })
  return (await res.json()) as { access_token: string; refresh_token: string }
}

/** What the reader pastes into each `export` line. */
async function fill(name: string): Promise<string> {
  if (name === 'CODE') return authorizeAsReader()
  if (name === 'ACCESS_TOKEN') return (await freshTokens()).access_token
  if (name === 'REFRESH_TOKEN') return (await freshTokens()).refresh_token
  if (vars[name] === undefined) throw new Error(`README exports ${name} before the harness knows it`)
  return vars[name]!
}

describe('README examples', () => {
  test('every sh block runs as written and prints what the README shows', async () => {
    const all = blocks(README)
    let ran = 0
    for (const [i, block] of all.entries()) {
      if (block.lang !== 'sh') continue
      const lines: string[] = []
      for (const line of block.body.split('\n')) {
        const m = /^export (\w+)=/.exec(line)
        if (m) vars[m[1]!] = await fill(m[1]!)
        else lines.push(local(line))
      }
      const email = /--email (\S+)/.exec(block.body)
      const password = /^echo '([^']+)' \|/m.exec(block.body)
      if (email && password) user = { email: email[1]!, password: password[1]! }
      const proc = Bun.spawnSync(['bash', '-euo', 'pipefail', '-c', lines.join('\n')], {
        cwd: server.dir,
        env: { PATH: process.env.PATH!, HOME: server.dir, PORT: new URL(server.url).port, DATABASE_URL: server.databaseUrl, ...vars },
      })
      const out = proc.stdout.toString()
      expect({ block: block.body, exit: proc.exitCode, err: proc.stderr.toString() }).toEqual({ block: block.body, exit: 0, err: '' })
      ran++
      const next = all[i + 1]
      if (next?.lang === 'json') {
        expect(JSON.parse(normalize(out))).toEqual(JSON.parse(normalize(local(next.body))))
        const created = JSON.parse(out)
        if (created.client_secret) Object.assign(vars, { CLIENT_ID: created.client_id, CLIENT_SECRET: created.client_secret })
      } else if (next?.lang === 'text') {
        expect(normalize(out).trim()).toBe(normalize(local(next.body)).trim())
      }
    }
    expect(ran).toBeGreaterThanOrEqual(10)
  })
})
