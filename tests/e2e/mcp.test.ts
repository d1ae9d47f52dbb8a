import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { UnauthorizedError, refreshAuthorization, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js'
import * as oauth from 'oauth4webapi'
import { DocumentServer } from '../agents/document-server'
import { authorizeAsUser, registerUser } from './flow'
import { freePort, startBinary, type RunningBinary } from './server'

// An MCP client (the official SDK's own auth provider) reaching a tool of an MCP server through
// Latchkey: protected-resource metadata, discovery, a client metadata document or dynamic
// registration, the code flow with PKCE and `resource`, audience-bound tokens checked by
// introspection or offline as RFC 9068 JWTs.
setDefaultTimeout(60_000)

const EMAIL = 'mcp@example.com'

/** A small MCP server (Streamable HTTP, stateless) that checks every bearer token before the SDK's transport sees the request. */
class McpResourceServer {
  readonly port: Promise<number>
  private server?: ReturnType<typeof Bun.serve>
  check: (token: string) => Promise<{ sub: string; scope: string } | undefined> = async () => undefined

  constructor() {
    this.port = freePort().then((port) => {
      this.server = Bun.serve({ hostname: '127.0.0.1', port, fetch: (request) => this.handle(request) })
      return port
    })
  }

  async url(): Promise<string> {
    return `http://127.0.0.1:${await this.port}/mcp`
  }

  metadata = { issuer: '' }

  private async handle(request: Request): Promise<Response> {
    const url = new URL(request.url)
    const resource = `${url.origin}/mcp`
    // RFC 9728 §3.1: the metadata of the resource /mcp, and at the root for older clients.
    if (url.pathname === '/.well-known/oauth-protected-resource/mcp' || url.pathname === '/.well-known/oauth-protected-resource')
      return Response.json({ resource, authorization_servers: [this.metadata.issuer], scopes_supported: ['tools:read', 'tools:call'], bearer_methods_supported: ['header'] })
    if (url.pathname !== '/mcp') return new Response('not found', { status: 404 })
    const challenge = `Bearer resource_metadata="${url.origin}/.well-known/oauth-protected-resource/mcp"`
    const header = request.headers.get('authorization') ?? ''
    const token = /^Bearer (.+)$/i.exec(header)?.[1]
    if (!token) return new Response('unauthorized', { status: 401, headers: { 'www-authenticate': challenge } })
    const who = await this.check(token)
    if (!who || !who.scope.split(' ').includes('tools:call'))
      return new Response('unauthorized', { status: 401, headers: { 'www-authenticate': `${challenge}, error="invalid_token"` } })
    const mcp = new McpServer({ name: 'home-mcp', version: '1.0.0' })
    mcp.registerTool('whoami', { description: 'Who the token is for' }, async () => ({ content: [{ type: 'text', text: `hello ${who.sub}` }] }))
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
    await mcp.connect(transport)
    return transport.handleRequest(request)
  }

  stop() {
    this.server?.stop(true)
  }
}

/** The SDK's client auth provider, kept in memory as a CLI agent keeps it in a file. */
class AgentProvider implements OAuthClientProvider {
  authorizationUrl?: URL
  private info?: OAuthClientInformationMixed
  private saved?: OAuthTokens
  private verifier = ''

  constructor(
    /** Where the agent listens this time: a random loopback port. */
    readonly redirectUrl: string,
    readonly clientMetadataUrl?: string,
  ) {}

  get clientMetadata(): OAuthClientMetadata {
    // Registered without a port, used with the port of the moment (RFC 8252 §7.3), as MCP clients do.
    return { client_name: 'E2E Agent', redirect_uris: ['http://127.0.0.1/callback'], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' }
  }
  clientInformation() {
    return this.info
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info
  }
  tokens() {
    return this.saved
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier
  }
  codeVerifier() {
    return this.verifier
  }
}

const docs = new DocumentServer()
const mcp = new McpResourceServer()
let server: RunningBinary
let mcpUrl: string
let introspector: { client_id: string; client_secret: string }

beforeAll(async () => {
  mcpUrl = await mcp.url()
  server = await startBinary({ DYNAMIC_REGISTRATION: 'open', CLIENT_ID_METADATA_ALLOW_HOSTS: docs.host, NODE_EXTRA_CA_CERTS: docs.tls.certPath })
  mcp.metadata.issuer = server.url
  registerUser(server, EMAIL)
  const created = server.cli(['client', 'create', '--name', 'Home MCP server', '--redirect-uri', 'https://mcp.invalid/unused'])
  introspector = JSON.parse(created.out)
})

afterAll(() => {
  server?.cleanup()
  mcp.stop()
  docs.stop()
})

function createResource(format: 'opaque' | 'jwt') {
  const r = server.cli(['resource', 'create', '--uri', mcpUrl, '--name', 'Home MCP', '--scope', 'tools:read=Read your tools', '--scope', 'tools:call=Run tools', '--token-format', format, '--introspector', introspector.client_id])
  if (r.code !== 0) throw new Error(r.err)
}

/** The resource server's side: RFC 7662 introspection with its own credentials, and the audience it must see. */
async function introspect(token: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${server.url}/api/oauth/introspect`, {
    method: 'POST',
    headers: { authorization: `Basic ${btoa(`${introspector.client_id}:${introspector.client_secret}`)}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token }),
  })
  return (await res.json()) as Record<string, unknown>
}

/** Connects, walks the user through sign-in and consent when the SDK asks, and calls the tool. */
async function reachTool(provider: AgentProvider): Promise<{ text: string; consentPage: string }> {
  const client = new Client({ name: 'e2e-agent', version: '1.0.0' })
  const first = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider })
  const refused = await client.connect(first).then(
    () => undefined,
    (error: unknown) => error,
  )
  expect(refused).toBeInstanceOf(UnauthorizedError)
  const authorizationUrl = provider.authorizationUrl!
  expect(authorizationUrl.searchParams.get('resource')).toBe(mcpUrl)
  expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256')
  let consentPage = ''
  const callback = await authorizeAsUser(server, authorizationUrl, EMAIL, (html) => (consentPage = html))
  expect(callback.origin + callback.pathname).toBe(provider.redirectUrl)
  await first.finishAuth(callback.searchParams.get('code')!)
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider }))
  const result = (await client.callTool({ name: 'whoami', arguments: {} })) as { content: Array<{ text: string }> }
  await client.close()
  return { text: result.content[0]!.text, consentPage }
}

describe('an MCP client reaches a tool through Latchkey (@modelcontextprotocol/sdk)', () => {
  test('client metadata document, opaque token checked by introspection; a refresh keeps the audience; revocation stops the token at once', async () => {
    createResource('opaque')
    mcp.check = async (token) => {
      const answer = await introspect(token)
      return answer.active === true && answer.aud === mcpUrl ? { sub: answer.sub as string, scope: answer.scope as string } : undefined
    }
    const metadataUrl = docs.document('/agent.json', { client_name: 'E2E Agent', redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] })
    const provider = new AgentProvider(`http://127.0.0.1:${await freePort()}/callback`, metadataUrl)
    const { text, consentPage } = await reachTool(provider)
    const user = (await server.query('SELECT id FROM users WHERE email = ?', EMAIL))[0]!.id
    expect(text).toBe(`hello ${user}`)
    // Latchkey met the client by its document's URL; the page named its host.
    expect(provider.clientInformation()?.client_id).toBe(metadataUrl)
    expect(docs.hits.get('/agent.json')).toBe(1)
    expect(await server.query('SELECT kind FROM clients WHERE id = ?', metadataUrl)).toEqual([{ kind: 'metadata' }])
    expect(consentPage).toContain('E2E Agent</span> wants to access <strong>Home MCP</strong>')
    expect(consentPage).toContain(`From <strong>${docs.host}</strong>`)
    expect(consentPage).toContain('<li data-scope="tools:call">Run tools</li>')

    const tokens = provider.tokens()!
    expect(tokens.access_token).toStartWith('lk_at_')
    expect(await introspect(tokens.access_token)).toMatchObject({ active: true, aud: mcpUrl, client_id: metadataUrl, scope: 'tools:read tools:call' })
    // The token is not for Latchkey's own API.
    expect((await fetch(`${server.url}/api/settings?client_id=x`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401)

    // A refresh, as the SDK sends it (with resource), keeps the audience.
    const as = await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()
    const refreshed = await refreshAuthorization(server.url, { metadata: as, clientInformation: provider.clientInformation()!, refreshToken: tokens.refresh_token!, resource: new URL(mcpUrl) })
    expect(await introspect(refreshed.access_token)).toMatchObject({ active: true, aud: mcpUrl })

    // Revoking the opaque token stops it at the resource server at once.
    const call = (token: string) => fetch(mcpUrl, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) })
    expect((await call(refreshed.access_token)).status).toBe(200)
    const revoked = await fetch(`${server.url}/api/oauth/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: refreshed.access_token, client_id: metadataUrl }) })
    expect(revoked.status).toBe(200)
    expect((await call(refreshed.access_token)).status).toBe(401)
    expect(server.cli(['resource', 'delete', mcpUrl]).code).toBe(0)
  })

  test('dynamic registration, RFC 9068 JWT checked offline against the JWKS', async () => {
    createResource('jwt')
    const issuer = new URL(server.url)
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', [oauth.allowInsecureRequests]: true }))
    mcp.check = async (token) => {
      try {
        const claims = await oauth.validateJwtAccessToken(as, new Request(mcpUrl, { headers: { authorization: `Bearer ${token}` } }), mcpUrl, { [oauth.allowInsecureRequests]: true })
        return { sub: claims.sub, scope: String(claims.scope) }
      } catch {
        return undefined
      }
    }
    const provider = new AgentProvider(`http://127.0.0.1:${await freePort()}/callback`)
    const { text, consentPage } = await reachTool(provider)
    expect(text).toStartWith('hello ')
    expect(consentPage).toContain('not verified by your administrator')
    // The SDK keeps what RFC 7591 answered (it drops registration_client_uri; the in-process tests read it).
    const info = provider.clientInformation() as { client_id: string; client_secret?: string }
    expect(info.client_id).toMatch(/^[0-9a-f]{24}$/)
    expect(info).not.toHaveProperty('client_secret')
    expect(await server.query('SELECT kind, secret_hash FROM clients WHERE id = ?', info.client_id)).toEqual([{ kind: 'dynamic', secret_hash: null }])
    const claims = JSON.parse(Buffer.from(provider.tokens()!.access_token.split('.')[1]!, 'base64url').toString())
    expect(claims).toMatchObject({ iss: server.url, aud: mcpUrl, client_id: info.client_id, scope: 'tools:read tools:call' })
  })
})
