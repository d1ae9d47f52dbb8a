/**
 * `bun run test`: the whole suite, on both engines, on a fresh Debian machine that has Bun.
 *
 * 1. Provisions what the tests need — Chromium (browser tests), PostgreSQL (the second engine),
 *    haproxy (several instances behind a load balancer), curl (the README's examples), openssl (the
 *    test mail server's certificate), dovecot-imapd (a mail server introspecting tokens), Python's
 *    Authlib (python3-authlib, python3-requests) and Go's x/oauth2 (golang-go,
 *    golang-golang-x-oauth2-dev): client libraries of other languages — from
 *    Debian's packages when running as root; otherwise it stops at once with the apt-get line.
 * 2. Runs `bun test` on SQLite, then again on a throwaway PostgreSQL cluster made by
 *    pg_virtualenv, with LATCHKEY_TEST_DATABASE_URL pointing at it.
 * 3. Names each failed test again with its error (a log read from its tail still says what
 *    failed and why), prints one summed line, `N passed, N failed`, and exits non-zero if
 *    anything failed.
 *
 * Arguments are passed to both runs (`bun run test tests/settings`).
 */
import { existsSync } from 'node:fs'

const args = process.argv.slice(2)
const PACKAGES: Array<[pkg: string, present: () => boolean]> = [
  ['chromium', () => existsSync('/usr/bin/chromium')],
  ['postgresql', () => Bun.which('pg_virtualenv') !== null && existsSync('/usr/lib/postgresql')],
  ['haproxy', () => Bun.which('haproxy') !== null || existsSync('/usr/sbin/haproxy')],
  ['curl', () => Bun.which('curl') !== null],
  ['openssl', () => Bun.which('openssl') !== null],
  ['dovecot-imapd', () => existsSync('/usr/sbin/dovecot') && existsSync('/usr/lib/dovecot/imap')],
  ['nginx', () => existsSync('/usr/sbin/nginx')],
  ['caddy', () => existsSync('/usr/bin/caddy')],
  // Python's Authlib (and the requests it uses) for the machines e2e tests, run with /usr/bin/python3.
  ['python3-authlib', () => existsSync('/usr/lib/python3/dist-packages/authlib')],
  ['python3-requests', () => existsSync('/usr/lib/python3/dist-packages/requests')],
  // Go's golang.org/x/oauth2 (clientcredentials), built offline from Debian's sources.
  ['golang-go', () => existsSync('/usr/bin/go')],
  ['golang-golang-x-oauth2-dev', () => existsSync('/usr/share/gocode/src/golang.org/x/oauth2/clientcredentials')],
]

function provision(): void {
  const missing = PACKAGES.filter(([, present]) => !present()).map(([pkg]) => pkg)
  if (missing.length === 0) return
  const line = `apt-get install -y ${missing.join(' ')}`
  if (process.getuid?.() !== 0) {
    console.error(`test: missing Debian packages; install them first:\n  sudo apt-get update && sudo ${line}`)
    process.exit(1)
  }
  console.log(`test: installing ${missing.join(' ')} from Debian`)
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  for (const cmd of [['apt-get', 'update', '-qq'], ['apt-get', 'install', '-y', '-qq', ...missing]]) {
    const r = Bun.spawnSync(cmd, { env, stdout: 'inherit', stderr: 'inherit' })
    if (r.exitCode !== 0) {
      console.error(`test: "${cmd.join(' ')}" failed`)
      process.exit(1)
    }
  }
}

interface Outcome {
  passed: number
  failed: number
  code: number
  /** Each failed test with the lines bun printed before it (its error), at most 10 of them. */
  failures: string[]
}

/** Runs one pass, streaming its output, and reads bun test's closing counts. */
async function pass(name: string, cmd: string[], env: Record<string, string | undefined>): Promise<Outcome> {
  console.log(`\ntest: ${name}`)
  const proc = Bun.spawn(cmd, { env, stdout: 'pipe', stderr: 'pipe' })
  let tail = ''
  // The last lines of stderr (where bun test writes results), to quote a failure's error again at
  // the very end: a log that is read from its tail must still name what failed, and why.
  let recent: string[] = []
  let partial = ''
  const failures: string[] = []
  let file = ''
  let summary = false // bun's closing list names the failures again, without their errors
  const watch = (text: string) => {
    const lines = (partial + text).split('\n')
    partial = lines.pop() ?? ''
    for (const line of lines) {
      recent.push(line)
      if (/^\S+\.test\.tsx?:$/.test(line)) file = line.slice(0, -1)
      if (recent.length > 80) recent = recent.slice(-80)
      if (/^\d+ tests? failed:$/.test(line.trim())) summary = true
      if (!summary && /^\(fail\) /.test(line) && failures.length < 10) {
        // From the test file's name or the previous test's result: this test's own output.
        const start = recent.findLastIndex((l, i) => i < recent.length - 1 && /^(\((pass|fail|skip)\) |\S+\.test\.tsx?:$)/.test(l))
        failures.push(`${file}\n${recent.slice(start + 1).join('\n')}`)
      }
    }
  }
  const pump = async (stream: ReadableStream<Uint8Array>, out: { write(text: string): unknown }, lines: boolean) => {
    const decoder = new TextDecoder()
    for await (const chunk of stream) {
      const text = decoder.decode(chunk, { stream: true })
      out.write(text)
      tail = (tail + text).slice(-200_000)
      if (lines) watch(text)
    }
  }
  await Promise.all([pump(proc.stdout, process.stdout, false), pump(proc.stderr, process.stderr, true), proc.exited])
  // The last summary: pg_virtualenv may print its server log after a failing run.
  const count = (word: string) => Number([...tail.matchAll(new RegExp(`^\\s*(\\d+) ${word}$`, 'gm'))].at(-1)?.[1] ?? 0)
  return { passed: count('pass'), failed: count('fail'), code: proc.exitCode ?? 1, failures }
}

provision()
const base = { ...process.env, LATCHKEY_TEST_DATABASE_URL: undefined }
const sqlite = await pass('SQLite', ['bun', 'test', ...args], base)
// pg_virtualenv makes a throwaway cluster (-t: in a temporary directory, even as root, so it
// never meets a cluster of the machine), runs the command with PG* variables set, drops it.
const url = 'postgres://${PGUSER}:${PGPASSWORD}@${PGHOST}:${PGPORT:-5432}/${PGDATABASE:-postgres}'
const quoted = args.map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(' ')
const postgres = await pass('PostgreSQL', ['pg_virtualenv', '-t', 'sh', '-c', `LATCHKEY_TEST_DATABASE_URL="${url}" exec bun test ${quoted}`], base)

for (const [name, outcome] of [['SQLite', sqlite], ['PostgreSQL', postgres]] as const) {
  for (const failure of outcome.failures) console.log(`\ntest: failed on ${name}, in ${failure}`)
}
const passed = sqlite.passed + postgres.passed
const failed = sqlite.failed + postgres.failed
console.log(`\ntest: SQLite ${sqlite.passed} passed, ${sqlite.failed} failed; PostgreSQL ${postgres.passed} passed, ${postgres.failed} failed`)
console.log(`${passed} passed, ${failed} failed`)
process.exit(sqlite.code !== 0 || postgres.code !== 0 || failed > 0 || passed === 0 ? 1 : 0)
