import { Elysia, type AnyElysia } from 'elysia'
import { errorAnswer } from './error-answer'
import { accountRoutes } from './accounts'
import type { Config } from './config'
import type { AppContext } from './context'
import type { Db } from './db/client'
import { Writer } from './db/writer'
import { ExternalWrites } from './db/external-writes'
import { SettingsCache } from './settings/cache'
import { systemClock, type Clock } from './lib/clock'
import { CORS_PREFLIGHT_HEADERS, NOSNIFF, json } from './lib/http'
import { silentLogger, type Logger } from './lib/log'
import { authorizeRoutes } from './oauth/authorize'
import { metadataRoutes } from './oauth/metadata'
import { revocationRoutes } from './oauth/revoke'
import { tokenRoutes } from './oauth/token'
import { AccessTokens } from './oauth/tokens'
import { userinfoRoutes } from './oauth/userinfo'
import { settingsRoutes } from './settings'
import { docsRoutes } from './docs'
import { serverSecret } from './db/server-secrets'
import { createRequestGuard } from './web/request-guard'
import appCss from './views/app.css' with { type: 'text' }

export interface AppDeps {
  db: Db
  config: Config
  clock?: Clock
  log?: Logger
}

export function createContext(deps: AppDeps): AppContext {
  const clock = deps.clock ?? systemClock
  const external = new ExternalWrites(deps.db.sqlite)
  return {
    db: deps.db,
    config: deps.config,
    clock,
    log: deps.log ?? silentLogger,
    writer: new Writer(deps.db.sqlite),
    external,
    tokens: new AccessTokens(deps.db, clock, deps.config.accessTokenTtl, external),
    settingsCache: new SettingsCache(external),
    csrfKey: serverSecret(deps.db, 'csrf', clock.now()),
  }
}

/** Builds the whole app from its context; no side effects, so tests run it in-process. */
export function createApp(ctx: AppContext) {
  // The API documentation describes this very app, built below.
  const self: { app?: AnyElysia } = {}
  let routeTable: Array<{ pattern: RegExp; method: string }> | undefined
  const allowedMethods = (path: string): string[] => {
    routeTable ??= app.routes
      .filter((r: { method: string }) => r.method !== 'OPTIONS')
      .map((r: { method: string; path: string }) => ({
        method: r.method,
        pattern: new RegExp('^' + r.path.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/:[^/]+/g, '[^/]+').replace(/\*/g, '.*') + '$'),
      }))
    return [...new Set(routeTable!.filter((r) => r.pattern.test(path)).map((r) => r.method))]
  }

  // standardHostname: false makes Elysia find the path after the host whatever its length (by
  // default it skips 11 characters, so `Host: x` turned /zzz/account into /account).
  const app = new Elysia({ name: 'latchkey', handler: { standardHostname: false } })
    .onRequest(createRequestGuard())
    // Destructured on purpose: Elysia reads a handler's parameters to decide what it computes
    // for every request; taking the whole context would make it parse headers, cookies and
    // the query for all of them (measured: userinfo 119k → 92k req/s).
    .onError({ as: 'global' }, function serializeError({ code, error, request, path }) {
      return errorAnswer(ctx, allowedMethods, { code, error, request, path })
    })
    .options('/api/*', () => new Response(null, { status: 204, headers: CORS_PREFLIGHT_HEADERS }))
    .use(docsRoutes(ctx.config, () => self.app!))
    .get('/healthz', function health() {
      try {
        ctx.db.sqlite.query('SELECT 1').get()
        return json({ status: 'ok' })
      } catch {
        return json({ status: 'unavailable' }, 503)
      }
    }, { detail: { tags: ['Operations'], summary: 'Health: 200 after a database round trip, 503 otherwise' } })
    .get('/assets/app.css', () => new Response(appCss, { headers: { 'content-type': 'text/css; charset=utf-8', 'cache-control': 'public, max-age=3600', ...NOSNIFF } }))
    .use(metadataRoutes(ctx))
    .use(accountRoutes(ctx))
    .use(authorizeRoutes(ctx))
    .use(tokenRoutes(ctx))
    .use(revocationRoutes(ctx))
    .use(userinfoRoutes(ctx))
    .use(settingsRoutes(ctx))
  self.app = app
  return app
}

export type App = ReturnType<typeof createApp>
