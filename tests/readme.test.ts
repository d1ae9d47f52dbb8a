import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { CookieClient, type RunningBinary, startBinary, binary } from './e2e/server'
import { copyFileSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

setDefaultTimeout(60_000)

/**
 * The README's examples, run as written: every ```sh block, in order, in a folder holding
 * `./latchkey` while it serves; the ```json or ```text block after one is its expected output
 * (random values — ids, secrets, tokens, times, ETags — compared by shape). Where an `export`
 * line shows a value from an earlier answer, a reader pastes the one their answer has at that
 * place: so does this harness — it finds the README's value in an answer the README showed
 * before (a JSON field, a URL parameter) and takes what the real answer has there, nothing else.
 * It also does the reader's browser step (open the authorize URL, sign in, Allow) over HTTP; the
 * only other change is the port (the README's localhost:3000 is the test server's).
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

/** The reader's browser: opens the README's authorize URL, signs in, allows; where it lands. */
async function browse(authorizeUrl: string): Promise<URL> {
  const browser = new CookieClient(server.url)
  let res = await browser.fetch(authorizeUrl)
  const login = await (await browser.fetch(res.headers.get('location')!)).text()
  const returnTo = /name="return_to" value="([^"]+)"/.exec(login)![1]!.replaceAll('&amp;', '&')
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(login)![1]!
  res = await browser.fetch('/login', { method: 'POST', body: new URLSearchParams({ ...user, csrf_token: csrf, return_to: returnTo }) })
  res = await browser.fetch(res.headers.get('location')!)
  if (res.status === 200) {
    const page = await res.text()
    const fields = new URLSearchParams()
    // The consent form's own fields ("Not you?" above it is a form of its own).
    for (const m of page.slice(page.indexOf('<form method="post" action="/oauth/authorize">')).matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/>/g)) fields.append(m[1]!, m[2]!.replaceAll('&amp;', '&'))
    fields.append('decision', 'allow')
    res = await browser.fetch('/oauth/authorize', { method: 'POST', body: fields })
  }
  return new URL(res.headers.get('location')!)
}

/** What the README showed (`shown`) beside what really came (`got`): answers and the browser's callback URL. */
type Answer = { shown: string; got: string }

/** Where `value` sits in what the README showed — a JSON field, a URL parameter — and what the real answer has there. */
function sameSpot(answer: Answer, value: string): string | undefined {
  const find = (shown: unknown, got: unknown): string | undefined => {
    if (shown === value) return typeof got === 'string' ? got : undefined
    if (typeof shown !== 'object' || shown === null || typeof got !== 'object' || got === null) return undefined
    for (const [key, inner] of Object.entries(shown)) {
      const found = find(inner, (got as Record<string, unknown>)[key])
      if (found !== undefined) return found
    }
    return undefined
  }
  try {
    return find(JSON.parse(answer.shown), JSON.parse(answer.got))
  } catch {}
  try {
    const shown = new URL(answer.shown.trim())
    const got = new URL(answer.got.trim())
    for (const [key, inner] of shown.searchParams) if (inner === value) return got.searchParams.get(key) ?? undefined
  } catch {}
  return undefined
}

const answers: Answer[] = []
/** The value a reader pastes into `export NAME=VALUE`: from the latest answer that showed VALUE. */
function pasted(name: string, value: string): string {
  for (const answer of answers.toReversed()) {
    const found = sameSpot(answer, value)
    if (found !== undefined) return found
  }
  throw new Error(`the README exports ${name}=${value}, a value no answer before it shows`)
}

const shellWord = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`

describe('README examples', () => {
  test('every sh block runs as written and prints what the README shows', async () => {
    const all = blocks(README)
    let ran = 0
    for (const [i, block] of all.entries()) {
      const next = all[i + 1]
      if (block.lang === 'text' && /^http:\/\/localhost:3000\/oauth\/authorize\?/.test(block.body)) {
        // The reader opens it, with their client id in place of $CLIENT_ID, and lands on the callback URL the README shows next.
        const landed = await browse(local(block.body.trim()).replace(/\$(\w+)/g, (_, name: string) => vars[name]!))
        const shown = new URL(local(next!.body.trim()))
        expect([landed.origin + landed.pathname, [...landed.searchParams.keys()], landed.searchParams.get('state'), landed.searchParams.get('iss')]).toEqual([
          shown.origin + shown.pathname,
          [...shown.searchParams.keys()],
          shown.searchParams.get('state'),
          shown.searchParams.get('iss'),
        ])
        answers.push({ shown: next!.body, got: landed.href })
        continue
      }
      if (block.lang !== 'sh') continue
      const lines: string[] = []
      for (const line of block.body.split('\n')) {
        const m = /^export (\w+)=(\S+)$/.exec(line)
        if (m) lines.push(`export ${m[1]}=${shellWord((vars[m[1]!] = pasted(m[1]!, m[2]!)))}`)
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
      if (next?.lang === 'json') {
        expect(JSON.parse(normalize(out))).toEqual(JSON.parse(normalize(local(next.body))))
        answers.push({ shown: next.body, got: out })
      } else if (next?.lang === 'text') {
        expect(normalize(out).trim()).toBe(normalize(local(next.body)).trim())
        answers.push({ shown: next.body, got: out })
      }
    }
    expect(ran).toBeGreaterThanOrEqual(10)
  })
})
