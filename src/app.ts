import { Elysia, type AnyElysia } from 'elysia'
import { errorAnswer } from './error-answer'
import { accountRoutes } from './accounts'
import type { AppContext } from './context'
import { CORS_PREFLIGHT_HEADERS, NOSNIFF } from './lib/http'
import { healthAnswer } from './health'
import { authorizeRoutes } from './oauth/authorize'
import { metadataRoutes } from './oauth/metadata'
import { revocationRoutes } from './oauth/revoke'
import { introspectionRoutes } from './oauth/introspect'
import { parRoutes } from './oauth/par'
import { deviceAuthorizationRoutes } from './oauth/device/authorization'
import { devicePages } from './oauth/device/pages'
import { registrationRoutes } from './oauth/registration'
import { tokenRoutes } from './oauth/token'
import { tokenFastPath } from './oauth/token/fast-path'
import { settingsStreamRoutes } from './settings/stream'
import { discoveryRoutes } from './oidc/discovery'
import { endSessionRoutes } from './oidc/end-session'
import { userinfoRoutes } from './oauth/userinfo'
import { settingsRoutes } from './settings'
import { docsRoutes } from './docs'
import { adminRoutes } from './admin'
import { setupRoutes } from './admin/setup'
import { AUTH_REQUEST_PATH, FORWARD_AUTH_PATH, authRequest, authzRoutes, forwardAuth } from './authz'
import { providerRoutes } from './providers'
import { languageRoutes } from './i18n/routes'
import { createRequestGuard, pathOf } from './web/request-guard'
import { brandFavicon, brandRoutes } from './brand/routes'
import { withBrand } from './brand'
import { clientLogoRoutes } from './oauth/client-logo'
import faviconSvg from './views/favicon.svg' with { type: 'text' }
import passkeysJs from './views/scripts/passkeys.js' with { type: 'text' }
import copyJs from './views/scripts/copy.js' with { type: 'text' }
// SimpleWebAuthn's browser half, served from our own origin (script-src 'self').
import webauthnJs from '../node_modules/@simplewebauthn/browser/dist/bundle/index.umd.min.js' with { type: 'text' }

const asset = (body: string, type: string) =>
  new Response(body, { headers: { 'content-type': `${type}; charset=utf-8`, 'cache-control': 'public, max-age=3600', ...NOSNIFF } })

/**
 * The favicon, same-origin; /favicon.ico (what browsers ask for unprompted) answers the same SVG.
 * An SVG is a document: its own CSP lets only its inline style (the dark variant) run.
 */
const favicon = () =>
  new Response(faviconSvg, {
    headers: {
      'content-type': 'image/svg+xml',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
      'cache-control': 'public, max-age=86400',
      ...NOSNIFF,
    },
  })

const patternOf = (path: string) => new RegExp('^' + path.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/:[^/]+/g, '[^/]+').replace(/\*/g, '.*') + '$')

/**
 * The route a path is served by, as its pattern (`/api/settings/:key`): the metrics' label, so
 * their number stays that of the routes, whatever paths clients send. Remembered per path
 * (bounded); a path no route serves is `unmatched`.
 */
export function routeLabels(app: AnyElysia): (path: string) => string {
  let table: Array<{ pattern: RegExp; path: string }> | undefined
  const known = new Map<string, string>()
  return (path) => {
    const hit = known.get(path)
    if (hit !== undefined) return hit
    table ??= app.routes.filter((r: { method: string }) => r.method !== 'OPTIONS').map((r: { path: string }) => ({ path: r.path, pattern: patternOf(r.path) }))
    // Exact paths before patterns, so /api/settings-events is not taken for /api/settings/:key.
    const label = table!.find((r) => r.path === path)?.path ?? table!.find((r) => r.pattern.test(path))?.path ?? 'unmatched'
    if (known.size >= 4096) known.clear()
    known.set(path, label)
    return label
  }
}

/**
 * Builds the whole app from its context; no side effects, so tests run it in-process. The server
 * imports this module on the first request that needs the app (src/server.ts).
 */
export function createApp(ctx: AppContext) {
  // The API documentation describes this very app, built below.
  const self: { app?: AnyElysia } = {}
  let routeTable: Array<{ pattern: RegExp; method: string }> | undefined
  const allowedMethods = (path: string): string[] => {
    routeTable ??= app.routes
      .filter((r: { method: string }) => r.method !== 'OPTIONS')
      .map((r: { method: string; path: string }) => ({
        method: r.method,
        pattern: patternOf(r.path),
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
    .get('/healthz', () => healthAnswer(ctx), { detail: { tags: ['Operations'], summary: 'Health: 200 after a database round trip, 503 otherwise' } })
    .use(brandRoutes(ctx.brand))
    .use(clientLogoRoutes(ctx))
    .get('/favicon.svg', favicon)
    .get('/favicon.ico', () => brandFavicon(ctx.brand) ?? favicon())
    .get('/assets/webauthn.js', () => asset(webauthnJs, 'text/javascript'))
    .get('/assets/passkeys.js', () => asset(passkeysJs, 'text/javascript'))
    .get('/assets/copy.js', () => asset(copyJs, 'text/javascript'))
    .use(metadataRoutes(ctx))
    .use(discoveryRoutes(ctx))
    .use(endSessionRoutes(ctx))
    .use(accountRoutes(ctx))
    .use(adminRoutes(ctx))
    .use(setupRoutes(ctx))
    .use(authorizeRoutes(ctx))
    .use(tokenRoutes(ctx))
    .use(revocationRoutes(ctx))
    .use(introspectionRoutes(ctx))
    .use(parRoutes(ctx))
    .use(deviceAuthorizationRoutes(ctx))
    .use(devicePages(ctx))
    .use(registrationRoutes(ctx))
    .use(userinfoRoutes(ctx))
    .use(settingsRoutes(ctx))
    .use(settingsStreamRoutes(ctx))
    .use(authzRoutes(ctx))
    .use(providerRoutes(ctx))
    .use(languageRoutes(ctx))
  self.app = app
  // Pages and error pages are made with this app's brand (src/brand). /api/* answers JSON (its one
  // page, forward-auth's "Access denied", takes the brand itself): outside the brand's async
  // context it keeps its speed (measured in-process: userinfo 6.0 → 6.4 CPU µs/req inside it).
  const handle = app.handle
  const fastPath = forwardAuthFastPath(ctx, allowedMethods)
  const tokenPath = tokenFastPath(ctx, allowedMethods, handle)
  /** The answer to a request; a cached forward-auth check's without a promise (the server takes either). */
  const respond = (request: Request, path = pathOf(request.url)): Response | Promise<Response> =>
    fastPath(request) ?? tokenPath(request, path) ?? (path.startsWith('/api/') ? handle(request) : withBrand(ctx.brand, () => handle(request)))
  app.handle = (request: Request) => Promise.resolve(respond(request))
  return Object.assign(app, { respond })
}

/**
 * The forward-auth checks (GET /api/authz/forward-auth and /auth-request) answered before
 * Elysia: a proxy asks one before every request to every protected app (issue 35: ≥ 0.5 × a bare
 * Bun.serve), and Elysia's routing, context and response mapping were ~4 µs of a check's ~10 µs
 * in-process (measured; a served check is ~20 µs of CPU with the access log). Everything else a request meets there is here too, in the same order: the request
 * guard (Host; a GET's body is not read), the route's handler, and the app's error answer for
 * what it throws. Any other method or path: undefined, and Elysia answers it as before.
 */
function forwardAuthFastPath(ctx: AppContext, allowedMethods: (path: string) => string[]): (request: Request) => Response | Promise<Response> | undefined {
  const guard = createRequestGuard()
  // What a handler throws or rejects with: the app's error answer, as Elysia's onError gives it.
  const failed = (error: unknown, request: Request, path: string) => errorAnswer(ctx, allowedMethods, { code: 'UNKNOWN', error, request, path })
  return (request) => {
    if (request.method !== 'GET') return undefined
    const path = pathOf(request.url)
    const handler = path === FORWARD_AUTH_PATH ? forwardAuth : path === AUTH_REQUEST_PATH ? authRequest : undefined
    if (!handler) return undefined
    const refused = guard({ request })
    if (refused) return refused
    try {
      const answered = handler(ctx, request)
      return answered instanceof Promise ? answered.catch((error: unknown) => failed(error, request, path)) : answered
    } catch (error) {
      return failed(error, request, path)
    }
  }
}

export type App = ReturnType<typeof createApp>
