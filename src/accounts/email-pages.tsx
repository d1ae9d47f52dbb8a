/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import type { RecoveryRemoved } from '../db/store'
import { CsrfField, ErrorNote, Hidden, Layout, attr } from '../views/layout'
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

/** EMAIL_VERIFICATION=required: an unverified account can authorize nothing until it verifies; `returnTo`: where it was going. */
export function CheckEmailPage(props: { csrf: string; email: string; resent?: boolean; returnTo?: string }) {
  return (
    <Layout title="Check your email">
      <h1>Check your email</h1>
      <p>
        We sent a link to <strong safe>{props.email}</strong>. Open it to verify your address, then come back.
      </p>
      {props.resent ? <p role="status">We sent a new link.</p> : ''}
      <form method="post" action="/verify-email/resend">
        <CsrfField token={props.csrf} />
        {props.returnTo ? <Hidden name="return_to" value={props.returnTo} /> : ''}
        <div class="actions">
          <button type="submit" class="secondary">
            Resend
          </button>
        </div>
      </form>
      {props.returnTo ? (
        <p class="muted">
          Verified on another device? <a href={attr(props.returnTo)}>Continue</a>
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

/** The page an email change link opens (SPEC "Change email"): nothing changes until "Confirm" is pressed by the account's own session. */
export function ConfirmEmailChangePage(props: { csrf: string; token: string; from: string; to: string }) {
  return (
    <Layout title="Confirm your new email address">
      <h1>Confirm your new email address</h1>
      <p>
        Change the email address of your account from <strong safe>{props.from}</strong> to <strong safe>{props.to}</strong>?
      </p>
      <form method="post" action="/confirm-email">
        <CsrfField token={props.csrf} />
        <Hidden name="token" value={props.token} />
        <div class="actions">
          <button type="submit">Confirm</button>
        </div>
      </form>
      <p class="muted">
        <a href="/account">Cancel</a>
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
    <Layout title="Confirm your email address">
      <h1>Confirm your email address</h1>
      <p>
        Confirm that <strong safe>{props.email}</strong> is the address of your account?
      </p>
      <form method="post" action="/verify-email">
        <CsrfField token={props.csrf} />
        <Hidden name="token" value={props.token} />
        {props.returnTo ? <Hidden name="return_to" value={props.returnTo} /> : ''}
        <div class="actions">
          <button type="submit">Confirm</button>
        </div>
      </form>
    </Layout>
  )
}

/** What the sign-in page says when a verify link sent a signed-out browser there. */
export const VERIFY_SIGN_IN_NOTE = 'Sign in to the account to confirm this address. If you did not create this account, use Forgot password to take it over.'

/** After a reset link recovered an unverified account (SPEC "Recovery"): the password is set, and this is what was removed. */
export function RecoveredPage(props: { removed: RecoveryRemoved }) {
  const { passkeys, totp, recoveryCodes, apps, sessions, identities } = props.removed
  const items = [
    ...passkeys.map((name) => `The passkey "${name}"`),
    ...identities.map((i) => `The connected ${i.provider} account${i.email ? ` ${i.email}` : ''}`),
    ...(totp ? ['Two-step verification (its authenticator app secret)'] : []),
    ...(recoveryCodes ? [`${recoveryCodes} recovery code${recoveryCodes === 1 ? '' : 's'}`] : []),
    ...apps.map((name) => `The access of the app "${name}" (its consent and tokens)`),
    ...(sessions ? [`${sessions} signed-in browser${sessions === 1 ? '' : 's'}`] : []),
  ]
  return (
    <Layout title="Password set">
      <h1>Password set</h1>
      <p>Your password is set and your email is verified. Sign in with it.</p>
      {items.length ? (
        <>
          <p>Your address was not verified yet, so anyone could have set up this account. Everything set up on it before was removed:</p>
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
        <a href="/login">Sign in</a>
      </p>
    </Layout>
  )
}
