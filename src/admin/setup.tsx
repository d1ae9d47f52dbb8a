/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import { Elysia } from 'elysia'
import type { AppContext } from '../context'
import type { Store } from '../db/store'
import { UniqueViolation } from '../db/store'
import { startSession } from '../accounts/signed-in'
import { PASSWORD_MAX, PASSWORD_MIN, UserInputError, checkFullName, checkPassword, normalizeEmail } from '../accounts/users'
import { csrfAccepted, formCsrf } from '../accounts/web'
import { constantTimeEqual, hashPassword, sha256 } from '../lib/crypto'
import { NotFound, PageError } from '../lib/errors'
import { CsrfField, ErrorNote, Hidden, Layout, attr } from '../views/layout'
import { htmlPage } from '../views/page'
import { parsePageForm, type FormFields } from '../web/forms'
import { SETUP, SETUP_TTL_MS } from './setup-link'
import { field } from './web'
import { t, th } from '../i18n'
import { sayError } from '../i18n/known-errors'
import { speechOf } from '../i18n/request'

type TokenState = 'live' | 'wrong' | 'used' | 'expired'

/** What a presented token is: the live one, the one already used, the live one past its hour, or none of ours. */
async function tokenState(store: Store, token: string, now: number): Promise<TokenState> {
  const stored = await store.serverValue(SETUP)
  if (!stored || token.length === 0 || token.length > 100) return 'wrong'
  const hash = sha256(token)
  if (constantTimeEqual(stored.value, hash)) return stored.createdAt >= now - SETUP_TTL_MS ? 'live' : 'expired'
  return constantTimeEqual(stored.value, `used:${hash}`) ? 'used' : 'wrong'
}

const REFUSALS: Record<Exclude<TokenState, 'live'>, () => PageError> = {
  wrong: () => new PageError(400, 'error.setupWrong'),
  used: () => new PageError(410, 'error.setupUsed'),
  expired: () => new PageError(410, 'error.setupExpired'),
}

/**
 * /setup: the first admin of a new server (SPEC "First run"). Once an enabled admin exists,
 * nothing here exists either (404, as a path no route serves). The token is checked before the
 * form is read any further and before any password is hashed; the admin is created by claiming
 * the token in the same transaction, so a token works once even when two browsers race.
 */
export function setupRoutes(ctx: AppContext) {
  async function noAdminYet(request: Request) {
    if (await ctx.store.users.adminExists()) throw new NotFound(`no route for ${request.method} ${new URL(request.url).pathname}`)
  }
  async function liveToken(token: string) {
    const state = await tokenState(ctx.store, token, ctx.clock.now())
    if (state !== 'live') throw REFUSALS[state]()
  }
  const page = (request: Request, token: string, said: { error?: () => string; status?: number; fullName?: string; email?: string } = {}) => {
    const csrf = formCsrf(ctx, request, undefined)
    return htmlPage(() => <SetupPage csrf={csrf.token} token={token} {...said} error={said.error?.()} />, { status: said.status, cookies: csrf.cookies, speech: speechOf(ctx.config, request) })
  }

  return new Elysia({ name: 'setup' })
    .get('/setup', async ({ request }) => {
      await noAdminYet(request)
      const token = new URL(request.url).searchParams.get('token') ?? ''
      await liveToken(token)
      return page(request, token)
    })
    .post(
      '/setup',
      async ({ request, body }) => {
        const fields = body as FormFields
        const token = field(fields, 'token')
        await liveToken(token)
        if (!csrfAccepted(ctx, request, undefined, fields.csrf_token))
          throw new PageError(403, 'error.forbidden')
        const typed = { fullName: field(fields, 'full_name'), email: field(fields, 'email') }
        let user
        try {
          const fullName = checkFullName(typed.fullName)
          const email = normalizeEmail(typed.email)
          const passwordHash = await hashPassword(checkPassword(field(fields, 'password')))
          user = { id: crypto.randomUUID(), email, fullName, avatarUrl: null, passwordHash, emailVerified: true }
          const now = ctx.clock.now()
          // Two setups with one token: the store lets one claim it; the other is told it was used.
          if ((await ctx.store.users.insertFirstAdmin(user, sha256(token), now - SETUP_TTL_MS, now)) === 'refused') throw REFUSALS.used()
        } catch (error) {
          if (error instanceof UserInputError) return page(request, token, { ...typed, error: () => sayError(error), status: 400 })
          if (error instanceof UniqueViolation) return page(request, token, { ...typed, error: () => t('setup.emailTaken'), status: 409 })
          throw error
        }
        await ctx.audit.record('user.created', { userId: user.id, request, detail: { admin: true, via: 'setup' } })
        ctx.log.info('first admin created', { user: user.id })
        return startSession(ctx, request, user.id, '/admin', { amr: ['pwd'] })
      },
      {
        // After the first admin, a POST learns nothing either: 404 before its body is read.
        parse: async (context) => {
          await noAdminYet(context.request)
          return parsePageForm(context)
        },
      },
    )
}

function SetupPage(props: { csrf: string; token: string; error?: string; fullName?: string; email?: string }) {
  return (
    <Layout title={t('setup.title', { brand: 'Latchkey' })}>
      <h1>{th('setup.title', { brand: 'Latchkey' })}</h1>
      <p>{th('setup.intro')}</p>
      <ErrorNote message={props.error} />
      <form method="post" action="/setup">
        <CsrfField token={props.csrf} />
        <Hidden name="token" value={props.token} />
        <label for="full_name">{th('signUp.fullName')}</label>
        <input id="full_name" name="full_name" type="text" autocomplete="name" required value={attr(props.fullName ?? '')} />
        <label for="email">{th('signIn.email')}</label>
        <input id="email" name="email" type="email" autocomplete="username" required value={attr(props.email ?? '')} />
        <label for="password">{th('signIn.password')}</label>
        <input id="password" name="password" type="password" autocomplete="new-password" required minlength={String(PASSWORD_MIN)} maxlength={String(PASSWORD_MAX)} />
        <div class="actions">
          <button type="submit">{th('setup.submit')}</button>
        </div>
      </form>
    </Layout>
  )
}
