/** `--kind github` (through the GitHub stand-in, see github-standin.ts) and `--kind google` (Google's `hd` for --allowed-domain, against oidc-provider). */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { addUser, capturingLogger } from '../helpers'
import { CALLBACK_OF, addProvider, appWith, browserFor, continueWith, failures, identitiesOf, sessionsOf, verifyEmail } from './flow'
import { startGitHub } from './github-standin'
import { startUpstream, type Upstream } from './upstream'
import { Browser } from './browser'

setDefaultTimeout(30_000)

describe('--kind github', () => {
  const github = startGitHub('Iv1.latchkey', 'github-client-secret-0123456789')
  afterAll(() => github.stop())
  github.users.set('octo', { id: 583231, login: 'octocat', name: 'The Octocat', emails: [{ email: 'octo@github.example', primary: false, verified: true }, { email: 'ann@example.com', primary: true, verified: true }] })
  github.users.set('shady', { id: 999, login: 'shady', name: null, emails: [{ email: 'ann@example.com', primary: true, verified: false }, { email: 'shady@github.example', primary: false, verified: true }] })

  async function setUp() {
    const logger = capturingLogger()
    const t = await appWith([], { CLIENT_ID_METADATA_ALLOW_HOSTS: github.host }, { log: logger.log })
    const ann = await addUser(t)
    await verifyEmail(t, 'ann@example.com')
    const p = await addProvider(t, { issuer: '', clientId: 'Iv1.latchkey', clientSecret: 'github-client-secret-0123456789' } as Upstream, { id: 'gh', name: 'GitHub', kind: 'github', issuer: undefined, apiUrl: github.apiUrl, linkVerifiedEmail: true })
    return { t, ann, p, logger, b: new Browser(t, () => [github.host]) }
  }

  test('the subject is the numeric id; only the verified primary address links; the token goes to GitHub alone', async () => {
    const { t, ann, p, logger, b } = await setUp()
    expect([p.issuer, p.apiUrl, p.scope]).toEqual([`http://${github.host}`, github.apiUrl, 'read:user user:email'])
    github.next.login = 'octo'
    const done = await b.go('/login/provider/gh')
    expect(new URL(done.at).pathname).toBe('/account')
    expect(await identitiesOf(t)).toEqual([{ provider: 'gh', subject: '583231', user: ann.id, email: 'ann@example.com' }])
    expect(await sessionsOf(t)).toEqual([{ user: ann.id, amr: 'fed', pending: false }])
    // GitHub's documented token request: the secret in the body, PKCE, the registered callback.
    const [form] = github.seen.tokenRequests
    expect([form!.get('client_id'), form!.get('client_secret'), form!.get('redirect_uri'), form!.get('grant_type')]).toEqual(['Iv1.latchkey', 'github-client-secret-0123456789', CALLBACK_OF('gh'), 'authorization_code'])
    const token = github.seen.apiAuthorization[0]!.replace('Bearer ', '')
    expect(token).toMatch(/^gho_/)
    // The provider's token reaches no page, log line or row.
    expect(logger.text()).not.toContain(token)
    expect(JSON.stringify(await t.rows('SELECT * FROM user_identities'))).not.toContain(token)
    expect(JSON.stringify(await t.rows('SELECT * FROM audit_events'))).not.toContain(token)
  })

  test('an unverified primary address never links, though a verified secondary exists', async () => {
    const { t, b } = await setUp()
    github.next.login = 'shady'
    const refused = await b.go('/login/provider/gh')
    expect(refused.response.status).toBe(403)
    expect(await refused.response.text()).toContain('No account here is connected to this GitHub account.')
    expect(await identitiesOf(t)).toEqual([])
    expect((await failures(t)).map((f) => f.reason)).toEqual(['not-linked'])
  })

  test('a code GitHub refuses (bad_verification_code) is a refused sign-in', async () => {
    const { t, b } = await setUp()
    github.next.login = 'octo'
    const callback = (await b.go('/login/provider/gh', { stopAt: (u) => u.pathname.endsWith('/callback') })).left!
    const spent = new URL(callback)
    spent.searchParams.set('code', 'not-a-code')
    const refused = await b.request(spent.href)
    expect(refused.status).toBe(400)
    expect(await sessionsOf(t)).toEqual([])
    expect((await failures(t))[0]!.reason).toContain('bad_verification_code')
  })
})

describe('--kind google', () => {
  let upstream: Upstream
  beforeAll(async () => {
    upstream = await startUpstream({ redirectUris: [CALLBACK_OF('google')] })
    upstream.accounts.set('g-work', { email: 'ann@example.com', email_verified: true, name: 'Ann', hd: 'example.com' })
    upstream.accounts.set('g-personal', { email: 'ann@example.com', email_verified: true, name: 'Ann' })
  })
  afterAll(() => upstream.close())

  test('--allowed-domain checks hd (the Workspace), not the address: a personal account with the same address is refused', async () => {
    const t = await appWith([upstream])
    await addProvider(t, upstream, { id: 'google', name: 'Google', kind: 'google', allowCreate: true, allowedDomains: ['example.com'] })
    const refused = await continueWith(browserFor(t, [upstream]), upstream, 'g-personal', { provider: 'google' })
    expect(refused.response.status).toBe(403)
    expect(await refused.response.text()).toContain('This Google account is not in a domain allowed to sign in here. Use an account of example.com.')
    expect(await t.rows('SELECT email FROM users')).toEqual([])
    const work = await continueWith(browserFor(t, [upstream]), upstream, 'g-work', { provider: 'google' })
    expect(new URL(work.at).pathname).toBe('/account')
    expect((await identitiesOf(t)).map((i) => i.subject)).toEqual(['g-work'])
  })
})
