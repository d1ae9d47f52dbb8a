/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import { CsrfField, ErrorNote, Hidden, Layout } from '../views/layout'
import { PASSWORD_MAX, PASSWORD_MIN } from './users'

export const FORGOT_SENT = 'If an account exists for that address, we sent a link. It works for 30 minutes.'

export function ForgotPasswordPage(props: { csrf: string; sent?: boolean; error?: string }) {
  return (
    <Layout title="Forgot password">
      <h1>Forgot password</h1>
      {props.sent ? <p role="status">{FORGOT_SENT}</p> : <p class="muted">We will send a link to choose a new password.</p>}
      <ErrorNote message={props.error} />
      <form method="post" action="/forgot-password">
        <CsrfField token={props.csrf} />
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="username" required />
        <div class="actions">
          <button type="submit">Send reset link</button>
        </div>
      </form>
      <p class="muted">
        <a href="/login">Back to sign in</a>
      </p>
    </Layout>
  )
}

export function ResetPasswordPage(props: { csrf: string; token: string; invite: boolean; error?: string }) {
  const title = props.invite ? 'Choose your password' : 'Choose a new password'
  return (
    <Layout title={title}>
      <h1>{title}</h1>
      <ErrorNote message={props.error} />
      <form method="post" action="/reset-password">
        <CsrfField token={props.csrf} />
        <Hidden name="token" value={props.token} />
        <label for="password">New password</label>
        <input id="password" name="password" type="password" autocomplete="new-password" required minlength={String(PASSWORD_MIN)} maxlength={String(PASSWORD_MAX)} />
        <div class="actions">
          <button type="submit">Set password</button>
        </div>
      </form>
    </Layout>
  )
}

/** A message page: a link was used, is gone, or a change is done. */
export function NoticePage(props: { title: string; message: string; link?: { href: string; label: string } }) {
  return (
    <Layout title={props.title}>
      <h1>{props.title}</h1>
      <p safe>{props.message}</p>
      {props.link ? (
        <p>
          <a href={props.link.href}>{props.link.label}</a>
        </p>
      ) : (
        ''
      )}
    </Layout>
  )
}

/** EMAIL_VERIFICATION=required: an unverified account can authorize nothing until it verifies. */
export function CheckEmailPage(props: { csrf: string; email: string; resent?: boolean }) {
  return (
    <Layout title="Check your email">
      <h1>Check your email</h1>
      <p>
        We sent a link to <strong safe>{props.email}</strong>. Open it to verify your address, then come back.
      </p>
      {props.resent ? <p role="status">We sent a new link.</p> : ''}
      <form method="post" action="/verify-email/resend">
        <CsrfField token={props.csrf} />
        <div class="actions">
          <button type="submit" class="secondary">
            Resend
          </button>
        </div>
      </form>
    </Layout>
  )
}

/** /account's email section: the address, whether it is verified, and a form to change it. */
export function EmailSection(props: { csrf: string; email: string; verified: boolean; notice?: string }) {
  return (
    <>
      <h2>Email</h2>
      <p>
        <span safe>{props.email}</span> <span class="muted">{props.verified ? '· verified' : '· not verified'}</span>
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
            Resend verification link
          </button>
        </form>
      )}
      <form method="post" action="/account/email">
        <CsrfField token={props.csrf} />
        <label for="new-email">New email</label>
        <input id="new-email" name="email" type="email" autocomplete="email" required />
        <div class="actions">
          <button type="submit" class="secondary">
            Change email
          </button>
        </div>
      </form>
    </>
  )
}
