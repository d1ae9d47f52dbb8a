import * as oauth from 'oauth4webapi'
import { CookieClient, type RunningBinary } from './server'

export const CALLBACK = 'http://127.0.0.1:9/callback'
export const options = { [oauth.allowInsecureRequests]: true }

export function csrfOf(html: string): string {
  return /name="csrf_token" value="([^"]+)"/.exec(html)![1]!
}

export async function discover(server: RunningBinary): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(server.url)
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...options }))
}

export function registerClient(server: RunningBinary, flags: string[] = []) {
  const r = server.cli(['client', 'create', '--name', 'E2E App', '--redirect-uri', CALLBACK, ...flags])
  if (r.code !== 0) throw new Error(r.err)
  return JSON.parse(r.out) as { client_id: string; client_secret: string | null }
}

export function registerUser(server: RunningBinary, email: string, name = 'Erin Example') {
  const r = server.cli(['user', 'create', '--email', email, '--name', name, '--password-stdin'], 'e2e password 1\n')
  if (r.code !== 0) throw new Error(r.err)
  return JSON.parse(r.out) as { id: string }
}

/**
 * A user agent walking the authorization request: sign-in form, consent form, Allow.
 * Returns the callback URL the server redirected to.
 */
export async function authorizeAsUser(server: RunningBinary, authorizationUrl: URL, email: string, onConsent?: (html: string) => void): Promise<URL> {
  const browser = new CookieClient(server.url)
  let res = await browser.fetch(authorizationUrl.href)
  if (res.status === 303 && res.headers.get('location')!.startsWith('/login')) {
    const login = await browser.fetch(res.headers.get('location')!)
    const html = await login.text()
    const returnTo = /name="return_to" value="([^"]+)"/.exec(html)![1]!.replaceAll('&amp;', '&')
    res = await browser.fetch('/login', {
      method: 'POST',
      body: new URLSearchParams({ email, password: 'e2e password 1', csrf_token: csrfOf(html), return_to: returnTo }),
    })
    res = await browser.fetch(res.headers.get('location')!)
  }
  if (res.status === 200) {
    const html = await res.text()
    onConsent?.(html)
    const fields = new URLSearchParams()
    // The consent form's own fields ("Not you?" above it is a form of its own).
    for (const m of html.slice(html.indexOf('<form method="post" action="/oauth/authorize">')).matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/>/g))
      fields.append(m[1]!, m[2]!.replaceAll('&quot;', '"').replaceAll('&amp;', '&'))
    fields.append('decision', 'allow')
    res = await browser.fetch('/oauth/authorize', { method: 'POST', body: fields })
  }
  if (res.status !== 303) throw new Error(`authorization ended with ${res.status}`)
  return new URL(res.headers.get('location')!)
}

/** The whole flow with oauth4webapi as the client; returns the access token. */
export async function obtainToken(
  server: RunningBinary,
  as: oauth.AuthorizationServer,
  client: { client_id: string; client_secret: string | null },
  email: string,
  scope: string,
  auth: 'basic' | 'post' | 'none' = 'basic',
): Promise<oauth.TokenEndpointResponse> {
  const verifier = oauth.generateRandomCodeVerifier()
  const state = oauth.generateRandomState()
  const url = new URL(as.authorization_endpoint!)
  url.search = new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: CALLBACK,
    response_type: 'code',
    scope,
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  }).toString()
  const callback = await authorizeAsUser(server, url, email)
  const c: oauth.Client = { client_id: client.client_id }
  const params = oauth.validateAuthResponse(as, c, callback, state)
  const clientAuth =
    auth === 'basic' ? oauth.ClientSecretBasic(client.client_secret!) : auth === 'post' ? oauth.ClientSecretPost(client.client_secret!) : oauth.None()
  const response = await oauth.authorizationCodeGrantRequest(as, c, clientAuth, params, CALLBACK, verifier, options)
  return oauth.processAuthorizationCodeResponse(as, c, response)
}
