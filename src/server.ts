import type { Server } from 'bun'
import { DEVICE_COOKIE_SECONDS } from './accounts/device-cookie'
import { FORGET_AFTER_MS } from './accounts/throttle'
import type { App } from './app'
import { createContext } from './context'
import { healthAnswer } from './health'
import type { Config } from './config'
import { openStore } from './db/open'
import { offerSetupLink } from './admin/setup-link'
import { releaseJit } from './lib/jit'
import { createLogger, nextRequestId, requestIds, type Logger } from './lib/log'
import { MAIL_KEPT_MS, Outbox, smtpTransport } from './mail/outbox'
import { BackchannelLogout } from './oidc/backchannel-logout'
import { DYNAMIC_CLIENT_UNUSED_MS } from './oauth/dynamic-clients'
import { clientAddressFrom, peerAddressOf, setPeerResolver } from './web/client-address'
import { createRequestGuard, pathOf } from './web/request-guard'

const PURGE_EVERY_MS = 60_000
/** How soon what the database must be told at start (ISSUER, the setup link) is tried again when it did not answer. */
const RETRY_AFTER_START_MS = 5_000

/** The address to serve on is taken, or needs privileges this process lacks. */
export class ListenError extends Error {}

/** Why an address cannot be listened on; `{setting}` is the setting that names it. */
const LISTEN_FAILURES: Record<string, string> = {
  EADDRINUSE: 'the address is already in use (another process listens there; set {port})',
  EACCES: 'permission denied (ports below 1024 need privileges; set {port})',
  EADDRNOTAVAIL: 'no such address on this machine (set {host})',
}

/**
 * A refusal to listen as one clear ListenError naming the setting to change; any other error as
 * it is. The app's address is HOST and PORT; the metrics listener's, METRICS_ADDRESS.
 */
function listenError(error: unknown, address: { host: string; port: number }, settings: { host: string; port: string; of?: string }): unknown {
  const reason = LISTEN_FAILURES[(error as { code?: string } | undefined)?.code ?? '']
  if (!reason) return error
  const of = settings.of ? ` for ${settings.of}` : ''
  return new ListenError(`cannot listen on ${address.host}:${address.port}${of}: ${reason.replace('{port}', settings.port).replace('{host}', settings.host)}`)
}

const SLASH = 47
const HEALTHZ = '/healthz'

/**
 * A request that came without a Host (HTTP/1.0 — haproxy's health checks among them — or an empty
 * one) has its bare target as its URL, on which the router would skip a host's worth of
 * characters and answer another path. It is given ISSUER's origin instead, so it reaches exactly
 * its own path; the socket's request stays known for the client address.
 */
const socketRequests = new WeakMap<Request, Request>()

export interface RunningServer {
  server: Server<undefined>
  stop(): Promise<void>
  /** Whether the app's routes are made: by the first request that needs them. */
  readonly appMade: boolean
}

function issuerOriginOf(config: Config): string {
  return new URL(config.issuer).origin
}

/**
 * Opens and migrates the database, serves the app, purges periodically, drains on SIGTERM.
 * `purgeEveryMs`, `retryAfterStartMs` and `afterListening` are for tests, which watch the purge
 * run, and a start's writes meet a database that stopped answering, without waiting.
 */
export async function startServer(config: Config, log: Logger = createLogger(config.logLevel), { purgeEveryMs = PURGE_EVERY_MS, retryAfterStartMs = RETRY_AFTER_START_MS, afterListening = () => {} } = {}): Promise<RunningServer> {
  const { store, applied, startUpkeep } = await openStore(config, { serving: true })
  if (applied.length) log.info('migrated', { applied: applied.join(',') })
  const ctx = await createContext({ store, config, log })
  // prom-client is loaded only when /metrics is served.
  if (config.metricsAddress) await ctx.metrics.enable()
  // The app — its routes, and the modules they are made of — is loaded and made by the first
  // request that needs it: a server that is starting answers GET /healthz without it.
  let app: App | undefined
  let routeLabel: ((path: string) => string) | undefined
  let loading: Promise<App> | undefined
  const loadApp = () =>
    (loading ??= import('./app').then((m) => {
      app = m.createApp(ctx)
      routeLabel = m.routeLabels(app)
      releaseJit() // from here on the server runs what its requests run, again and again
      return app
    }))
  const origin = issuerOriginOf(config)
  const withIssuerOrigin = (request: Request) => {
    const rebuilt = new Request(origin + request.url, request)
    socketRequests.set(rebuilt, request)
    return rebuilt
  }

  // Every request but GET /healthz has loaded the app by the time it is counted.
  const routeOf = (path: string) => (path === HEALTHZ ? HEALTHZ : (routeLabel?.(path) ?? 'unmatched'))
  // GET /healthz is answered here, past the same request guard: the app's router is composed on
  // its first request (~5-10 ms), which a health check right after start need not wait for.
  const guard = createRequestGuard()
  const health = (request: Request) => guard({ request }) ?? healthAnswer(ctx)
  // Requests are timed for the metrics only when something can read them.
  const observing = config.metricsAddress !== null
  const SETTINGS_EVENTS = '/api/settings-events'
  /** What every answer is followed by: its metrics, the settings stream's timeout, the access log line. */
  const finish = (received: Request, request: Request, path: string, response: Response, started: number): Response => {
    if (observing) ctx.metrics.request(routeOf(path), request.method, response.status, (performance.now() - started) / 1000)
    // A settings stream is idle between events (a comment every 15 s): not Bun's 10 s idle timeout.
    if (path === SETTINGS_EVENTS && response.status === 200) server.timeout(received, 0)
    // The client address costs the server ~0.8 µs to look up (measured): only for a line that is written.
    if (log.logsRequests) {
      const ms = Math.round((performance.now() - started) * 100) / 100
      // The id an error answer gave the request, else a new one: no WeakMap entry per request.
      const id = requestIds.get(request) ?? nextRequestId()
      log.request(request.method, path, response.status, ms, id, clientAddressFrom(peerAddressOf(request), request, config.trustedProxies))
    }
    return response
  }
  // GET /metrics on a listener of its own: the app never serves it, and this one serves nothing
  // else. Listening before the app does: a server that answers /healthz serves its metrics too.
  let metricsServer: Server<undefined> | undefined
  if (config.metricsAddress)
    try {
      metricsServer = Bun.serve({
        hostname: config.metricsAddress.host,
        port: config.metricsAddress.port,
        async fetch(request) {
          if (new URL(request.url).pathname !== '/metrics' || request.method !== 'GET') return new Response('not found\n', { status: 404 })
          return new Response(await ctx.metrics.text(), { headers: { 'content-type': ctx.metrics.contentType } })
        },
      })
    } catch (error) {
      ctx.metrics.stop()
      await store.close()
      throw listenError(error, config.metricsAddress, { host: 'METRICS_ADDRESS', port: 'METRICS_ADDRESS', of: 'METRICS_ADDRESS' })
    }
  let server: Server<undefined>
  try {
    server = Bun.serve({
      hostname: config.host,
      port: config.port,
      // The app refuses bodies past their limit itself (1 MiB API, 64 KiB forms), with SPEC's
      // 413, before reading: declared ones before routing (request-guard), streamed ones as soon as
      // they pass it (readBodyText). Bun never buffers a body nobody reads (measured: 300 MB sent
      // to a route that does not read it, RSS +15 MB), so its own limit — an empty 413 — stays a
      // far backstop and every refusal is SPEC's.
      maxRequestBodySize: 1024 * 1024 * 1024,
      // Not async: a cached forward-auth check is answered without a promise (app.respond), and
      // Bun sends a Response returned as it is without waiting for a promise to settle.
      fetch(received) {
        const started = performance.now()
        const url = received.url
        const request = url.charCodeAt(0) === SLASH ? withIssuerOrigin(received) : received
        const path = pathOf(url)
        const response = path === HEALTHZ && request.method === 'GET' ? health(request) : app ? app.respond(request, path) : loadApp().then((loaded) => loaded.respond(request, path))
        return response instanceof Promise ? response.then((answered) => finish(received, request, path, answered, started)) : finish(received, request, path, response, started)
      },
    })
  } catch (error) {
    metricsServer?.stop(true)
    ctx.metrics.stop()
    await store.close()
    throw listenError(error, config, { host: 'HOST', port: 'PORT' })
  }
  // From here the server serves: a database that stops answering now means 503s until it is back
  // (SPEC "Several instances"), never an exit — what it must still be told waits for it.
  // Before anything is awaited: requests are served from here on, and their access-log lines name the peer.
  setPeerResolver((request) => server.requestIP(socketRequests.get(request) ?? request)?.address)
  afterListening()
  let stopped = false
  const pending = new Set<ReturnType<typeof setTimeout>>()
  const onceTheDatabaseAnswers = (what: string, task: () => Promise<void>) => {
    const attempt = () =>
      task().catch((error: unknown) => {
        if (stopped) return
        // The error's kind and code only: a driver's message may name the connection.
        const { name, code } = (error ?? {}) as { name?: string; code?: string }
        log.warn(`the database did not answer; ${what} is tried again in ${retryAfterStartMs / 1000} s`, { error: name ?? 'Error', code })
        const timer = setTimeout(() => {
          pending.delete(timer)
          void attempt()
        }, retryAfterStartMs)
        timer.unref()
        pending.add(timer)
      })
    return attempt()
  }
  // SPEC: the CLI's links (invitations, reset links) name the ISSUER the server last started with.
  await onceTheDatabaseAnswers('recording ISSUER', () => store.recordIssuer(config.issuer, ctx.clock.now()))
  startUpkeep()

  // Used codes are kept while a token issued from them could still be alive, so a replay can
  // still revoke it (RFC 6749 §4.1.2).
  const purge = setInterval(() => {
    store
      .purgeExpired(ctx.clock.now(), { usedCodes: config.accessTokenTtl * 1000, throttle: FORGET_AFTER_MS, refreshGrace: config.refreshTokenReuseGrace * 1000, retiredKeys: config.accessTokenTtl * 1000, mail: MAIL_KEPT_MS, sessionIdle: config.sessionIdleTtl * 1000, settingChanges: config.settingsChangesDays * 86_400_000, audit: config.auditDays * 86_400_000, devices: DEVICE_COOKIE_SECONDS * 1000 })
      // Nothing cached needs forgetting: an expired token is refused by its cached expiry.
      .then((removed) => {
        if (removed) log.debug('purged', { removed })
      })
      .catch(() => log.warn('purge failed'))
    // SPEC: dynamically registered apps are deleted after 30 days unused; so are metadata-document
    // clients, and at once those whose stale document no one ever used (anyone can make one).
    store.clients
      .deleteUnusedClients(ctx.clock.now() - DYNAMIC_CLIENT_UNUSED_MS, ctx.clock.now())
      .then((removed) => {
        if (removed) log.info('deleted unused clients that registered themselves', { removed })
      })
      .catch(() => log.warn('purge of unused dynamic clients failed'))
  }, purgeEveryMs)
  purge.unref()

  // The outbox's sender: requests only write rows, so a dead or slow mail server never holds one up.
  const smtp = config.smtpUrl === null ? undefined : new URL(config.smtpUrl)
  const outbox = smtp && new Outbox(store, ctx.clock, log, smtpTransport(config.smtpUrl!), config.mailFrom, [smtp.password, decodeURIComponent(smtp.password)])
  outbox?.start()
  // Back-channel logouts (OpenID Connect): with or without mail, every instance works the queue off.
  const backchannel = new BackchannelLogout(ctx)
  backchannel.start()

  log.info('listening', { url: `http://${server.hostname}:${server.port}`, issuer: config.issuer, engine: store.engine, mail: smtp ? `${smtp.protocol}//${smtp.host}` : 'off', metrics: metricsServer ? `http://${metricsServer.hostname}:${metricsServer.port}/metrics` : 'off' })
  if (!config.passkeys) log.warn('passkeys are off: WebAuthn needs a domain name in ISSUER, not an IP address', { issuer: config.issuer })
  // SPEC "First run": the last line a new operator reads.
  await onceTheDatabaseAnswers('the first-run setup link', () => offerSetupLink(store, config.issuer, ctx.clock.now(), log))

  let stopping: Promise<void> | undefined
  const stop = () =>
    (stopping ??= (async () => {
      clearInterval(purge)
      stopped = true
      for (const timer of pending) clearTimeout(timer)
      ctx.settingsHub.closeAll() // open streams end with `event: end` (reason "shutdown") and reconnect elsewhere
      metricsServer?.stop(true)
      ctx.metrics.stop()
      await server.stop(false) // finish in-flight requests, accept no new ones
      await outbox?.stop()
      await backchannel.stop()
      await ctx.sessionActivity.stop()
      await ctx.audit.flush()
      await store.close()
      log.info('stopped')
      await log.drain()
    })())
  return {
    server,
    stop,
    get appMade() {
      return app !== undefined
    },
  }
}
