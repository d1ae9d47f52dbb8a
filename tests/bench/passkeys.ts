/**
 * The passkey sign-in case of `bun run bench`: what a browser does after "Sign in with a
 * passkey" — POST /login/passkey/options, the authenticator signs, POST /login/passkey — by
 * workers that each hold a passkey of their own (one counter each, as one device would). wrk
 * cannot sign a challenge, so this loop is in Bun; the server's CPU per sign-in is read from
 * /proc as for the other cases (the signing happens in this process, not the server's).
 */
import { SoftAuthenticator } from '../soft-authenticator'
import type { Row, Server } from './harness'

const WORKERS = 8

const cookieOf = (res: Response, name: string) => res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`))?.split(';')[0]
const csrfIn = (html: string) => /name="csrf_token" value="([^"]+)"/.exec(html)![1]!

interface Browser {
  key: SoftAuthenticator
  cookie: string
  csrf: string
}

/** A user with one passkey per worker (added through /account as a browser would), and each worker's anonymous browser. */
async function prepare(server: Server, origin: string, session: string): Promise<Browser[]> {
  const ceremony = { origin, rpId: new URL(origin).hostname }
  const account = await fetch(`${server.url}/account`, { headers: { cookie: session } })
  const accountCsrf = csrfIn(await account.text())
  const form = { cookie: session, 'content-type': 'application/x-www-form-urlencoded' }
  const browsers: Browser[] = []
  for (let i = 0; i < WORKERS; i++) {
    const key = await SoftAuthenticator.create()
    const options = await (await fetch(`${server.url}/account/passkeys/options`, { method: 'POST', headers: form, body: new URLSearchParams({ csrf_token: accountCsrf }) })).json()
    const credential = JSON.stringify(await key.register(options, ceremony))
    const added = await fetch(`${server.url}/account/passkeys`, { method: 'POST', redirect: 'manual', headers: form, body: new URLSearchParams({ csrf_token: accountCsrf, name: `bench ${i}`, credential }) })
    if (added.status !== 303) throw new Error(`adding a passkey failed: ${added.status} ${await added.text()}`)
    const login = await fetch(`${server.url}/login`)
    browsers.push({ key, cookie: cookieOf(login, 'lk_csrf')!, csrf: csrfIn(await login.text()) })
  }
  return browsers
}

async function signInOnce(server: Server, origin: string, b: Browser): Promise<void> {
  const headers = { cookie: b.cookie, 'content-type': 'application/x-www-form-urlencoded' }
  const options = await fetch(`${server.url}/login/passkey/options`, { method: 'POST', headers, body: new URLSearchParams({ csrf_token: b.csrf }) })
  if (options.status !== 200) throw new Error(`passkey options: ${options.status}`)
  const credential = JSON.stringify(await b.key.assert(await options.json(), { origin, rpId: new URL(origin).hostname }))
  const res = await fetch(`${server.url}/login/passkey`, { method: 'POST', redirect: 'manual', headers, body: new URLSearchParams({ csrf_token: b.csrf, credential }) })
  if (res.status !== 303 || !cookieOf(res, 'lk_session')) throw new Error(`passkey sign-in: ${res.status}`)
}

/** Sign-ins for `seconds` by every worker; their latencies. */
async function run(server: Server, origin: string, browsers: Browser[], seconds: number): Promise<number[]> {
  const until = performance.now() + seconds * 1000
  const latencies: number[] = []
  await Promise.all(
    browsers.map(async (b) => {
      while (performance.now() < until) {
        const started = performance.now()
        await signInOnce(server, origin, b)
        latencies.push(performance.now() - started)
      }
    }),
  )
  return latencies
}

/** The case's row: sign-ins per second, their p50/p99, and the server's CPU per sign-in. */
export async function measurePasskeySignIn(
  name: string,
  server: Server,
  origin: string,
  session: string,
  timing: { warmup: number; seconds: number; cpuTicks(pid: number): number; rssMb(pid: number): number; clkTck: number },
): Promise<Row> {
  const browsers = await prepare(server, origin, session)
  await run(server, origin, browsers, timing.warmup)
  const pid = server.proc.pid
  const ticks0 = timing.cpuTicks(pid)
  const started = performance.now()
  const latencies = (await run(server, origin, browsers, timing.seconds)).sort((a, b) => a - b)
  const elapsed = (performance.now() - started) / 1000
  const cpuUs = ((timing.cpuTicks(pid) - ticks0) * 1_000_000) / timing.clkTck
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!
  console.error(`  ${name}: ${Math.round(latencies.length / elapsed)} sign-ins/s`)
  return {
    name,
    requests: latencies.length,
    rps: latencies.length / elapsed,
    p50ms: at(0.5),
    p99ms: at(0.99),
    non2xx: 0,
    socketErrors: 0,
    cpuUsPerReq: cpuUs / latencies.length,
    rssMb: timing.rssMb(pid),
    diskReadKbPerReq: 0,
    diskWriteKbPerReq: 0,
  }
}
