/**
 * THE ONE STAND-IN (SPEC "Sign in with another account"): GitHub cannot be started by a test, so
 * this small server gives GitHub's documented answers for an OAuth app, at GitHub Enterprise's
 * paths (pages at https://HOST/login/oauth/…, the API at https://HOST/api/v3):
 *  - GET  /login/oauth/authorize — the person approves at once: back to redirect_uri with code and state
 *    (https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps#1-request-a-users-github-identity)
 *  - POST /login/oauth/access_token — form client_id, client_secret, code, redirect_uri, code_verifier;
 *    with Accept: application/json, {access_token, token_type: "bearer", scope}; a bad code is a 200
 *    with {error: "bad_verification_code"} as GitHub answers (…#2-users-are-redirected-back-to-your-site-by-github)
 *  - GET  /api/v3/user — {login, id, name, …} (https://docs.github.com/en/rest/users/users#get-the-authenticated-user)
 *  - GET  /api/v3/user/emails — [{email, primary, verified, visibility}] (https://docs.github.com/en/rest/users/emails)
 */
import { s256 } from '../../src/lib/crypto'

export interface GitHubUser {
  id: number
  login: string
  name: string | null
  emails: Array<{ email: string; primary: boolean; verified: boolean }>
}

export function startGitHub(clientId: string, clientSecret: string) {
  const users = new Map<string, GitHubUser>()
  const next = { login: '' }
  const codes = new Map<string, { login: string; challenge: string; redirectUri: string }>()
  const tokens = new Map<string, string>()
  const seen: { tokenRequests: URLSearchParams[]; apiAuthorization: string[] } = { tokenRequests: [], apiAuthorization: [] }
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const url = new URL(request.url)
      if (url.pathname === '/login/oauth/authorize') {
        const code = crypto.randomUUID()
        codes.set(code, { login: next.login, challenge: url.searchParams.get('code_challenge') ?? '', redirectUri: url.searchParams.get('redirect_uri')! })
        const back = new URL(url.searchParams.get('redirect_uri')!)
        back.searchParams.set('code', code)
        back.searchParams.set('state', url.searchParams.get('state')!)
        return Response.redirect(back.href, 302)
      }
      if (url.pathname === '/login/oauth/access_token' && request.method === 'POST') {
        const form = new URLSearchParams(await request.text())
        seen.tokenRequests.push(form)
        const code = codes.get(form.get('code') ?? '')
        codes.delete(form.get('code') ?? '')
        const ok = code && form.get('client_id') === clientId && form.get('client_secret') === clientSecret && form.get('redirect_uri') === code.redirectUri && s256(form.get('code_verifier') ?? '') === code.challenge
        if (!ok) return Response.json({ error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' })
        const token = `gho_${crypto.randomUUID().replace(/-/g, '')}`
        tokens.set(token, code.login)
        return Response.json({ access_token: token, token_type: 'bearer', scope: 'read:user,user:email' })
      }
      const auth = request.headers.get('authorization') ?? ''
      seen.apiAuthorization.push(auth)
      const user = users.get(tokens.get(auth.replace(/^Bearer /, '')) ?? '')
      if (!user) return Response.json({ message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' }, { status: 401 })
      if (url.pathname === '/api/v3/user') return Response.json({ login: user.login, id: user.id, name: user.name, type: 'User' })
      if (url.pathname === '/api/v3/user/emails') return Response.json(user.emails.map((e) => ({ ...e, visibility: e.primary ? 'public' : null })))
      return Response.json({ message: 'Not Found' }, { status: 404 })
    },
  })
  return { host: `127.0.0.1:${server.port}`, apiUrl: `http://127.0.0.1:${server.port}/api/v3`, users, next, seen, stop: () => server.stop(true) }
}
