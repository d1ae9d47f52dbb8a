/**
 * The settings API, forward-auth, the well-known documents and operations as the API reference
 * shows them, with examples; and what an app receives (back-channel logout). Merged over what the
 * routes' own schemas say (openapi.ts).
 */
import { errorAnswer, header, jsonAnswer, object, page, query, redirect, str, type Operation, type Response } from './schema'

const USER = '0b6f7d3e-5a1c-4f9e-8d2b-7c6a5e4f3d2c'
const CLIENT = '3f1c9e0b7a2d4e6f8a1b2c3d'
const setting = { key: 'theme', value: { mode: 'dark', accent: '#3b82f6' }, client_id: CLIENT, updated_at: '2026-11-27T09:30:00.000Z' }
const ETAG = { ETag: { description: 'the setting’s version (strong), for If-Match and If-None-Match', schema: str(undefined, { example: '"3"' }) } }

const json = (description: string, example: unknown, headers?: Response['headers']): Response => ({ description, ...(headers ? { headers } : {}), content: { 'application/json': { example } } })

const settings: Record<string, Operation> = {
  'get /api/settings': {
    responses: {
      '200': {
        description: 'The settings (or, with since, what changed after it)',
        content: {
          'application/json': {
            examples: {
              list: { summary: 'Every setting', value: { settings: [setting], revision: 7 } },
              since: { summary: '?since=5', value: { revision: 7, changes: [setting, { key: 'layout', deleted: true }] } },
            },
          },
        },
      },
    },
  },
  'post /api/settings': {
    parameters: [header('If-Match', 'update only this version (412 otherwise)'), header('If-None-Match', '* : create only (409 when the key exists)')],
    requestBody: { required: true, content: { 'application/json': { example: { client_id: CLIENT, key: 'theme', value: { mode: 'dark', accent: '#3b82f6' } } } } },
    responses: { '200': json('Saved', { success: true, setting }, ETAG) },
  },
  'get /api/settings/{key}': {
    parameters: [{ name: 'key', in: 'path', required: true, description: '1 to 128 of A-Z a-z 0-9 . _ - :', schema: str(), example: 'theme' }, header('If-None-Match', 'a version you have: 304 when it is still current')],
    responses: { '200': json('The setting', { setting }, ETAG), '304': { description: 'Not modified (If-None-Match)' } },
  },
  'delete /api/settings/{key}': {
    parameters: [{ name: 'key', in: 'path', required: true, schema: str(), example: 'theme' }, header('If-Match', 'delete only this version (412 otherwise)')],
    responses: { '200': json('Deleted', { success: true }) },
  },
  'get /api/settings-events': {
    description:
      'text/event-stream. Each change is an event with id = its revision: event set (data: the setting and its etag) or event delete (data: {key}). Send Last-Event-ID or since to be replayed what you missed first; a browser’s EventSource, which cannot send a header, passes ?ticket= from POST /api/settings-events/ticket. Comments (: keep-alive) keep it open; event end (data: {reason}) closes it — the token expired or was revoked, the reader fell 1 MiB behind, or the server is stopping.',
    parameters: [header('Last-Event-ID', 'the last revision you saw')],
    responses: {
      '200': {
        description: 'The stream, open until you close it',
        content: { 'text/event-stream': { schema: str(), example: `retry: 2000\n\nid: 8\nevent: set\ndata: {"key":"theme","value":{"mode":"dark"},"client_id":"${CLIENT}","updated_at":"2026-11-27T09:31:00.000Z","etag":"\\"4\\""}\n\nid: 9\nevent: delete\ndata: {"key":"layout"}\n\n` } },
      },
    },
  },
  'post /api/settings-events/ticket': {
    responses: { '200': jsonAnswer('A ticket, good once for 30 seconds', object({ ticket: str() }), { ticket: 'lk_st_Hk3n…' }) },
  },
}

const forwarded = [
  header('X-Forwarded-Method', 'the method of the request to the site', true),
  header('X-Forwarded-Proto', 'http or https', true),
  header('X-Forwarded-Host', 'the site’s host', true),
  header('X-Forwarded-Uri', 'the path and query', true),
  header('X-Forwarded-For', 'the browser’s address (used only from a trusted proxy)'),
]
const remote: Response['headers'] = {
  'Remote-User': { description: 'the user’s email, or client:ID for an app’s token; empty when the site lets anyone in', schema: str(undefined, { example: 'ann@example.com' }) },
  'Remote-Email': { description: 'the user’s email', schema: str(undefined, { example: 'ann@example.com' }) },
  'Remote-Name': { description: 'the user’s full name', schema: str(undefined, { example: 'Ann Lee' }) },
  'Remote-Groups': { description: 'the user’s groups, comma-separated', schema: str(undefined, { example: 'family,admins' }) },
  'Remote-Id': { description: 'the user’s id', schema: str(undefined, { example: USER }) },
  'Remote-JWT': { description: 'for a site that asks for it: a JWT about the user, valid 60 s, aud = the site’s origin, signed like ID tokens', schema: str() },
}
const FORWARD_AUTH = 'Only from the trusted proxies the server is configured with (403 from anyone else). The site is the one named by the forwarded host; its rules decide.'
const denied: Response = {
  description: 'The “Access denied” page: signed in, but the site’s rules refuse this user — or, as JSON, a caller that is not a trusted proxy',
  content: { ...page('').content, 'application/json': errorAnswer('403', '', { error: 'access_denied', error_description: 'the caller is not in TRUSTED_PROXIES' }).content!['application/json']! },
}
const signInUrl = 'https://photos.example/.latchkey/start?rd=https%3A%2F%2Fphotos.example%2Falbums'

const forwardAuth: Record<string, Operation> = {
  'get /api/authz/forward-auth': {
    tags: ['Forward-auth'],
    summary: 'The check Traefik, Caddy, HAProxy and Envoy make before passing a request to a protected site',
    description: FORWARD_AUTH + ' An app’s token (Authorization: Bearer) is taken for a site that lets it in.',
    parameters: forwarded,
    responses: {
      '200': { description: 'Let it through, with who it is', headers: remote },
      '302': redirect('A browser’s page load and nobody signed in: to sign in (303 for a method other than GET and HEAD)', signInUrl),
      '401': errorAnswer('401', 'Not a page load (a script, an API call) and nobody signed in', { error: 'unauthorized', error_description: 'sign in first' }),
      '403': denied,
    },
  },
  'get /api/authz/auth-request': {
    tags: ['Forward-auth'],
    summary: 'The check nginx’s auth_request makes',
    description: FORWARD_AUTH,
    parameters: [header('X-Original-URL', 'the full URL of the request to the site', true), header('X-Original-Method', 'its method (GET when absent)'), header('X-Forwarded-For', 'the browser’s address')],
    responses: {
      '200': { description: 'Let it through, with who it is', headers: remote },
      '401': {
        ...errorAnswer('401', 'Nobody signed in: nginx sends the browser to Location', { error: 'unauthorized', error_description: 'sign in first' }),
        headers: { Location: { description: 'where to sign in', schema: str(undefined, { example: signInUrl }) } },
      },
      '403': denied,
    },
  },
  'get /.latchkey/start': {
    tags: ['Forward-auth'],
    summary: 'A protected site’s sign-in, on the site’s own host (the proxy routes /.latchkey/ to this server)',
    parameters: [query('rd', str('the page of the site to return to'), true, 'https://photos.example/albums')],
    responses: { '302': redirect('To /authz/start, with the browser’s state cookie for the site set', 'https://id.example.com/authz/start?rd=…&state=…'), '400': page('rd is not a page of this site') },
  },
  'get /authz/start': {
    tags: ['Forward-auth'],
    summary: 'Signs the browser in (when it is not) and sends it back to the site with a one-time code',
    parameters: [query('rd', str('the page of the site'), true), query('state', str('the browser’s state at the site'), true)],
    responses: { '302': redirect('To the site’s /.latchkey/callback with a code, or to the sign-in page first', 'https://photos.example/.latchkey/callback?code=…'), '400': page('Not a protected site’s page') },
  },
  'get /.latchkey/callback': {
    tags: ['Forward-auth'],
    summary: 'On the site’s host: takes the one-time code, sets the site’s session cookie, returns to the page',
    parameters: [query('code', str('from /authz/start'), true)],
    responses: { '302': redirect('To the page first asked for (or to sign in again when the code is not this browser’s)', 'https://photos.example/albums'), '400': page('The link expired or was used') },
  },
}

const wellKnown = (summary: string, description?: string): Operation => ({ tags: ['Discovery'], summary, ...(description ? { description } : {}) })

const operations: Record<string, Operation> = {
  'get /.well-known/openid-configuration': wellKnown('OpenID Connect Discovery 1.0: every endpoint and what the server supports'),
  'get /.well-known/oauth-authorization-server': wellKnown('OAuth 2.0 authorization server metadata (RFC 8414)'),
  'get /.well-known/oauth-protected-resource': wellKnown('The API (userinfo, settings) as a protected resource (RFC 9728)', 'Every 401 of the API names this document in WWW-Authenticate (resource_metadata).'),
  'get /.well-known/oauth-protected-resource/api': wellKnown('The same document at the path RFC 9728 §3.1 derives from the resource ISSUER/api'),
  'get /.well-known/jwks.json': wellKnown('The public keys ID tokens, JWT access tokens and logout tokens are signed with (RFC 7517)', 'The current key, the next one (published ahead of use) and retired ones still in use; cache by Cache-Control.'),
  'get /healthz': {
    tags: ['Operations'],
    summary: 'Health: 200 after a round trip to the database, 503 (Retry-After: 1) otherwise',
    responses: { '200': jsonAnswer('Serving', object({ status: str() }), { status: 'ok' }), '503': jsonAnswer('The database does not answer', object({ status: str() }), { status: 'unavailable' }) },
  },
  'get /metrics': {
    tags: ['Operations'],
    summary: 'Prometheus metrics, on a listener of its own (METRICS_ADDRESS; off by default)',
    description:
      'HTTP requests by route and status (durations), sign-ins by method and result, tokens issued by grant, refresh reuse detections, cache hits and misses, database pool use and query time, event-loop lag, open settings streams, outbox backlog.',
    servers: [{ url: 'http://127.0.0.1:9464', description: 'METRICS_ADDRESS' }],
    responses: {
      '200': { description: 'Prometheus text format', content: { 'text/plain': { schema: str(), example: '# TYPE latchkey_tokens_issued_total counter\nlatchkey_tokens_issued_total{grant="refresh_token"} 1234\n' } } },
    },
  },
}

/** What an app receives: not a route of this server but a request it makes (OpenAPI webhooks). */
export const WEBHOOKS = {
  backchannelLogout: {
    post: {
      tags: ['OpenID Connect'],
      summary: 'Back-channel logout (OpenID Connect Back-Channel Logout 1.0): sent to an app’s backchannel_logout_uri',
      description:
        'Whenever a session ends — sign out, one session or all, RP-initiated logout, an administrator’s “sign out everywhere”, a disabled or deleted user, a password reset or change — every app that got an id_token in that session receives this POST, once per app and session, retried until it answers 2xx. ' +
        'Check the logout token as an ID token (signature against the JWKS, iss, aud = your client_id, iat, exp), then end the sessions of its sid (or of its sub).',
      requestBody: {
        required: true,
        content: {
          'application/x-www-form-urlencoded': {
            schema: object({ logout_token: str('a JWT, typ logout+jwt: iss, aud, iat, exp (2 minutes later), jti, sub, sid, events {"http://schemas.openid.net/event/backchannel-logout": {}}') }),
            example: { logout_token: 'eyJ0eXAiOiJsb2dvdXQrand0IiwiYWxnIjoiUlMyNTYiLCJraWQiOiJrMSJ9.eyJpc3Mi…' },
          },
        },
      },
      responses: { '200': { description: 'Done (any 2xx); anything else is tried again later' } },
    },
  },
}

export const API_OPERATIONS: Record<string, Operation> = { ...settings, ...forwardAuth, ...operations }
