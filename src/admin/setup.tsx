/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import { currentBrand } from '../brand'
import { createHmac } from 'node:crypto'
import { Elysia } from 'elysia'
import type { AppContext } from '../context'
import type { NewUser, PasskeyRecord, Store } from '../db/store'
import { UniqueViolation } from '../db/store'
import { startSession } from '../accounts/signed-in'
import { PASSWORD_MAX, PASSWORD_MIN, UserInputError, checkFullName, checkPassword, normalizeEmail } from '../accounts/users'
import { browserSecret, csrfAccepted, formCsrf } from '../accounts/web'
import { PasskeyRefused, passkeyAmr, registrationOptions, verifyNewPasskey } from '../accounts/passkeys'
import { PasskeyScripts } from '../accounts/mfa-pages'
import { constantTimeEqual, hashPassword, sha256 } from '../lib/crypto'
import { NotFound, PageError } from '../lib/errors'
import { json } from '../lib/http'
import { CsrfField, ErrorNote, Hidden, Layout, attr } from '../views/layout'
import { htmlPage } from '../views/page'
import { parsePageForm, type FormFields } from '../web/forms'
import { SETUP, SETUP_TTL_MS } from './setup-link'
import { field } from './web'
import { t, th } from '../i18n'
import { sayError } from '../i18n/known-errors'
import { speechOf } from '../i18n/request'

type TokenState = 'live' | 'wrong' | 'used' | 'expired'

const NO_STORE = { 'cache-control': 'no-store' }

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
    return htmlPage(() => <SetupPage csrf={csrf.token} token={token} passkeys={ctx.config.passkeys !== null} {...said} error={said.error?.()} />, { status: said.status, cookies: csrf.cookies, speech: speechOf(ctx.config, request) })
  }

  /** A posted setup form: the live token first, then its CSRF token (the anonymous cookie's). */
  async function checkedForm(request: Request, fields: FormFields): Promise<string> {
    const token = field(fields, 'token')
    await liveToken(token)
    if (!csrfAccepted(ctx, request, undefined, fields.csrf_token)) throw new PageError(403, 'error.forbidden')
    return token
  }
  const sentence = (message: string) => message[0]!.toUpperCase() + message.slice(1) + '.'
  /** Creates the admin, claiming the token in the same transaction; the page again when refused. */
  async function create(request: Request, token: string, typed: { fullName: string; email: string }, make: () => Promise<{ user: NewUser; passkey?: PasskeyRecord; amr: string[] }>) {
    let made
    try {
      made = await make()
      const now = ctx.clock.now()
      // Two setups with one token: the store lets one claim it; the other is told it was used.
      if ((await ctx.store.users.insertFirstAdmin(made.user, sha256(token), now - SETUP_TTL_MS, now, made.passkey)) === 'refused') throw REFUSALS.used()
    } catch (error) {
      if (error instanceof UserInputError) return page(request, token, { ...typed, error: () => sayError(error), status: 400 })
      if (error instanceof PasskeyRefused) {
        const reason = error.message
        return page(request, token, { ...typed, error: () => reason, status: 400 })
      }
      if (error instanceof UniqueViolation) return page(request, token, { ...typed, error: () => t('setup.emailTaken'), status: 409 })
      throw error
    }
    const { user, passkey, amr } = made
    await ctx.audit.record('user.created', { userId: user.id, request, detail: { admin: true, via: 'setup' } })
    if (passkey) await ctx.audit.record('passkey.added', { userId: user.id, request })
    ctx.log.info('first admin created', { user: user.id })
    return startSession(ctx, request, user.id, '/admin', { amr })
  }
  // After the first admin, a POST learns nothing either: 404 before its body is read.
  const parse = {
    parse: async (context: Parameters<typeof parsePageForm>[0]) => {
      await noAdminYet(context.request)
      return parsePageForm(context)
    },
  }
  /**
   * The id the admin made with a passkey will have: WebAuthn's user handle is fixed at the
   * options, before the account exists, so it is derived from this browser's secret (keyed, so
   * it says nothing of the secret) and this setup link (another link, another id), and found again
   * when the answer is posted.
   */
  const newAdminId = (request: Request, token: string) => {
    const bytes = createHmac('sha256', ctx.csrfKey).update(`setup-admin:${browserSecret(ctx, request, undefined)}:${sha256(token)}`).digest().subarray(0, 16)
    bytes[6] = (bytes[6]! & 0x0f) | 0x40
    bytes[8] = (bytes[8]! & 0x3f) | 0x80
    const hex = bytes.toString('hex')
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
  }
  /**
   * The new admin's name and address: `typed` as the form sent them (a refused page shows them
   * again) and `checked()` as the account gets them (UserInputError when they cannot be).
   */
  const typedAccount = (fields: FormFields) => {
    const typed = { fullName: field(fields, 'full_name'), email: field(fields, 'email') }
    return { typed, checked: () => ({ fullName: checkFullName(typed.fullName), email: normalizeEmail(typed.email) }) }
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
        const token = await checkedForm(request, fields)
        const account = typedAccount(fields)
        return create(request, token, account.typed, async () => {
          const { fullName, email } = account.checked()
          const passwordHash = await hashPassword(checkPassword(field(fields, 'password')))
          return { user: { id: crypto.randomUUID(), email, fullName, avatarUrl: null, passwordHash, emailVerified: true }, amr: ['pwd'] }
        })
      },
      parse,
    )
    // The first admin with a passkey (SPEC "First run"): the ceremony /account uses, its challenge
    // bound to this browser and made for the account about to exist; the admin and the passkey
    // are inserted with the token's claim, in one transaction.
    .post(
      '/setup/passkey/options',
      async ({ request, body }) => {
        const fields = body as FormFields
        const token = await checkedForm(request, fields)
        if (!ctx.config.passkeys) throw new NotFound('passkeys are not available on this server')
        try {
          const account = { id: newAdminId(request, token), ...typedAccount(fields).checked() }
          return json(await registrationOptions(ctx, account, browserSecret(ctx, request, undefined)!, true), 200, NO_STORE)
        } catch (error) {
          if (error instanceof UserInputError) return json({ error: 'invalid_request', error_description: sentence(error.message) }, 400, NO_STORE)
          throw error
        }
      },
      parse,
    )
    .post(
      '/setup/passkey',
      async ({ request, body }) => {
        const fields = body as FormFields
        const token = await checkedForm(request, fields)
        const account = typedAccount(fields)
        return create(request, token, account.typed, async () => {
          const { fullName, email } = account.checked()
          const { passkey, userVerified } = await verifyNewPasskey(ctx, newAdminId(request, token), browserSecret(ctx, request, undefined)!, field(fields, 'credential'), t('setup.passkeyName'), true)
          // No password: '' is how an account without one is kept.
          return { user: { id: passkey.userId, email, fullName, avatarUrl: null, passwordHash: '', emailVerified: true }, passkey, amr: passkeyAmr(userVerified) }
        })
      },
      parse,
    )
}

function SetupPage(props: { csrf: string; token: string; passkeys: boolean; error?: string; fullName?: string; email?: string }) {
  return (
    <Layout title={t('setup.title', { brand: currentBrand().name })}>
      <h1>{th('setup.title', { brand: currentBrand().name })}</h1>
      <p>{th('setup.intro')}</p>
      <ErrorNote message={props.error} />
      <form method="post" action="/setup" id="setup">
        <CsrfField token={props.csrf} />
        <Hidden name="token" value={props.token} />
        <input type="hidden" name="credential" value="" />
        <label for="full_name">{th('signUp.fullName')}</label>
        <input id="full_name" name="full_name" type="text" autocomplete="name" required value={attr(props.fullName ?? '')} />
        <label for="email">{th('signIn.email')}</label>
        <input id="email" name="email" type="email" autocomplete="username" required value={attr(props.email ?? '')} />
        <label for="password">{th('signIn.password')}</label>
        <input id="password" name="password" type="password" autocomplete="new-password" required minlength={String(PASSWORD_MIN)} maxlength={String(PASSWORD_MAX)} />
        <div class="actions">
          <button type="submit">{th('setup.submit')}</button>
        </div>
        {props.passkeys ? (
          // Shown by the script where the browser can make a passkey (hidden without JavaScript).
          <div id="setup-passkey" hidden>
            <p class="muted">{th('setup.passkeyHint')}</p>
            <p class="error passkey-error" role="alert" hidden></p>
            <div class="actions">
              <button type="button" class="secondary">
                {th('setup.withPasskey')}
              </button>
            </div>
          </div>
        ) : (
          ''
        )}
      </form>
      {props.passkeys ? <PasskeyScripts /> : ''}
    </Layout>
  )
}
