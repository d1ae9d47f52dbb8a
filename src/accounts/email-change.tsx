/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import { Elysia, t } from 'elysia'
import type { AppContext } from '../context'
import type { TokenUse } from '../db/store'
import { PageError } from '../lib/errors'
import { confirmEmailChangeMessage, emailChangedMessage, recipient } from '../mail/messages'
import { htmlPage, seeOther } from '../views/page'
import { parsePageForm } from '../web/forms'
import { GONE, OTHER_ACCOUNT } from './email'
import { linkTokenHash, newLink } from './email-links'
import { ConfirmEmailChangePage, NoticePage } from './email-pages'
import { accountPage } from './security'
import { emailHash, forbidden } from './sign-in'
import { SignInLimits } from './throttle'
import { UserInputError, normalizeEmail } from './users'
import { csrfAccepted, formCsrf, loginUrl, readSession } from './web'
import { t as msg } from '../i18n'
import { sayError } from '../i18n/known-errors'
import { speechOf } from '../i18n/request'

const field = t.Optional(t.String())
const EmailForm = t.Object({ csrf_token: field, email: field })
const TokenForm = t.Object({ csrf_token: field, token: field })
const TokenQuery = t.Object({ token: field })

/**
 * "Change email" on /account (SPEC): the new address gets a link of its own ("Confirm your new
 * email address"), whose page changes nothing until "Confirm" is posted by a session of the same
 * account — so a change link sent to a victim cannot move the victim's address onto the account
 * of whoever asked. At most three requests an hour per account and per client address.
 */
export function emailChangeRoutes(ctx: AppContext) {
  const limits = new SignInLimits(ctx.store, ctx.clock, ctx.config.loginAttemptsPerMinute)
  const requireMail = () => {
    if (ctx.config.smtpUrl === null) throw new PageError(404, 'error.noMail')
  }
  const now = () => ctx.clock.now()
  const changeGone = (request: Request) => GONE(speechOf(ctx.config, request), () => msg('link.goneEmailChange'), () => ({ href: '/account', label: msg('link.yourAccount') }))
  const otherAccount = (request: Request, path: string) => OTHER_ACCOUNT(speechOf(ctx.config, request), path, () => msg('link.otherAskedChange'))

  return new Elysia({ name: 'email-change' })
    .post(
      '/account/email',
      async function changeEmail({ request, body }) {
        requireMail()
        const session = await readSession(ctx, request)
        if (!session || !csrfAccepted(ctx, request, session, body.csrf_token)) throw forbidden()
        let email: string
        try {
          email = normalizeEmail(body.email ?? '')
        } catch (error) {
          if (!(error instanceof UserInputError)) throw error
          return accountPage(ctx, request, session, { status: 400, error: () => sayError(error, 'the') })
        }
        if (email === session.user.email) return accountPage(ctx, request, session, { status: 400, error: () => msg('account.sameEmail') })
        // The budgets are taken before anything about the address is looked at, and the answer is
        // the same whether or not another account has it: this form tells no one which addresses
        // have accounts. A taken address gets no link (the confirmation would answer 'taken' anyway).
        const wait = await limits.takeEmailChange(ctx, request, session.user.id)
        if (wait > 0) {
          ctx.log.warn('email change throttled', { user: session.user.id, retry_after: wait })
          return accountPage(ctx, request, session, { status: 429, error: () => msg('account.emailChangesPerHour', { count: wait }) })
        }
        if ((await limits.takeMail(emailHash(email))) > 0)
          return accountPage(ctx, request, session, { status: 429, error: () => msg('account.linksPerHour') })
        if (!(await ctx.store.users.findUserByEmail(email))) {
          const link = newLink(ctx.config, 'change', session.user.id, email, now())
          await ctx.store.mail.issueToken(link.token, confirmEmailChangeMessage(recipient(ctx.config, { ...session.user, email }), session.user.email, link.url), now())
        }
        await ctx.audit.record('email.change_requested', { userId: session.user.id, request })
        return accountPage(ctx, request, session, undefined, () => msg('account.emailChangeSent', { email }))
      },
      { parse: parsePageForm, body: EmailForm },
    )
    .get(
      '/confirm-email',
      async function showConfirmEmailChange({ request, query }) {
        requireMail()
        const hash = linkTokenHash(query.token)
        const token = hash && (await ctx.store.mail.findToken(hash, ['change'], now()))
        if (!token) return changeGone(request)
        const path = `/confirm-email?token=${query.token}`
        const session = await readSession(ctx, request)
        // Opening the link changes nothing: signed out, it asks to sign in first and comes back here.
        if (!session) return seeOther(loginUrl(path))
        if (session.user.id !== token.userId) return otherAccount(request, path)
        const csrf = formCsrf(ctx, request, session)
        return htmlPage(() => <ConfirmEmailChangePage csrf={csrf.token} token={query.token!} from={session.user.email} to={token.email} />, {
          speech: speechOf(ctx.config, request, { user: session.user }),
        })
      },
      { query: TokenQuery },
    )
    .post(
      '/confirm-email',
      async function confirmEmailChange({ request, body }) {
        requireMail()
        const session = await readSession(ctx, request)
        if (!session || !csrfAccepted(ctx, request, session, body.csrf_token)) throw forbidden()
        const hash = linkTokenHash(body.token)
        // A link's user never changes: the one found here is the one used below, or it is gone.
        const token = hash && (await ctx.store.mail.findToken(hash, ['change'], now()))
        if (!hash || !token) return changeGone(request)
        if (token.userId !== session.user.id) return otherAccount(request, `/confirm-email?token=${body.token}`)
        const outcome = await ctx.store.mail.useToken(hash, ['change'], now(), (used, user): TokenUse => ({
          email: used.email,
          // The link reached the new mailbox.
          emailVerified: true,
          mail: [emailChangedMessage(recipient(ctx.config, { ...session.user, email: user.email }), used.email)],
        }))
        if (!outcome.ok && outcome.reason === 'taken')
          return htmlPage(() => <NoticePage title={msg('email.takenTitle')} message={msg('email.taken')} link={{ href: '/account', label: msg('link.yourAccount') }} />, {
            speech: speechOf(ctx.config, request, { user: session.user }),
            status: 409,
          })
        if (!outcome.ok) return changeGone(request)
        await ctx.audit.record('email.changed', { userId: session.user.id, request })
        const changedTo = outcome.token.email
        return htmlPage(() => <NoticePage title={msg('email.changedTitle')} message={msg('email.changed', { email: changedTo })} link={{ href: '/account', label: msg('link.yourAccount') }} />, {
          speech: speechOf(ctx.config, request, { user: session.user }),
        })
      },
      { parse: parsePageForm, body: TokenForm },
    )
}
