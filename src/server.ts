import type { Server } from 'bun'
import { createApp, createContext } from './app'
import type { Config } from './config'
import { openDb } from './db/client'
import { migrate } from './db/migrate'
import { purgeExpired } from './db/purge'
import { createLogger, type Logger } from './lib/log'

const PURGE_EVERY_MS = 60_000

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

  // listen() hands each route to Bun's native router with its own compiled handler.
  app.listen({
    hostname: config.host,
    port: config.port,
    development: false,
    reusePort: false, // a second server on the same port must fail, not share it
    // A little above SPEC's 1 MiB so the app itself answers 413 request_too_large in JSON.
    maxRequestBodySize: 2 * 1024 * 1024,
  })
  const server = app.server!

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
