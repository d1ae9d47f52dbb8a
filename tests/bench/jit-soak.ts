/**
 * JIT soak: hunts crashes of JavaScriptCore's optimizing tiers that any anonymous client can cause.
 * A tool, not part of `bun test` (it is not named *.test.ts): `bun tests/bench/jit-soak.ts [filter]`.
 *
 * Why: the compiled server (Bun 1.4.5) once segfaulted in FTL-compiled code ("Segmentation fault at
 * address 0x5") when the token endpoint's checkParameters, optimized on ~25,000 requests of one
 * grant, met a request of a grant it did not know (fixed in 70c4a9c; tests/e2e/token-endpoint-jit.test.ts).
 * Such a crash needs a shape switch after optimization — and a run of the new shape right after
 * the old one: the crash above came after ~9,000 requests of the unknown grant straight after
 * ~30,000 of a known one (FTL code exits, the function is compiled again, and that code crashes).
 * Measured on a binary built before the fix: it crashed 2 of 2 that way (the `known-crash` case),
 * but did not when the unknown grant was interleaved request by request with other shapes, nor
 * when it came as a block of 10,000 after blocks of other grants' shapes. Hence three modes, each
 * against a fresh binary, each ending with GET /healthz (must be 200) and the server's stderr
 * (must hold no panic):
 * - PAIRS=1 (the one that finds that crash): phase 1 sends one plausible shape for P1 seconds
 *   (wrk -t1 -c16: ~20–80k requests, enough for FTL), phase 2 one other shape alone for as long as
 *   BLOCK requests take at phase 1's rate (+50 %); a fresh server for every (phase 1, phase 2) pair.
 * - default: phase 2 sends every other shape BLOCK times in a row each, one after the other.
 * - BLOCK=0: phase 2 interleaves every other shape request by request for P2 seconds.
 * Phase 1 is each of an endpoint's first `phase1` shapes (all with JIT_SOAK_ALL=1); MAX_SHAPES
 * bounds phase 2's shapes (the first 8, then evenly spread). Then (no filter, or `mixed`) every
 * endpoint's shapes follow each endpoint's first, since the request guard, body parsers and
 * error answers are shared. `registered` registers apps (DYNAMIC_REGISTRATION=open, as anyone
 * can there) and uses them: deeper paths than an unknown client.
 *
 * Needs `bun run build` first (drives dist/latchkey) and wrk. Env: P1 (whole seconds, default 2),
 * P2 (default 2), BLOCK (default 10000), PAIRS=1, MAX_SHAPES, JIT_SOAK_ALL=1, LATCHKEY_BIN (another
 * binary), BUN_JSC_* (passed to the server: BUN_JSC_useFTLJIT=0, BUN_JSC_ftlAllowlist=file to
 * bisect, BUN_JSC_reportFTLCompileTimes=1 to list what FTL compiled — the server's stderr is kept
 * in the printed folder). A crash prints CRASH, its case and the panic; the exit code is the
 * number of crashed cases. E.g. `PAIRS=1 MAX_SHAPES=12 bun tests/bench/jit-soak.ts token`
 * (~3.5 s a pair: 72 pairs, ~4 min).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

interface Shape {
  method?: string
  path: string
  headers?: Record<string, string>
  body?: string
}
interface Endpoint {
  name: string
  env?: Record<string, string>
  /** How many of the first shapes are each a phase 1 (all of them with JIT_SOAK_ALL=1). */
  phase1?: number
  shapes: Shape[]
  /** Run against the fresh server before phase 1: more shapes (put first), made with what it answered. */
  setup?: (base: string) => Promise<Shape[]>
}

const root = join(import.meta.dir, '../..')
const P1 = Math.max(1, Math.round(Number(process.env.P1 ?? 2))) // wrk takes whole seconds
const P2 = Number(process.env.P2 ?? 2)
const ALL = process.env.JIT_SOAK_ALL === '1'
const BLOCK = Number(process.env.BLOCK ?? 10_000)
const MAX_SHAPES = Number(process.env.MAX_SHAPES ?? 0)
const PAIRS = process.env.PAIRS === '1'
/** At most MAX_SHAPES of `shapes`: the first 8 (an endpoint's plausible shapes come first), the rest spread evenly. */
function sample<T>(shapes: T[]): T[] {
  if (!MAX_SHAPES || shapes.length <= MAX_SHAPES) return shapes
  const rest = shapes.slice(8)
  const n = Math.max(MAX_SHAPES - 8, 0)
  return [...shapes.slice(0, 8), ...Array.from({ length: n }, (_, k) => rest[Math.floor((k * rest.length) / n)]!)]
}
const filter = process.argv[2]

const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
const JSONT = { 'content-type': 'application/json' }
const LONG = 'a'.repeat(5000)
const basic = (user: string, pass: string) => ({ ...FORM, authorization: `Basic ${btoa(`${user}:${pass}`)}` })
const form = (path: string, body: string, headers: Record<string, string> = FORM): Shape => ({ method: 'POST', path, headers, body })
const json = (path: string, value: unknown): Shape => ({ method: 'POST', path, headers: JSONT, body: JSON.stringify(value) })
/** A JWT-looking client assertion (not signed by anyone the server knows). */
const assertion = `${btoa(JSON.stringify({ alg: 'RS256', kid: 'k' }))}.${btoa(JSON.stringify({ iss: 'c', sub: 'c', aud: 'http://127.0.0.1', exp: 9999999999, jti: 'j' }))}.c2ln`.replace(/=/g, '')
const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'

/** The same parameters as strings, then with each value a number, array, object, null, bool (JSON), then odd forms. */
function variants(path: string, params: Record<string, string>): Shape[] {
  const out: Shape[] = [json(path, params)]
  for (const key of Object.keys(params)) {
    for (const odd of [1, [params[key]], { a: 1 }, null, true, '', LONG]) out.push(json(path, { ...params, [key]: odd }))
    const rest = Object.entries(params).filter(([k]) => k !== key)
    out.push(form(path, new URLSearchParams(rest).toString()))
    out.push(form(path, `${new URLSearchParams(params)}&${key}=${encodeURIComponent(params[key] ?? '')}`))
    out.push(form(path, new URLSearchParams({ ...params, [key]: '' }).toString()))
    out.push(form(path, new URLSearchParams({ ...params, [key]: LONG }).toString()))
    out.push(form(path, new URLSearchParams({ ...params, [key]: 'nope\u00e9\u{1F600}' }).toString()))
  }
  out.push(form(path, ''), json(path, {}), json(path, []), json(path, null), json(path, 'x'), json(path, 1))
  out.push({ method: 'POST', path, headers: JSONT, body: '{"a":' }, { method: 'POST', path, headers: { 'content-type': 'text/plain' }, body: 'x' }, { method: 'POST', path, body: 'a=b' })
  out.push(form(path, 'a=%ZZ&b'), form(path, '&&&=&='), form(path, `${new URLSearchParams(params)}`, basic('nope', 'x')), form(path, `${new URLSearchParams(params)}`, { ...FORM, authorization: 'Basic !!!' }))
  out.push(form(path, `${new URLSearchParams(params)}`, { ...FORM, authorization: 'Bearer x' }), { method: 'GET', path }, { method: 'PUT', path, headers: FORM, body: 'a=b' })
  return out
}

const TOKEN = '/api/oauth/token'
const grantShapes: Array<Record<string, string>> = [
  { grant_type: 'refresh_token', refresh_token: 'x', client_id: 'nope' },
  { grant_type: 'authorization_code', code: 'x', redirect_uri: 'http://localhost/cb', code_verifier: 'v'.repeat(43), client_id: 'nope' },
  { grant_type: 'client_credentials', client_id: 'nope', client_secret: 's' },
  { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: 'x', client_id: 'nope' },
  { grant_type: 'nope', client_id: 'nope' },
]
const token: Endpoint = {
  name: 'token',
  phase1: 6,
  shapes: [
    ...grantShapes.map((p) => form(TOKEN, new URLSearchParams(p).toString())),
    form(TOKEN, 'grant_type=refresh_token&refresh_token=x', basic('nope', 'secret')),
    ...grantShapes.map((p) => json(TOKEN, p)),
    form(TOKEN, 'grant_type=client_credentials', basic('nope', 'secret')),
    form(TOKEN, 'grant_type=client_credentials', basic('', '')),
    form(TOKEN, 'grant_type=client_credentials', { ...FORM, authorization: 'Basic ' + btoa('no-colon') }),
    form(TOKEN, `grant_type=client_credentials&client_assertion_type=${encodeURIComponent(ASSERTION_TYPE)}&client_assertion=${assertion}`),
    form(TOKEN, `grant_type=client_credentials&client_assertion_type=${encodeURIComponent(ASSERTION_TYPE)}&client_assertion=x.y.z`),
    form(TOKEN, `grant_type=client_credentials&client_assertion_type=nope&client_assertion=${assertion}`),
    form(TOKEN, 'grant_type=client_credentials&client_id=a&client_id=b'),
    form(TOKEN, 'grant_type=refresh_token&grant_type=refresh_token'),
    form(TOKEN, ''),
    form(TOKEN, 'grant_type='),
    form(TOKEN, `grant_type=${LONG}`),
    ...grantShapes.flatMap((p) => variants(TOKEN, p).slice(1)),
  ],
}

const bodyEndpoint = (name: string, path: string, params: Record<string, string>, phase1 = 2): Endpoint => ({
  name,
  phase1,
  shapes: [form(path, new URLSearchParams(params).toString()), form(path, new URLSearchParams(params).toString(), basic('nope', 'secret')), ...variants(path, params)],
})

const bearers = ['x', '', ' ', 'a.b.c', 'lk_' + 'x'.repeat(40), 'x'.repeat(43), 'x'.repeat(4000), 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.x', '%%%', 'a'.repeat(7) + '.' + 'b'.repeat(43)]
const bearerEndpoint = (name: string, path: string, methods: string[]): Endpoint => ({
  name,
  phase1: 2,
  shapes: [
    ...methods.flatMap((method) => bearers.map((b) => ({ method, path, headers: { authorization: `Bearer ${b}` } }))),
    ...methods.flatMap((method) => [{ method, path }, { method, path, headers: { authorization: 'Basic eA==' } }, { method, path, headers: { authorization: 'bearer x' } }, { method, path, headers: { authorization: 'Bearerx' } }]),
    { method: 'POST', path, headers: FORM, body: 'access_token=x' },
    { method: 'DELETE', path, headers: { authorization: 'Bearer x' } },
  ],
})

const FA = '/api/authz/forward-auth'
const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'app.example.com', 'x-forwarded-uri': '/some/path?x=1', 'x-forwarded-method': 'GET' }
const cookies = ['lk_site=x', 'lk_site=' + 'x'.repeat(43), 'lk_site=', 'lk_site', 'a=b; lk_site=x; lk_site=y', `lk_site=${LONG}`, 'lk_session=x', '=;;;=', 'lk_site="x"', 'lk_site=%E9']
const faShapes = (): Shape[] => [
  { path: FA, headers: forwarded },
  { path: FA, headers: { ...forwarded, cookie: 'lk_site=' + 'x'.repeat(43) } },
  ...cookies.map((cookie) => ({ path: FA, headers: { ...forwarded, cookie } })),
  { path: FA },
  { path: FA, headers: { ...forwarded, 'x-forwarded-host': '' } },
  { path: FA, headers: { ...forwarded, 'x-forwarded-host': 'unknown.example.org:99999' } },
  { path: FA, headers: { ...forwarded, 'x-forwarded-proto': 'gopher' } },
  { path: FA, headers: { ...forwarded, 'x-forwarded-uri': '' } },
  { path: FA, headers: { ...forwarded, 'x-forwarded-uri': 'no-slash' } },
  { path: FA, headers: { ...forwarded, 'x-forwarded-uri': '/' + LONG } },
  { path: FA, headers: { ...forwarded, 'x-forwarded-method': 'BREW' } },
  { path: FA, headers: { ...forwarded, 'x-forwarded-for': '1.2.3.4, 5.6.7.8' } },
  { path: FA, headers: { ...forwarded, 'x-forwarded-for': 'garbage' } },
  { path: FA, headers: { 'x-original-url': 'https://app.example.com/x', 'x-original-method': 'GET' } },
  { path: FA, headers: { 'x-original-url': 'not a url' } },
  { path: FA, headers: { ...forwarded, authorization: 'Bearer x' } },
  { path: FA, headers: { ...forwarded, accept: 'text/html' } },
  { path: FA, headers: { ...forwarded, accept: 'application/json' } },
  { method: 'POST', path: FA, headers: forwarded },
  { path: '/api/authz/auth-request', headers: { 'x-original-url': 'https://app.example.com/x' } },
]

const authorizeQueries = [
  'response_type=code&client_id=nope&redirect_uri=http%3A%2F%2Flocalhost%2Fcb&scope=openid&state=s&code_challenge=' + 'c'.repeat(43) + '&code_challenge_method=S256',
  '',
  'client_id=nope',
  'client_id=',
  'client_id=a&client_id=b',
  `client_id=${LONG}`,
  'response_type=token&client_id=nope',
  'request_uri=urn:ietf:params:oauth:request_uri:x&client_id=nope',
  'client_id=https%3A%2F%2Fexample.invalid%2Fclient.json',
  'response_type=code&client_id=nope&prompt=none&max_age=abc',
  '%ZZ=1&&=',
  'scope=' + 'openid '.repeat(500),
]

/**
 * What anyone can do where DYNAMIC_REGISTRATION=open: register an app (a confidential and a public
 * one) and use the endpoints as an authenticated client — deeper paths than an unknown client_id.
 */
async function registeredShapes(base: string): Promise<Shape[]> {
  const register = async (extra: Record<string, unknown>) => {
    const res = await fetch(`${base}/api/oauth/register`, { method: 'POST', headers: JSONT, body: JSON.stringify({ client_name: 'soak', redirect_uris: ['http://127.0.0.1/cb'], grant_types: ['authorization_code', 'refresh_token'], ...extra }) })
    if (res.status !== 201) throw new Error(`register: ${res.status} ${await res.text()}`)
    return (await res.json()) as { client_id: string; client_secret?: string }
  }
  const { client_id: id, client_secret: secret = '' } = await register({})
  const { client_id: pub } = await register({ token_endpoint_auth_method: 'none' })
  const auth = basic(id, secret)
  const verifier = 'v'.repeat(43)
  const authorize = `response_type=code&client_id=${id}&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb&scope=openid&state=s&code_challenge=${'c'.repeat(43)}&code_challenge_method=S256`
  return [
    form(TOKEN, 'grant_type=refresh_token&refresh_token=x', auth),
    form(TOKEN, `grant_type=authorization_code&code=x&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb&code_verifier=${verifier}`, auth),
    form(TOKEN, `grant_type=refresh_token&refresh_token=x&client_id=${pub}`),
    form(TOKEN, `grant_type=authorization_code&code=x&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb&code_verifier=${verifier}&client_id=${pub}`),
    form(TOKEN, `grant_type=refresh_token&refresh_token=x&client_id=${id}&client_secret=${secret}`),
    form(TOKEN, `grant_type=refresh_token&refresh_token=x&client_id=${id}&client_secret=wrong`),
    form(TOKEN, 'grant_type=refresh_token&refresh_token=x', basic(id, 'wrong')),
    form(TOKEN, `grant_type=refresh_token&refresh_token=x&client_id=${id}`),
    form(TOKEN, 'grant_type=client_credentials', auth),
    form(TOKEN, 'grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code&device_code=x', auth),
    form(TOKEN, `grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code&device_code=x&client_id=${pub}`),
    form(TOKEN, 'grant_type=nope', auth),
    form(TOKEN, 'grant_type=refresh_token&refresh_token=', auth),
    form(TOKEN, `grant_type=refresh_token&refresh_token=${LONG}`, auth),
    form(TOKEN, 'grant_type=authorization_code&code=x&redirect_uri=http%3A%2F%2Fother%2Fcb&code_verifier=short', auth),
    form(TOKEN, 'grant_type=refresh_token&refresh_token=x&scope=openid%20nope', auth),
    json(TOKEN, { grant_type: 'refresh_token', refresh_token: 'x', client_id: id, client_secret: secret }),
    json(TOKEN, { grant_type: 'refresh_token', refresh_token: 1, client_id: id, client_secret: secret }),
    json(TOKEN, { grant_type: 'refresh_token', refresh_token: 'x', client_id: pub, scope: ['openid'] }),
    form('/api/oauth/revoke', 'token=x', auth),
    form('/api/oauth/revoke', `token=x&client_id=${pub}`),
    form('/api/oauth/revoke', 'token=x&token_type_hint=access_token', auth),
    form('/api/oauth/introspect', 'token=x', auth),
    form('/api/oauth/par', authorize.replace(`client_id=${id}&`, ''), auth),
    form('/api/oauth/par', authorize.replace(id, pub)),
    form('/api/oauth/par', `${authorize}&prompt=nope&max_age=x`, auth),
    form('/api/oauth/device_authorization', `client_id=${pub}&scope=openid`),
    form('/api/oauth/device_authorization', 'scope=openid', auth),
    { path: `/oauth/authorize?${authorize}` },
    { path: `/oauth/authorize?${authorize.replace(id, pub)}` },
    { path: `/oauth/authorize?${authorize}&prompt=none` },
    { path: `/oauth/authorize?${authorize.replace('127.0.0.1', 'evil')}` },
    { path: `/oauth/authorize?${authorize.replace('code_challenge_method=S256', 'code_challenge_method=plain')}` },
    { path: `/oauth/authorize?${authorize.replace('response_type=code', 'response_type=token')}` },
    { path: `/oauth/authorize?${authorize}&scope=nope` },
    { path: `/oauth/authorize?${authorize}&request_uri=urn%3Aietf%3Aparams%3Aoauth%3Arequest_uri%3Ax` },
    { path: `/oauth/authorize?client_id=${id}&request_uri=urn%3Aietf%3Aparams%3Aoauth%3Arequest_uri%3Ax` },
    { method: 'GET', path: `/api/oauth/register/${id}`, headers: { authorization: 'Bearer x' } },
  ]
}

const endpoints: Endpoint[] = [
  { name: 'registered', env: { DYNAMIC_REGISTRATION: 'open' }, phase1: 4, shapes: [], setup: registeredShapes },
  // The crash fixed in 70c4a9c, to show this finds it (LATCHKEY_BIN=a binary built before it).
  { name: 'known-crash', shapes: [form(TOKEN, 'grant_type=refresh_token&refresh_token=x&client_id=nope'), form(TOKEN, 'grant_type=nope')] },
  token,
  bodyEndpoint('revoke', '/api/oauth/revoke', { token: 'x', client_id: 'nope', token_type_hint: 'refresh_token' }),
  bodyEndpoint('introspect', '/api/oauth/introspect', { token: 'x', client_id: 'nope', client_secret: 's' }),
  bodyEndpoint('par', '/api/oauth/par', { response_type: 'code', client_id: 'nope', redirect_uri: 'http://localhost/cb', code_challenge: 'c'.repeat(43), code_challenge_method: 'S256' }),
  bodyEndpoint('device_authorization', '/api/oauth/device_authorization', { client_id: 'nope', scope: 'openid' }),
  bodyEndpoint('register', '/api/oauth/register', { client_name: 'x', redirect_uris: 'http://localhost/cb' }, 1),
  bearerEndpoint('userinfo', '/api/oauth/userinfo', ['GET', 'POST']),
  bearerEndpoint('settings', '/api/settings', ['GET', 'PUT']),
  bearerEndpoint('settings-key', '/api/settings/some.key', ['GET', 'PUT', 'DELETE']),
  { name: 'forward-auth', phase1: 2, shapes: faShapes() },
  { name: 'forward-auth-trusted', env: { TRUSTED_PROXIES: '127.0.0.1' }, phase1: 3, shapes: faShapes() },
  {
    name: 'login',
    phase1: 2,
    shapes: [
      { path: '/login' },
      form('/login', 'email=a%40b.c&password=x&_csrf=x'),
      { path: '/login?return_to=%2Foauth%2Fauthorize%3Fclient_id%3Dx' },
      { path: `/login?return_to=${LONG}` },
      { path: '/login?return_to=a&return_to=b' },
      { path: '/login', headers: { cookie: 'lk_session=x; lk_csrf=y' } },
      { path: '/login', headers: { 'accept-language': 'fr-CH, fr;q=0.9, *;q=0.5' } },
      { path: '/login', headers: { 'accept-language': LONG } },
      form('/login', ''),
      form('/login', 'email=&password='),
      form('/login', `email=${LONG}&password=${LONG}`),
      form('/login', 'email=a&email=b'),
      json('/login', { email: 'a@b.c', password: 'x' }),
      { method: 'POST', path: '/login', headers: { 'content-type': 'multipart/form-data; boundary=x' }, body: '--x--' },
    ],
  },
  {
    // Every page an anonymous browser can open: htmlPage with and without cookies, error pages, redirects.
    name: 'pages',
    phase1: 2,
    shapes: [
      { path: '/login', headers: { accept: 'text/html' } },
      { path: '/oauth/authorize?client_id=nope', headers: { accept: 'text/html' } },
      ...['/signup', '/forgot-password', '/device', '/device?user_code=ABCD-EFGH', '/device?user_code=' + LONG, '/check-email', '/reset-password', '/reset-password?token=x', '/verify-email?token=x', '/confirm-email?token=x', '/logout', '/oauth/logout', '/oauth/logout?post_logout_redirect_uri=http%3A%2F%2Fx&id_token_hint=a.b.c', '/account', '/account/sessions', '/language', '/nope', '/docs', '/login/two-step', '/login/provider/nope', '/login/provider/nope/callback?code=x&state=y', '/authz/start', '/authz/start?rd=https%3A%2F%2Fx', '/assets/brand/logo', '/'].map((path) => ({ path, headers: { accept: 'text/html', 'accept-language': 'de' } })),
      form('/device', 'user_code=ABCD-EFGH&_csrf=x'),
      form('/signup', 'email=a%40b.c&password=x&_csrf=x'),
      form('/forgot-password', 'email=a%40b.c&_csrf=x'),
      form('/logout', '_csrf=x'),
      form('/language', 'language=fr&_csrf=x'),
    ],
  },
  {
    name: 'authorize',
    phase1: 2,
    shapes: [...authorizeQueries.map((q) => ({ path: `/oauth/authorize?${q}` })), ...authorizeQueries.map((q) => ({ path: `/authorize?${q}` })), form('/oauth/authorize', authorizeQueries[0]!)],
  },
  {
    name: 'well-known',
    phase1: 2,
    shapes: [
      { path: '/.well-known/openid-configuration' },
      { path: '/.well-known/oauth-authorization-server' },
      { path: '/.well-known/jwks.json' },
      { path: '/.well-known/oauth-protected-resource' },
      { path: '/.well-known/oauth-protected-resource/api' },
      { path: '/.well-known/nope' },
      { path: '/.well-known/openid-configuration?x=1' },
      { method: 'POST', path: '/.well-known/openid-configuration' },
      { method: 'OPTIONS', path: '/api/oauth/token' },
      { path: '/healthz' },
      { method: 'POST', path: '/healthz' },
      { path: '/healthz?x' },
    ],
  },
  {
    name: 'unknown',
    phase1: 2,
    shapes: [
      { path: '/nope' },
      { path: '/api/nope' },
      { path: '/' },
      { path: '/' + LONG },
      { path: '/%ZZ' },
      { path: '/api/oauth/token' },
      { method: 'DELETE', path: '/login' },
      { method: 'PATCH', path: '/api/oauth/userinfo' },
      { path: '/a/../../b' },
      { path: '/api//oauth//token' },
      { path: '/favicon.ico' },
      { path: '/openapi.json' },
      { path: '/docs' },
      { path: '/nope', headers: { host: '' } },
      { path: '/api/nope', headers: { accept: 'text/html' } },
    ],
  },
]

/** A Lua string literal: printable ASCII as is, everything else as \ddd (three digits: a digit may follow). */
function lua(text: string): string {
  let out = '"'
  for (const byte of new TextEncoder().encode(text)) out += byte >= 32 && byte < 127 && byte !== 34 && byte !== 92 ? String.fromCharCode(byte) : `\\${String(byte).padStart(3, '0')}`
  return out + '"'
}

/**
 * A wrk script that sends each of `shapes` `block` times in a row, in order, and again (when
 * `block` is 0: one after the other, interleaved); it counts the answers by status.
 */
function wrkScript(shapes: Shape[], block: number): string {
  const requests = shapes.map((s) => {
    const headers = Object.entries(s.headers ?? {})
      .map(([k, v]) => `[${lua(k)}]=${lua(v)}`)
      .join(',')
    return `wrk.format(${lua(s.method ?? 'GET')}, ${lua(s.path)}, {${headers}}, ${s.body === undefined ? 'nil' : lua(s.body)})`
  })
  return `local requests = {}
local threads = {}
function setup(thread) threads[#threads + 1] = thread end
function init(args)
${requests.map((r) => `  requests[#requests + 1] = ${r}`).join('\n')}
end
local block = ${block}
local sent = 0
function request()
  local i
  if block == 0 then i = sent % #requests + 1 else i = math.floor(sent / block) % #requests + 1 end
  sent = sent + 1
  return requests[i]
end
statuses = ""
local counts = {}
local answered = 0
function response(status, headers, body)
  counts[status] = (counts[status] or 0) + 1
  answered = answered + 1
  if (counts[status] % 500) == 1 then
    local parts = {}
    for k, v in pairs(counts) do parts[#parts + 1] = k .. "x" .. v end
    statuses = table.concat(parts, " ")
  end
end
function done(summary, latency, requests)
  for _, t in ipairs(threads) do io.write("statuses: " .. t:get("statuses") .. "\\n") end
end
`
}

async function freePort(): Promise<number> {
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = probe.port
  probe.stop(true)
  return port
}

/** Runs wrk; stops it if the server exits meanwhile (a crashed server would keep it retrying). */
async function wrk(port: number, script: string, seconds: number, server: Promise<number>): Promise<string> {
  const proc = Bun.spawn(['wrk', '-t1', '-c16', `-d${seconds}s`, '-s', script, `http://127.0.0.1:${port}`], { stdout: 'pipe', stderr: 'pipe' })
  void server.then(() => proc.kill('SIGINT'))
  const out = await new Response(proc.stdout).text()
  await proc.exited
  const requests = /(\d+) requests in/.exec(out)?.[1] ?? '?'
  const statuses = /statuses: (.*)/.exec(out)?.[1] ?? ''
  return `${requests} req [${statuses.trim()}]`
}

async function runCase(name: string, env: Record<string, string>, pick: (setupShapes: Shape[]) => { first: Shape[]; second: Shape[] }, setup?: Endpoint['setup']): Promise<boolean> {
  const dir = mkdtempSync(join(tmpdir(), 'jit-soak-'))
  const port = await freePort()
  const jsc = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('BUN_JSC_'))) as Record<string, string>
  const stderr = join(dir, 'stderr.txt')
  const proc = Bun.spawn([process.env.LATCHKEY_BIN ?? join(root, 'dist/latchkey'), 'serve'], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', HOME: dir, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', LOGIN_ATTEMPTS_PER_MINUTE: '1000000', ...jsc, ...env },
    stdin: 'ignore',
    stdout: 'ignore',
    stderr: Bun.file(stderr),
  })
  try {
    for (let tries = 0; ; tries++) {
      if (tries > 150) throw new Error(`${name}: the server did not start (${dir})`)
      if ((await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.status === 200) break
      await Bun.sleep(100)
    }
    const { first, second } = pick(setup ? await setup(`http://127.0.0.1:${port}`) : [])
    writeFileSync(join(dir, 'p1.lua'), wrkScript(first, 0))
    writeFileSync(join(dir, 'p2.lua'), wrkScript(second, BLOCK))
    const one = await wrk(port, join(dir, 'p1.lua'), P1, proc.exited)
    // Phase 2 lasts as long as its blocks take at phase 1's rate, +50 % (P2 seconds when BLOCK=0: interleaved).
    const rate = Number(/^(\d+)/.exec(one)?.[1] ?? 0) / P1
    const two = await wrk(port, join(dir, 'p2.lua'), BLOCK && rate ? Math.ceil((second.length * BLOCK * 1.5) / rate) : P2, proc.exited)
    const health = await fetch(`http://127.0.0.1:${port}/healthz`)
      .then((r) => r.status)
      .catch(() => 'down')
    const err = readFileSync(stderr, 'utf8')
    const crashed = health !== 200 || proc.exitCode !== null || /panic|Segmentation|SIGSEGV|ASSERTION/i.test(err)
    console.log(`${crashed ? 'CRASH' : 'ok   '} ${name}: p1 ${one}; p2 ${second.length === 1 ? describe(second[0]!) + ' ' : ''}${second.length} shapes ${two}; healthz ${health}${crashed ? `\n  stderr (${stderr}):\n${err.split('\n').filter((l) => !l.startsWith('Optimized')).slice(0, 30).join('\n')}` : ''}`)
    return crashed
  } finally {
    proc.kill('SIGKILL')
    await proc.exited
  }
}

const describe = (s: Shape) => `${s.method ?? 'GET'} ${s.path.slice(0, 60)}${s.body ? ' ' + s.body.slice(0, 80) : ''}${s.headers?.authorization ? ' [' + s.headers.authorization.slice(0, 30) + ']' : ''}`
let crashes = 0
for (const endpoint of endpoints) {
  if (filter && !endpoint.name.includes(filter) && filter !== 'mixed') continue
  if (filter === 'mixed') break
  const count = ALL ? endpoint.shapes.length + (endpoint.setup ? 38 : 0) : (endpoint.phase1 ?? 1)
  for (let i = 0; i < count; i++) {
    const pick = (made: Shape[]) => {
      const shapes = [...made, ...endpoint.shapes]
      return { first: shapes.slice(i, i + 1), second: sample(shapes.filter((_, j) => j !== i)) }
    }
    const label = `${endpoint.name} #${i} (${endpoint.setup ? 'after setup' : describe(endpoint.shapes[i]!)})`
    if (!PAIRS) {
      if (await runCase(label, endpoint.env ?? {}, pick, endpoint.setup)) crashes++
      continue
    }
    // PAIRS=1: a fresh server for each phase-2 shape, sent alone (what the crash fixed in 70c4a9c needed).
    const others = endpoint.setup ? 37 : endpoint.shapes.length - 1
    for (const j of sample(Array.from({ length: others }, (_, k) => k))) {
      const one = (made: Shape[]) => {
        const shapes = [...made, ...endpoint.shapes]
        return { first: shapes.slice(i, i + 1), second: [shapes.filter((_, k) => k !== i)[j]!] }
      }
      if (await runCase(`${label} then #${j}`, endpoint.env ?? {}, one, endpoint.setup)) crashes++
    }
  }
}
if (!filter || filter === 'mixed') {
  const every = sample(endpoints.flatMap((e) => e.shapes))
  for (const endpoint of endpoints) {
    if (endpoint.setup) continue
    const first = endpoint.shapes[0]!
    if (await runCase(`mixed after ${endpoint.name} (${describe(first)})`, { TRUSTED_PROXIES: '127.0.0.1' }, () => ({ first: [first], second: every }), undefined)) crashes++
  }
}
process.exit(crashes)
