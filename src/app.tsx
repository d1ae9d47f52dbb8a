/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import { Elysia, ValidationError, type AnyElysia } from 'elysia'
import { accountRoutes } from './accounts'
import type { Config } from './config'
import type { AppContext } from './context'
import type { Db } from './db/client'
import { Writer } from './db/writer'
import { ExternalWrites } from './db/external-writes'
import { SettingsCache } from './settings/cache'
import { systemClock, type Clock } from './lib/clock'
import { ApiError, InvalidRequest, MethodNotAllowed, NotFound, PageError, ServerError } from './lib/errors'
import { CORS_PREFLIGHT_HEADERS, errorResponse, json } from './lib/http'
import { silentLogger, requestIdOf, type Logger } from './lib/log'
import { redact } from './lib/redact'
import { authorizeRoutes } from './oauth/authorize'
import { AuthorizationRedirect } from './oauth/authorize/request'
import { metadataRoutes } from './oauth/metadata'
import { tokenRoutes } from './oauth/token'
import { AccessTokens } from './oauth/tokens'
import { userinfoRoutes } from './oauth/userinfo'
import { settingsRoutes } from './settings'
import { docsRoutes } from './docs'
import { ErrorPage } from './views/error-page'
import { htmlPage, seeOther } from './views/page'
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
  }
}

/** "grant_type is required" rather than a TypeBox dump. */
function describeValidation(error: ValidationError): string {
  const first = error.valueError
  const name = first?.path?.replace(/^\//, '').replace(/\//g, '.')
  if (!name) return 'request is malformed'
  return first?.value === undefined ? `${name} is required` : `${name} is invalid`
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

  const app = new Elysia({ name: 'latchkey' })
    .onError({ as: 'global' }, function serializeError({ code, error, request, path }) {
      const cause = code === 'PARSE' && (error as Error).cause instanceof Error ? ((error as Error).cause as Error) : error
      const isApi = path.startsWith('/api/') || path.startsWith('/.well-known/')
      const page = (status: number, title: string, detail: string) =>
        htmlPage(<ErrorPage title={title} detail={detail} />, { status })

      if (cause instanceof AuthorizationRedirect) return seeOther(cause.location)
      if (cause instanceof ApiError) return errorResponse(cause)
      if (cause instanceof PageError) return page(cause.status, cause.title, cause.detail)
      if (code === 'VALIDATION' || code === 'PARSE') {
        const description = code === 'VALIDATION' ? describeValidation(error as ValidationError) : 'request body is malformed'
        return isApi ? errorResponse(new InvalidRequest(description)) : page(400, 'Bad request', description)
      }
      if (code === 'NOT_FOUND') {
        const allowed = allowedMethods(path)
        if (allowed.length > 0)
          return errorResponse(new MethodNotAllowed(`${request.method} is not allowed here`, { allow: allowed.join(', ') }))
        return errorResponse(new NotFound(`no route for ${request.method} ${path}`))
      }
      const e = cause as { name?: string; code?: unknown; message?: string }
      const requestId = requestIdOf(request)
      ctx.log.error('unhandled error', {
        request_id: requestId,
        error_type: e?.name ?? typeof cause,
        error_code: typeof e?.code === 'string' ? e.code : undefined,
        error_message: redact(String(e?.message ?? '')),
      })
      const fault = new ServerError(`an unexpected error occurred; it was logged with request id ${requestId}`)
      return isApi ? errorResponse(fault) : page(500, 'Something went wrong', `An unexpected error occurred; it was logged with request id ${requestId}.`)
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
    .get('/assets/app.css', () => new Response(appCss, { headers: { 'content-type': 'text/css; charset=utf-8', 'cache-control': 'public, max-age=3600' } }))
    .use(metadataRoutes(ctx))
    .use(accountRoutes(ctx))
    .use(authorizeRoutes(ctx))
    .use(tokenRoutes(ctx))
    .use(userinfoRoutes(ctx))
    .use(settingsRoutes(ctx))
  self.app = app
  return app
}

export type App = ReturnType<typeof createApp>
