import type { Server } from 'bun'
import { createApp, createContext } from './app'
import type { Config } from './config'
import { openDb } from './db/client'
import { migrate } from './db/migrate'
import { purgeExpired } from './db/purge'
import { createLogger, nextRequestId, requestIds, type Logger } from './lib/log'

const PURGE_EVERY_MS = 60_000

function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  if (start < 0) return '/'
  const q = url.indexOf('?', start)
  return q < 0 ? url.slice(start) : url.slice(start, q)
}

export interface RunningServer {
  server: Server<undefined>
  stop(): Promise<void>
}

/** Opens and migrates the database, serves the app, purges periodically, drains on SIGTERM. */
export function startServer(config: Config, log: Logger = createLogger(config.logLevel)): RunningServer {
  const db = openDb(config.databaseUrl)
  const { applied } = migrate(db.sqlite)
  if (applied.length) log.info('migrated', { applied: applied.join(',') })
  const ctx = createContext({ db, config, log })
  const app = createApp(ctx)

  const server = Bun.serve({
    hostname: config.host,
    port: config.port,
    // The app refuses bodies over 1 MiB itself, with SPEC's JSON 413, reading no further
    // (readBodyText); Bun's own limit, answered with an empty 413, is only a far backstop.
    maxRequestBodySize: 1024 * 1024 * 1024,
    async fetch(request) {
      const started = performance.now()
      const id = nextRequestId()
      requestIds.set(request, id)
      const response = await app.handle(request)
      log.request(request.method, pathOf(request.url), response.status, Math.round((performance.now() - started) * 100) / 100, id)
      return response
    },
  })

  const purge = setInterval(() => {
    ctx.writer
      .write(() => purgeExpired(db, ctx.clock.now(), config.accessTokenTtl))
      .then((removed) => {
        ctx.tokens.forget()
        if (removed) log.debug('purged', { removed })
      })
      .catch(() => log.warn('purge failed'))
  }, PURGE_EVERY_MS)
  purge.unref()

  log.info('listening', { url: `http://${server.hostname}:${server.port}`, issuer: config.issuer, database: config.databaseUrl })

  let stopping: Promise<void> | undefined
  const stop = () =>
    (stopping ??= (async () => {
      clearInterval(purge)
      await server.stop(false) // finish in-flight requests, accept no new ones
      ctx.writer.flush()
      if (config.databaseUrl !== ':memory:') db.sqlite.run('PRAGMA wal_checkpoint(TRUNCATE)')
      db.sqlite.close()
      log.info('stopped')
      log.flush()
    })())
  return { server, stop }
}
