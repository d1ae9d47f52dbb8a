/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { ConnectedAccounts } from '../providers/pages'
import { relyingPartyOf } from '../providers/relying-party'
import { Html } from '@elysiajs/html'
import { Elysia } from 'elysia'
import type { AppContext } from '../context'
import { hashPassword, verifyPassword } from '../lib/crypto'
import { json } from '../lib/http'
import { htmlPage, seeOther } from '../views/page'
import { parsePageForm } from '../web/forms'
import { avatarUrlOf } from './avatar'
import { AddPasskeyForm, CodeForm, CsrfForm, PasskeyChangeForm, PasswordForm, ProofForm, ReturnToForm, ReturnToQuery } from './model'
import { RecoveryCodesPage, TotpSetupPage, VERIFY_FIRST } from './mfa-pages'
import { notify, passwordChangedMessage, twoStepChangedMessage, recipient } from '../mail/messages'
import { EmailSection } from './email-pages'
import { AccountPage, type AppAccess } from './pages'
import { YourAppsSection } from './your-apps'
import { ProfileSection } from './profile-pages'
import type { AuthorizedApp, ResourceScopes } from '../db/store'
import { scopeWords } from '../oauth/scopes'
import { PASSKEY_NAME_MAX, PasskeyRefused, registerPasskey, registrationOptions } from './passkeys'
import { deleteSessionsOf, type Session } from './sessions'
import { emailHash, forbidden } from './sign-in'
import { SignInLimits } from './throttle'
import { acceptTotpCode, newRecoveryCodes, newTotpSecret, openTotpSecret, totpSetup, totpStep } from './totp'
import { UserInputError, checkPassword } from './users'
import { csrfAccepted, formCsrf, readSession, safeReturnTo } from './web'
import { SessionsSection, sessionsOf } from './sessions-page'
import { accountProof, signInProofOf } from './confirm'
import { LanguageSection } from './language'
import { t } from '../i18n'
import { sayError } from '../i18n/known-errors'
import { speechOf } from '../i18n/request'

const NO_STORE = { 'cache-control': 'no-store' }
const SET_WORDS = { wrongPassword: () => `${t('confirm.passkeyFirst')} ${t('confirm.nothingChanged')}`, nothing: () => t('confirm.nothingChanged') }

/**
 * One entry per app: its consents for Latchkey and for each resource (RFC 8707) together, in the
 * consent page's words — made during the render (the words are the page's language), after the
 * resources are looked up.
 */
async function appAccess(ctx: AppContext, consents: AuthorizedApp[]): Promise<() => AppAccess[]> {
  const resources = await Promise.all(consents.map((c) => (c.resource === null ? undefined : ctx.resources.byUri(c.resource))))
  return () => appWords(consents, resources)
}

function appWords(consents: AuthorizedApp[], resources: Array<{ scopes: ResourceScopes } | undefined>): AppAccess[] {
  const apps = new Map<string, AppAccess>()
  for (const [i, consent] of consents.entries()) {
    const resource = resources[i]
    const words = consent.scopes.map((s) => scopeWords(s, resource?.scopes))
    const app = apps.get(consent.clientId)
    if (!app) {
      apps.set(consent.clientId, { clientId: consent.clientId, name: consent.name, access: words, grantedAt: consent.grantedAt, lastUsedAt: consent.lastUsedAt })
      continue
    }
    app.access = [...new Set([...app.access, ...words])]
    app.grantedAt = Math.max(app.grantedAt, consent.grantedAt)
    app.lastUsedAt = Math.max(app.lastUsedAt ?? 0, consent.lastUsedAt ?? 0) || null
  }
  return [...apps.values()]
}

/** The account page, with an error when a change was refused. */
export async function accountPage(ctx: AppContext, request: Request, session: Session, refused?: { status: number; error: () => string }, notice?: () => string): Promise<Response> {
  const userId = session.user.id
  const [apps, passkeys, totp, recoveryCodesLeft, account, activity, sessions, yourApps, providers, identities] = await Promise.all([
    ctx.store.grants.listAuthorizedApps(userId),
    ctx.store.mfa.listPasskeys(userId),
    ctx.store.mfa.findTotp(userId),
    ctx.store.mfa.countRecoveryCodes(userId),
    ctx.store.users.findUserByEmail(session.user.email),
    ctx.store.audit.list({ userId, limit: 50 }),
    sessionsOf(ctx, session),
    ctx.store.clients.yourApps(userId),
    ctx.store.providers.listProviders(),
    ctx.store.providers.listIdentities(userId),
  ])
  const security = {
    passkeysOn: ctx.config.passkeys !== null,
    passkeys,
    totp: totp?.confirmedAt != null,
    recoveryCodesLeft,
    hasPassword: !!account?.passwordHash,
    connected: identities.length,
    verifyFirst: mustVerifyFirst(ctx, session),
    signIn: signInProofOf(ctx, session, { password: !!account?.passwordHash, passkey: ctx.config.passkeys !== null && passkeys.length > 0 }, '/account'),
  }
  const csrf = formCsrf(ctx, request, session)
  const access = await appAccess(ctx, apps)
  // Rendered in the page's speech: the sections are made inside it.
  const page = () => (
    <AccountPage
      user={session.user}
      avatarUrl={avatarUrlOf(ctx.config, session.user)}
      apps={access()}
      activity={activity}
      csrf={csrf.token}
      security={security}
      error={refused?.error()}
      notice={notice?.()}
      email={ctx.config.smtpUrl === null ? undefined : <EmailSection csrf={csrf.token} email={session.user.email} verified={session.user.emailVerified} />}
      profile={<ProfileSection csrf={csrf.token} user={session.user} />}
      admin={session.admin}
      sessions={<SessionsSection sessions={sessions} csrf={csrf.token} />}
      yourApps={<YourAppsSection apps={yourApps} />}
      connected={providers.length > 0 || identities.length > 0 ? <ConnectedAccounts csrf={csrf.token} providers={providers} identities={identities} /> : undefined}
      language={<LanguageSection csrf={csrf.token} user={session.user} />}
    />
  )
  // Connect is a form whose answer redirects to the provider: Chromium holds that redirect to form-action.
  const formAction = [...new Set(providers.map((p) => relyingPartyOf(ctx).authorizationOrigin(p)))]
  return htmlPage(page, { status: refused?.status, formAction, speech: speechOf(ctx.config, request, { user: session.user }) })
}

/**
 * SPEC "Recovery": while mail is set up, an unverified account adds no passkey and turns on no
 * two-step verification — sign-up needs no proof of the address, and whoever proves it later
 * takes the account back, so nothing an intruder set up may outlive that.
 */
export function mustVerifyFirst(ctx: AppContext, session: Session): boolean {
  return ctx.config.smtpUrl !== null && !session.user.emailVerified
}

/** A passkey's name as typed: trimmed, 1–64 characters, no control characters. */
function passkeyName(raw: string | undefined): string | undefined {
  const name = (raw ?? '').trim()
  return name.length >= 1 && name.length <= PASSKEY_NAME_MAX && !/[\p{Cc}\p{Cf}]/u.test(name) ? name : undefined
}

/**
 * /account's sign-in methods: passkeys (add, rename, remove), TOTP (set up, confirm, new
 * recovery codes, turn off) and the password (remove once a passkey exists, set again). Adding
 * or removing a passkey or TOTP, or changing the password, ends the user's other sessions.
 */
export function securityRoutes(ctx: AppContext) {
  const limits = new SignInLimits(ctx.store, ctx.clock, ctx.config.loginAttemptsPerMinute)
  const prove = accountProof(ctx)

  /** The signed-in session of a form with its CSRF token, or 403. */
  async function signedIn(request: Request, csrfToken: string | undefined): Promise<Session> {
    const session = await readSession(ctx, request)
    if (!session || !csrfAccepted(ctx, request, session, csrfToken)) throw forbidden()
    return session
  }

  /** The refusal of a new passkey or TOTP for an unverified account (mustVerifyFirst). */
  const verifyFirst = (request: Request, session: Session, what: 'passkey' | 'twoStep') =>
    accountPage(ctx, request, session, { status: 403, error: () => (what === 'passkey' ? t('account.verifyFirstPasskey') : t('account.verifyFirstTwoStep')) })

  /** Done: the user's other browsers are signed out (a changed way to sign in), back to /account. */
  async function changed(session: Session): Promise<Response> {
    await deleteSessionsOf(ctx.store, session.user.id, session)
    return seeOther('/account')
  }

  return new Elysia({ name: 'account-security' })
    .post(
      '/account/passkeys/options',
      async function addPasskeyOptions({ request, body }) {
        const session = await signedIn(request, body.csrf_token)
        if (!ctx.config.passkeys) throw forbidden()
        if (mustVerifyFirst(ctx, session)) return json({ error: 'verify_email_first', error_description: `${VERIFY_FIRST}.` }, 403, NO_STORE)
        return json(await registrationOptions(ctx, session.user, session.token), 200, NO_STORE)
      },
      { parse: parsePageForm, body: CsrfForm },
    )
    .post(
      '/account/passkeys',
      async function addPasskey({ request, body }) {
        const session = await signedIn(request, body.csrf_token)
        if (mustVerifyFirst(ctx, session)) return verifyFirst(request, session, 'passkey')
        const name = passkeyName(body.name)
        if (!name) return accountPage(ctx, request, session, { status: 400, error: () => t('account.passkeyName', { max: PASSKEY_NAME_MAX }) })
        try {
          await registerPasskey(ctx, session.user, session.token, body.credential, name)
        } catch (error) {
          if (!(error instanceof PasskeyRefused)) throw error
          ctx.log.warn('passkey not added', { user: session.user.id, reason: error.message })
          return accountPage(ctx, request, session, { status: 400, error: () => sayError(error) })
        }
        await ctx.audit.record('passkey.added', { userId: session.user.id, request })
        return changed(session)
      },
      { parse: parsePageForm, body: AddPasskeyForm },
    )
    .post(
      '/account/passkeys/rename',
      async function renamePasskey({ request, body }) {
        const session = await signedIn(request, body.csrf_token)
        const name = passkeyName(body.name)
        if (!name) return accountPage(ctx, request, session, { status: 400, error: () => t('account.passkeyName', { max: PASSKEY_NAME_MAX }) })
        if (!(await ctx.store.mfa.renamePasskey(session.user.id, body.credential_id ?? '', name)))
          return accountPage(ctx, request, session, { status: 404, error: () => t('account.noSuchPasskey') })
        return seeOther('/account')
      },
      { parse: parsePageForm, body: PasskeyChangeForm },
    )
    .post(
      '/account/passkeys/remove',
      async function removePasskey({ request, body }) {
        const session = await signedIn(request, body.csrf_token)
        const outcome = await ctx.store.mfa.removePasskey(session.user.id, body.credential_id ?? '')
        if (outcome === 'unknown') return accountPage(ctx, request, session, { status: 404, error: () => t('account.noSuchPasskey') })
        if (outcome === 'last') return accountPage(ctx, request, session, { status: 409, error: () => t('account.lastPasskey') })
        await ctx.audit.record('passkey.removed', { userId: session.user.id, request })
        return changed(session)
      },
      { parse: parsePageForm, body: PasskeyChangeForm },
    )
    .get(
      '/account/two-step',
      async function showTotpSetup({ request, query }) {
        const session = await readSession(ctx, request)
        if (!session) return seeOther('/login?return_to=%2Faccount%2Ftwo-step')
        if (mustVerifyFirst(ctx, session)) return verifyFirst(request, session, 'twoStep')
        return totpSetupPage(request, session, safeReturnTo(query.return_to))
      },
      { query: ReturnToQuery },
    )
    .post(
      '/account/two-step/setup',
      async function startTotp({ request, body }) {
        const session = await signedIn(request, body.csrf_token)
        if (mustVerifyFirst(ctx, session)) return verifyFirst(request, session, 'twoStep')
        const secret = await newTotpSecret(ctx, session.user.id)
        if (!(await ctx.store.mfa.startTotp(session.user.id, secret.sealed, ctx.clock.now())))
          return accountPage(ctx, request, session, { status: 409, error: () => t('account.twoStepAlreadyOn') })
        // Set up because an app required it: where the person goes on to afterwards.
        const returnTo = safeReturnTo(body.return_to)
        return seeOther(returnTo ? `/account/two-step?return_to=${encodeURIComponent(returnTo)}` : '/account/two-step')
      },
      { parse: parsePageForm, body: ReturnToForm },
    )
    .post(
      '/account/two-step/confirm',
      async function confirmTotp({ request, body }) {
        const session = await signedIn(request, body.csrf_token)
        if (mustVerifyFirst(ctx, session)) return verifyFirst(request, session, 'twoStep')
        const totp = await ctx.store.mfa.findTotp(session.user.id)
        if (!totp || totp.confirmedAt !== null) return seeOther('/account')
        const secret = await openTotpSecret(ctx, session.user.id, totp.sealedSecret)
        const step = secret === undefined ? undefined : totpStep(ctx, secret, body.code ?? '', ctx.clock.now())
        const returnTo = safeReturnTo(body.return_to)
        if (step === undefined) return totpSetupPage(request, session, returnTo, () => t('account.wrongTotp'))
        const recovery = newRecoveryCodes()
        if (!(await ctx.store.mfa.confirmTotp(session.user.id, step, recovery.hashes, ctx.clock.now()))) return seeOther('/account')
        await deleteSessionsOf(ctx.store, session.user.id, session)
        await notify(ctx.config, ctx.store, twoStepChangedMessage(recipient(ctx.config, session.user), 'turnedOn'), ctx.clock.now())
        await ctx.audit.record('two_step.enabled', { userId: session.user.id, request })
        // Set up because an app required it: on to the app, whose step-up asks for a code (SPEC:
        // a session's factors are the ones used to sign in; turning TOTP on does not upgrade it).
        return htmlPage(() => <RecoveryCodesPage codes={recovery.codes} continueTo={returnTo} />, { speech: speechOf(ctx.config, request, { user: session.user }) })
      },
      { parse: parsePageForm, body: CodeForm },
    )
    .post(
      '/account/two-step/recovery-codes',
      async function replaceRecoveryCodes({ request, body }) {
        const session = await signedIn(request, body.csrf_token)
        const recovery = newRecoveryCodes()
        if (!(await ctx.store.mfa.replaceRecoveryCodes(session.user.id, recovery.hashes, ctx.clock.now())))
          return accountPage(ctx, request, session, { status: 409, error: () => t('account.noRecoveryCodes') })
        await ctx.audit.record('recovery_codes.regenerated', { userId: session.user.id, request })
        return htmlPage(() => <RecoveryCodesPage codes={recovery.codes} />, { speech: speechOf(ctx.config, request, { user: session.user }) })
      },
      { parse: parsePageForm, body: CsrfForm },
    )
    .post(
      '/account/two-step/disable',
      async function turnOffTotp({ request, body }) {
        const session = await signedIn(request, body.csrf_token)
        // A code or the password, guessed under the same budgets as at sign-in.
        const throttled = await limits.takeAttempt(ctx, request, emailHash(session.user.email), 'two-step throttled')
        if (throttled) return accountPage(ctx, request, session, { status: 429, error: () => t('account.tooMany', { count: throttled.wait }) })
        if (!(await proves(session, body.proof ?? ''))) return accountPage(ctx, request, session, { status: 401, error: () => t('account.wrongProof') })
        await limits.succeeded(emailHash(session.user.email))
        await ctx.store.mfa.removeTotp(session.user.id)
        await notify(ctx.config, ctx.store, twoStepChangedMessage(recipient(ctx.config, session.user), 'turnedOff'), ctx.clock.now())
        await ctx.audit.record('two_step.disabled', { userId: session.user.id, request })
        return changed(session)
      },
      { parse: parsePageForm, body: ProofForm },
    )
    .post(
      '/account/password/remove',
      async function removePassword({ request, body }) {
        const session = await signedIn(request, body.csrf_token)
        const outcome = await ctx.store.mfa.removePassword(session.user.id)
        if (outcome === 'last') return accountPage(ctx, request, session, { status: 409, error: () => t('account.passwordLast') })
        await ctx.audit.record('password.removed', { userId: session.user.id, request })
        return changed(session)
      },
      { parse: parsePageForm, body: CsrfForm },
    )
    .post(
      '/account/password',
      async function setPassword({ request, body }) {
        const session = await signedIn(request, body.csrf_token)
        const account = await ctx.store.users.findUserByEmail(session.user.email)
        if (account?.passwordHash) return accountPage(ctx, request, session, { status: 409, error: () => t('account.hasPassword') })
        let password
        try {
          password = checkPassword(body.password ?? '')
        } catch (error) {
          if (error instanceof UserInputError) return accountPage(ctx, request, session, { status: 400, error: () => sayError(error, 'the') })
          throw error
        }
        // A fresh passkey first: a borrowed session alone cannot give the account a password (and so a way back in).
        const refused = await prove(request, session, { credential: body.credential }, SET_WORDS)
        if (refused) return accountPage(ctx, request, session, refused)
        await ctx.store.mfa.setPassword(session.user.id, await hashPassword(password))
        await notify(ctx.config, ctx.store, passwordChangedMessage(recipient(ctx.config, session.user)), ctx.clock.now())
        await ctx.audit.record('password.changed', { userId: session.user.id, request })
        return changed(session)
      },
      { parse: parsePageForm, body: PasswordForm },
    )

  async function totpSetupPage(request: Request, session: Session, returnTo?: string, error?: () => string): Promise<Response> {
    const totp = await ctx.store.mfa.findTotp(session.user.id)
    const secret = totp && totp.confirmedAt === null ? await openTotpSecret(ctx, session.user.id, totp.sealedSecret) : undefined
    if (!secret) return seeOther('/account')
    const setup = totpSetup(ctx, secret, session.user.email)
    const csrf = formCsrf(ctx, request, session)
    return htmlPage(() => <TotpSetupPage csrf={csrf.token} qrSvg={setup.qrSvg} secretText={setup.secretText} returnTo={returnTo} error={error?.()} />, {
      status: error ? 400 : 200,
      speech: speechOf(ctx.config, request, { user: session.user }),
    })
  }

  /** A current TOTP code (used up) or the account's password. */
  async function proves(session: Session, proof: string): Promise<boolean> {
    if (/^\s*\d{3}\s?\d{3}\s*$/.test(proof)) return acceptTotpCode(ctx, session.user.id, proof)
    const account = await ctx.store.users.findUserByEmail(session.user.email)
    return !!account?.passwordHash && proof.length <= 256 && (await verifyPassword(proof, account.passwordHash))
  }
}
