/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import type { RecoveryRemoved } from '../db/store'
import { CsrfField, ErrorNote, Hidden, Layout, attr } from '../views/layout'
import { PASSWORD_MAX, PASSWORD_MIN } from './users'
import { raw, t, th } from '../i18n'



export function ForgotPasswordPage(props: { csrf: string; sent?: boolean; error?: string }) {
  return (
    <Layout title={t('forgot.title')}>
      <h1>{th('forgot.title')}</h1>
      {props.sent ? <p role="status">{th('forgot.sent')}</p> : <p class="muted">{th('forgot.intro')}</p>}
      <ErrorNote message={props.error} />
      <form method="post" action="/forgot-password">
        <CsrfField token={props.csrf} />
        <label for="email">{th('signIn.email')}</label>
        <input id="email" name="email" type="email" autocomplete="username" required />
        <div class="actions">
          <button type="submit">{th('forgot.submit')}</button>
        </div>
      </form>
      <p class="muted">
        <a href="/login">{th('forgot.back')}</a>
      </p>
    </Layout>
  )
}

export function ResetPasswordPage(props: { csrf: string; token: string; invite: boolean; error?: string }) {
  const title = props.invite ? t('reset.inviteTitle') : t('reset.title')
  return (
    <Layout title={title}>
      <h1 safe>{title}</h1>
      <ErrorNote message={props.error} />
      <form method="post" action="/reset-password">
        <CsrfField token={props.csrf} />
        <Hidden name="token" value={props.token} />
        <label for="password">{th('password.new')}</label>
        <input id="password" name="password" type="password" autocomplete="new-password" required minlength={String(PASSWORD_MIN)} maxlength={String(PASSWORD_MAX)} />
        <div class="actions">
          <button type="submit">{th('reset.submit')}</button>
        </div>
      </form>
    </Layout>
  )
}

/** A message page: a link was used, is gone, or a change is done. */
export function NoticePage(props: { title: string; message: string; link?: { href: string; label: string } }) {
  return (
    <Layout title={props.title}>
      <h1 safe>{props.title}</h1>
      <p safe>{props.message}</p>
      {props.link ? (
        <p>
          <a href={attr(props.link.href)} safe>
            {props.link.label}
          </a>
        </p>
      ) : (
        ''
      )}
    </Layout>
  )
}

/** EMAIL_VERIFICATION=required: an unverified account can authorize nothing until it verifies; `returnTo`: where it was going. */
export function CheckEmailPage(props: { csrf: string; email: string; resent?: boolean; returnTo?: string }) {
  return (
    <Layout title={t('checkEmail.title')}>
      <h1>{th('checkEmail.title')}</h1>
      <p>{th('checkEmail.sent', { email: raw(<strong safe>{props.email}</strong>) })}</p>
      {props.resent ? <p role="status">{th('checkEmail.resent')}</p> : ''}
      <form method="post" action="/verify-email/resend">
        <CsrfField token={props.csrf} />
        {props.returnTo ? <Hidden name="return_to" value={props.returnTo} /> : ''}
        <div class="actions">
          <button type="submit" class="secondary">
            {th('checkEmail.resend')}
          </button>
        </div>
      </form>
      {props.returnTo ? (
        <p class="muted">
          {th('checkEmail.elsewhere', { link: raw(<a href={attr(props.returnTo)}>{th('checkEmail.continue')}</a>) })}
        </p>
      ) : (
        ''
      )}
    </Layout>
  )
}

/** /account's email section: the address, whether it is verified, and a form to change it. */
export function EmailSection(props: { csrf: string; email: string; verified: boolean; notice?: string }) {
  return (
    <>
      <h2>{th('email.title')}</h2>
      <p>
        <span safe>{props.email}</span> <span class="muted">{props.verified ? th('email.verified') : th('email.notVerified')}</span>
      </p>
      {props.notice ? (
        <p role="status" safe>
          {props.notice}
        </p>
      ) : (
        ''
      )}
      {props.verified ? (
        ''
      ) : (
        <form method="post" action="/verify-email/resend" class="inline">
          <CsrfField token={props.csrf} />
          <button type="submit" class="secondary">
            {th('email.resend')}
          </button>
        </form>
      )}
      <form method="post" action="/account/email">
        <CsrfField token={props.csrf} />
        <label for="new-email">{th('email.new')}</label>
        <input id="new-email" name="email" type="email" autocomplete="email" required />
        <div class="actions">
          <button type="submit" class="secondary">
            {th('email.change')}
          </button>
        </div>
      </form>
    </>
  )
}

/** The page an email change link opens (SPEC "Change email"): nothing changes until "Confirm" is pressed by the account's own session. */
export function ConfirmEmailChangePage(props: { csrf: string; token: string; from: string; to: string }) {
  return (
    <Layout title={t('email.confirmChangeTitle')}>
      <h1>{th('email.confirmChangeTitle')}</h1>
      <p>{th('email.confirmChange', { from: raw(<strong safe>{props.from}</strong>), to: raw(<strong safe>{props.to}</strong>) })}</p>
      <form method="post" action="/confirm-email">
        <CsrfField token={props.csrf} />
        <Hidden name="token" value={props.token} />
        <div class="actions">
          <button type="submit">{th('email.confirm')}</button>
        </div>
      </form>
      <p class="muted">
        <a href="/account">{th('common.cancel')}</a>
      </p>
    </Layout>
  )
}

/**
 * The page a verify link opens (SPEC "Verify"): nothing changes until "Confirm" is pressed by a
 * session of the account, so a mail scanner's GET or someone else's click verifies nothing.
 */
export function ConfirmVerifyPage(props: { csrf: string; token: string; email: string; returnTo?: string }) {
  return (
    <Layout title={t('email.confirmVerifyTitle')}>
      <h1>{th('email.confirmVerifyTitle')}</h1>
      <p>{th('email.confirmVerify', { email: raw(<strong safe>{props.email}</strong>) })}</p>
      <form method="post" action="/verify-email">
        <CsrfField token={props.csrf} />
        <Hidden name="token" value={props.token} />
        {props.returnTo ? <Hidden name="return_to" value={props.returnTo} /> : ''}
        <div class="actions">
          <button type="submit">{th('email.confirm')}</button>
        </div>
      </form>
    </Layout>
  )
}

/** What the sign-in page says when a verify link sent a signed-out browser there. */
export const VERIFY_SIGN_IN_NOTE = () => t('email.verifySignInNote')

/** After a reset link recovered an unverified account (SPEC "Recovery"): the password is set, and this is what was removed. */
export function RecoveredPage(props: { removed: RecoveryRemoved }) {
  const { passkeys, totp, recoveryCodes, apps, sessions, identities } = props.removed
  const items = [
    ...passkeys.map((name) => t('reset.removedPasskey', { name })),
    ...identities.map((i) => (i.email ? t('reset.removedIdentity', { provider: i.provider, email: i.email }) : t('reset.removedIdentityNoEmail', { provider: i.provider }))),
    ...(totp ? [t('reset.removedTotp')] : []),
    ...(recoveryCodes ? [t('reset.removedCodes', { count: recoveryCodes })] : []),
    ...apps.map((name) => t('reset.removedApp', { name })),
    ...(sessions ? [t('reset.removedSessions', { count: sessions })] : []),
  ]
  return (
    <Layout title={t('reset.doneTitle')}>
      <h1>{th('reset.doneTitle')}</h1>
      <p>{th('reset.recovered')}</p>
      {items.length ? (
        <>
          <p>{th('reset.removedIntro')}</p>
          <ul class="removed">
            {items.map((item) => (
              <li safe>{item}</li>
            ))}
          </ul>
        </>
      ) : (
        ''
      )}
      <p>
        <a href="/login">{th('reset.signIn')}</a>
      </p>
    </Layout>
  )
}
