import type { AnyElysia } from 'elysia'
import { t } from 'elysia'
import pkg from '../../package.json'
import type { Config } from '../config'
import { API_OPERATIONS, WEBHOOKS } from './api'
import { OAUTH_OPERATIONS } from './oauth'
import { errorExample, type Operation, type Response } from './schema'

/** What every `/api` error answers (RFC 6749 §5.2 names). */
export const ErrorBody = t.Object(
  { error: t.String({ examples: ['invalid_request'] }), error_description: t.String() },
  { description: 'An error' },
)

export const errorResponses = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, ErrorBody]))

/**
 * Pages for people (and the assets they load): not part of the API. Paths, each with every
 * method it has; a path that is both (/oauth/authorize, /oauth/logout) hides its form's POST at
 * the route instead. tests/docs.test.ts walks the route table against this document.
 */
const PAGES = ['/', '/login', '/signup', '/logout', '/account', '/account/revoke', '/account/sign-out-everywhere', '/avatars/:file', '/assets/app.css', '/assets/webauthn.js', '/assets/passkeys.js', '/favicon.svg', '/favicon.ico', '/login/passkey', '/login/passkey/options', '/login/two-step', '/account/passkeys', '/account/passkeys/options', '/account/passkeys/rename', '/account/passkeys/remove', '/account/two-step', '/account/two-step/setup', '/account/two-step/confirm', '/account/two-step/recovery-codes', '/account/two-step/disable', '/account/password', '/account/password/remove', '/forgot-password', '/reset-password', '/verify-email', '/verify-email/resend', '/check-email', '/confirm-email', '/account/email', '/account/data', '/account/data/delete', '/docs', '/openapi.json', '/account/profile', '/account/password/change', '/account/delete', '/login/two-step/cancel', '/login/switch', '/assets/copy.js', '/setup', '/setup/passkey/options', '/setup/passkey', '/account/sessions/sign-out', '/account/sessions/sign-out-others', '/device', '/.latchkey/logout', '/assets/brand/logo', '/assets/brand/logo-dark', '/assets/brand/favicon', '/assets/brand.css', '/assets/apps/:id/logo', '/login/provider/:id', '/login/provider/:id/callback', '/account/providers/:id/connect', '/account/providers/:id/disconnect', '/account/passkeys/confirm-options', '/account/avatar', '/account/avatar/remove', '/account/language', '/language']

type Paths = Record<string, Record<string, Operation & Record<string, unknown>>>

/** Hand-written parts over generated ones: an operation's members, its responses and their media one by one. */
function merge(paths: Paths, extra: Record<string, Operation>): void {
  for (const [key, op] of Object.entries(extra)) {
    const [method, path] = key.split(' ') as [string, string]
    const into = ((paths[path] ??= {})[method] ??= {})
    const { responses, requestBody, ...rest } = op
    Object.assign(into, rest)
    if (requestBody) {
      const content = { ...(into.requestBody?.content ?? {}) }
      for (const [type, media] of Object.entries(requestBody.content)) content[type] = { ...(content[type] ?? {}), ...media }
      into.requestBody = { required: requestBody.required ?? true, content }
    }
    for (const [status, response] of Object.entries(responses ?? {})) {
      const was = (into.responses ??= {})[status] as Response | undefined
      const content = { ...(was?.content ?? {}) }
      for (const [type, media] of Object.entries(response.content ?? {})) content[type] = { ...(content[type] ?? {}), ...media }
      into.responses[status] = { ...was, ...response, ...(Object.keys(content).length ? { content } : {}) }
    }
  }
}

/** Every JSON answer without an example gets one: an error's by its status. */
function fillExamples(paths: Paths): void {
  for (const methods of Object.values(paths))
    for (const op of Object.values(methods))
      for (const [status, response] of Object.entries((op.responses ?? {}) as Record<string, Response>)) {
        const media = response.content?.['application/json']
        if (media && media.example === undefined && media.examples === undefined && Number(status) >= 400) {
          media.example = errorExample(status)
          if (response.description === 'An error' || !response.description) response.description = errorExample(status).error
        }
      }
}

/** The well-known documents' examples: this server's own answers (what a client will read). */
async function liveExamples(app: AnyElysia, issuer: string): Promise<Record<string, Operation>> {
  const paths = ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server', '/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/api', '/.well-known/jwks.json']
  const entries = await Promise.all(
    paths.map(async (path): Promise<[string, Operation]> => {
      const answer = await app.handle(new Request(issuer + path)).then((r) => r.json())
      const schema = path.endsWith('jwks.json')
        ? { type: 'object', properties: { keys: { type: 'array', items: { type: 'object', description: 'a public JWK (RFC 7517): kty, kid, use, alg and the key' } } }, required: ['keys'] }
        : { type: 'object', description: 'see the RFC the summary names; every member is listed in the example' }
      return [`get ${path}`, { responses: { '200': { description: 'The document (Cache-Control: public, max-age=300)', content: { 'application/json': { schema, example: answer } } } } }]
    }),
  )
  return Object.fromEntries(entries)
}

/**
 * The OpenAPI document of the API: generated from the route schemas by @elysiajs/openapi, with
 * the hand-written descriptions and examples of oauth.ts and api.ts over them. The generator is
 * imported on the first request, not at start-up: it is a large module, and loading it costs
 * every server memory and start-up time for a page few ever open.
 */
export async function buildOpenApiDocument(app: AnyElysia, config: Config) {
  const { toOpenAPISchema } = await import('@elysiajs/openapi')
  // /admin is pages for people, and says nothing of itself to strangers.
  const admin = app.routes.map((r: { path: string }) => r.path).filter((p: string) => p === '/admin' || p.startsWith('/admin/'))
  const generated = toOpenAPISchema(app, { methods: ['OPTIONS'], staticFile: false, paths: [...PAGES, ...admin] }, undefined, undefined, '3.1.0')
  const paths = generated.paths as unknown as Paths
  // The routes the server has (dynamic registration only when on); /metrics has a listener of its own.
  const routes = new Set(app.routes.map((r: { method: string; path: string }) => `${r.method.toLowerCase()} ${r.path.replace(/:([^/]+)/g, '{$1}')}`))
  const served = (key: string) => key === 'get /metrics' || routes.has(key)
  merge(paths, Object.fromEntries(Object.entries({ ...OAUTH_OPERATIONS, ...API_OPERATIONS }).filter(([key]) => served(key))))
  merge(paths, await liveExamples(app, config.issuer))
  fillExamples(paths)
  return {
    openapi: '3.1.0',
    info: {
      title: 'Latchkey',
      version: pkg.version,
      description:
        'OAuth 2.0 authorization server and OpenID Connect provider with a per-user, per-application settings store, and forward-auth for sites that speak no OAuth. Client libraries should start from the discovery document.',
    },
    servers: [{ url: config.issuer }],
    tags: [
      { name: 'Discovery', description: 'What a client reads first: metadata and keys (RFC 8414, OpenID Connect Discovery, RFC 9728, RFC 7517)' },
      { name: 'OAuth', description: 'Authorization code with PKCE, refresh, client credentials, device, PAR, registration, introspection, revocation (RFC 6749, 7636, 8628, 9126, 7591, 7592, 7662, 7009, 8707, 9207)' },
      { name: 'OpenID Connect', description: 'User info, sign-out, back-channel logout' },
      { name: 'Settings', description: 'Per-user, per-application key/value settings' },
      { name: 'Forward-auth', description: 'Reverse proxies ask before passing a request to a protected site' },
      { name: 'Operations', description: 'Health and metrics' },
    ],
    paths,
    webhooks: WEBHOOKS,
    components: {
      ...generated.components,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An access token from the token endpoint' },
        clientBasic: { type: 'http', scheme: 'basic', description: 'client_secret_basic: client_id and client_secret (RFC 6749 §2.3.1)' },
      },
    },
  }
}
