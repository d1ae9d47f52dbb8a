/**
 * A real OpenID Connect provider for the tests: panva's oidc-provider (the reference
 * implementation), on a loopback port, with accounts whose addresses are verified or not. Only
 * the person at its sign-in page is scripted: its interaction route signs in `next.account` (with
 * `next.amr`) and consents, as a person would press its buttons; everything else — discovery,
 * JWKS, the authorization and token endpoints, id_token signing, PKCE, RFC 9207's `iss` — is
 * oidc-provider's own.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair } from 'jose'
import Provider from 'oidc-provider'

/** Each upstream signs with a key of its own (not oidc-provider's development key, which every instance shares). */
async function upstreamKey() {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true })
  return { ...(await exportJWK(privateKey)), kid: crypto.randomUUID(), use: 'sig', alg: 'RS256' }
}

export interface UpstreamAccountSpec {
  email?: string
  email_verified?: boolean
  name?: string
  /** Google's hosted domain. */
  hd?: string
}

export interface Upstream {
  issuer: string
  host: string
  clientId: string
  clientSecret: string
  accounts: Map<string, UpstreamAccountSpec>
  /** Who signs in at the provider next, and the amr its id_token says. */
  next: { account: string; amr: string[] }
  close(): Promise<void>
}

export async function startUpstream(opts: { redirectUris: string[]; clientId?: string; clientSecret?: string; port?: number; issuer?: string; idTokenTtl?: number }): Promise<Upstream> {
  const accounts = new Map<string, UpstreamAccountSpec>()
  const next = { account: '', amr: ['pwd'] }
  const server = http.createServer()
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  const issuer = opts.issuer ?? `http://127.0.0.1:${port}`
  const clientId = opts.clientId ?? 'latchkey'
  const clientSecret = opts.clientSecret ?? 'upstream-client-secret-0123456789abcdef'
  const provider = new Provider(issuer, {
    clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: opts.redirectUris, grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic' }],
    // amr rides with openid: Latchkey asks for no claims parameter, and --trust-mfa reads it.
    claims: { openid: ['sub', 'amr'], email: ['email', 'email_verified'], profile: ['name', 'hd'] },
    // The claims of the scopes asked for go in the id_token too (as Google's and most providers' do).
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    cookies: { keys: ['upstream-cookie-key-for-tests-only'] },
    jwks: { keys: [await upstreamKey()] },
    features: { devInteractions: { enabled: false } },
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, AuthorizationCode: 60, IdToken: opts.idTokenTtl ?? 600 },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx, id) {
      const spec = accounts.get(id)
      if (!spec) return undefined
      return { accountId: id, claims: async () => ({ sub: id, ...spec }) }
    },
  })
  const callback = provider.callback()
  server.on('request', async (req, res) => {
    if (!req.url?.startsWith('/interaction/')) return callback(req, res)
    try {
      const details = await provider.interactionDetails(req, res)
      if (details.prompt.name === 'login') {
        await provider.interactionFinished(req, res, { login: { accountId: next.account, amr: next.amr } }, { mergeWithLastSubmission: false })
        return
      }
      const grant = new provider.Grant({ accountId: details.session!.accountId, clientId: details.params.client_id as string })
      grant.addOIDCScope(String(details.params.scope))
      await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true })
    } catch (error) {
      res.statusCode = 500
      res.end(String(error))
    }
  })
  return {
    issuer,
    host: `127.0.0.1:${port}`,
    clientId,
    clientSecret,
    accounts,
    next,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
