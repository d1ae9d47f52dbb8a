/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import { ButtonForm, CsrfField, ErrorNote, Hidden, LastUsed, Layout, When, attr } from '../views/layout'
import type { AuditEvent } from '../db/store'
import { PasskeyScripts, PasskeySignInForm, SecuritySections, type SecurityState } from './mfa-pages'
import { DeleteAccountSection } from './profile-pages'
import type { User } from './users'
import { PASSWORD_MAX, PASSWORD_MIN } from './users'
import { raw, t, th } from '../i18n'

function ContinueTo(props: { appName?: string }) {
  return props.appName ? (
    <p class="muted">
      {th('signIn.continueTo', { app: raw(<strong safe>{props.appName}</strong>) })}
    </p>
  ) : (
    ''
  )
}

export function LoginPage(props: { csrf: string; returnTo?: string; appName?: string; error?: string; email?: string; signupOpen: boolean; passkeys: boolean; mail: boolean; note?: string }) {
  const signupHref = props.returnTo ? `/signup?return_to=${encodeURIComponent(props.returnTo)}` : '/signup'
  return (
    <Layout title={t('signIn.title')}>
      <h1>{th('signIn.title')}</h1>
      <ContinueTo appName={props.appName} />
      {props.note ? (
        <p role="status" safe>
          {props.note}
        </p>
      ) : (
        ''
      )}
      <ErrorNote message={props.error} />
      <form method="post" action="/login">
        <CsrfField token={props.csrf} />
        {props.returnTo ? <Hidden name="return_to" value={props.returnTo} /> : ''}
        <label for="email">{th('signIn.email')}</label>
        <input id="email" name="email" type="email" autocomplete={props.passkeys ? 'username webauthn' : 'username'} required value={attr(props.email ?? '')} />
        <label for="password">{th('signIn.password')}</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <div class="actions">
          <button type="submit">{th('signIn.submit')}</button>
        </div>
      </form>
      {props.mail ? (
        <p class="muted">
          <a href="/forgot-password">{th('signIn.forgot')}</a>
        </p>
      ) : (
        ''
      )}
      {props.passkeys ? <PasskeySignInForm csrf={props.csrf} returnTo={props.returnTo} /> : ''}
      {props.passkeys ? <PasskeyScripts /> : ''}
      {props.signupOpen ? (
        <p class="muted">
          {th('signIn.noAccount', { link: raw(<a href={attr(signupHref)}>{th('signIn.createAccount')}</a>) })}
        </p>
      ) : (
        ''
      )}
    </Layout>
  )
}

export function SignupPage(props: { csrf: string; returnTo?: string; appName?: string; error?: string; fullName?: string; email?: string }) {
  return (
    <Layout title={t('signUp.title')}>
      <h1>{th('signUp.title')}</h1>
      <ContinueTo appName={props.appName} />
      <ErrorNote message={props.error} />
      <form method="post" action="/signup">
        <CsrfField token={props.csrf} />
        {props.returnTo ? <Hidden name="return_to" value={props.returnTo} /> : ''}
        <label for="full_name">{th('signUp.fullName')}</label>
        <input id="full_name" name="full_name" type="text" autocomplete="name" required value={attr(props.fullName ?? '')} />
        <label for="email">{th('signIn.email')}</label>
        <input id="email" name="email" type="email" autocomplete="username" required value={attr(props.email ?? '')} />
        <label for="password">{th('signIn.password')}</label>
        <input
          id="password"
          name="password"
          type="password"
          autocomplete="new-password"
          required
          minlength={String(PASSWORD_MIN)}
          maxlength={String(PASSWORD_MAX)}
        />
        <div class="actions">
          <button type="submit">{th('signUp.submit')}</button>
        </div>
      </form>
      <p class="muted">
        {th('signUp.haveAccount', { link: raw(<a href={attr(props.returnTo ? `/login?return_to=${encodeURIComponent(props.returnTo)}` : '/login')}>{th('signUp.signIn')}</a>) })}
      </p>
    </Layout>
  )
}

/** An app the user has allowed, with what it may do in the consent page's words (all its resources together). */
export interface AppAccess {
  clientId: string
  name: string
  access: string[]
  grantedAt: number
  lastUsedAt: number | null
}

/** The audit log's kinds, in the words /account shows. */
const ACTIVITY: Record<string, string> = {
  'sign_in.succeeded': 'Signed in',
  'sign_in.failed': 'Failed sign-in',
  'consent.granted': 'Allowed an app',
  'consent.revoked': 'Revoked an app',
  'token.issued': 'An app got a token',
  'token.refreshed': 'An app refreshed its token',
  'refresh.reuse_detected': 'A stolen or replayed token was refused',
  'passkey.added': 'Added a passkey',
  'passkey.removed': 'Removed a passkey',
  'two_step.enabled': 'Turned on two-step verification',
  'two_step.disabled': 'Turned off two-step verification',
  'recovery_codes.regenerated': 'Made new recovery codes',
  'password.changed': 'Set or changed the password',
  'user.updated': 'Profile or account changed',
  'password.removed': 'Removed the password',
  'password.reset': 'Reset the password by email',
  'email.change_requested': 'Asked to change the email address',
  'email.changed': 'Changed the email address',
  'user.created': 'Account created',
  'user.invited': 'Invited',
  'user.signed_out': 'Signed out of other browsers',
  'user.two_step_reset': 'Two-step verification reset by an administrator',
  'user.reset_link_made': 'A password reset link was made by an administrator',
  'group.member_added': 'Added to a group',
  'group.member_removed': 'Removed from a group',
  'site.sign_in': 'Signed in to a protected site',
}

function RecentActivity(props: { events: AuditEvent[] }) {
  if (props.events.length === 0) return <p class="muted">No recent activity.</p>
  return (
    <ul class="activity">
      {props.events.map((e) => (
        <li>
          <When at={e.at} /> — <span safe>{ACTIVITY[e.kind] ?? e.kind}</span>
          {e.detail && JSON.parse(e.detail).method ? <span class="muted" safe>{` (${JSON.parse(e.detail).method})`}</span> : ''}
          {e.address ? <span class="muted" safe>{` from ${e.address}`}</span> : ''}
        </li>
      ))}
    </ul>
  )
}

export function AccountPage(props: {
  user: User
  avatarUrl: string
  apps: AppAccess[]
  activity: AuditEvent[]
  csrf: string
  security: SecurityState
  error?: string
  /** What a change just did (a password changed, an app's data deleted, a link sent…). */
  notice?: string
  email?: JSX.Element
  profile?: JSX.Element
  /** An admin: the page links to /admin. */
  admin?: boolean
  /** "Where you're signed in". */
  sessions?: JSX.Element
}) {
  return (
    <Layout title="Your account" wide>
      <div class="profile">
        <img src={attr(props.avatarUrl)} alt="" />
        <div>
          <h1 safe>{props.user.fullName}</h1>
          <p class="muted" safe>
            {props.user.email}
          </p>
          {props.admin ? (
            <p>
              <a href="/admin">Administration</a>
            </p>
          ) : (
            ''
          )}
        </div>
      </div>
      <ErrorNote message={props.error} />
      {props.notice ? (
        <p class="notice" role="status" safe>
          {props.notice}
        </p>
      ) : (
        ''
      )}
      {props.profile ?? ''}
      {props.email ?? ''}
      <SecuritySections csrf={props.csrf} state={props.security} />
      {props.sessions ?? ''}
      <h2>Apps you authorized</h2>
      {props.apps.length === 0 ? (
        <p class="muted">You have not authorized any apps.</p>
      ) : (
        <ul class="apps">
          {props.apps.map((app) => (
            <li>
              <div>
                <strong safe>{app.name}</strong>
                <div class="muted" safe>
                  {app.access.join(' · ')}
                </div>
                <div class="muted">
                  Since <When at={app.grantedAt} />
                  {' · '}
                  <LastUsed at={app.lastUsedAt} />
                </div>
              </div>
              <div class="actions">
                <a href={`/account/data?client_id=${encodeURIComponent(app.clientId)}`} download="">
                  Download data
                </a>
                <a href={attr(`/account/data/delete?client_id=${encodeURIComponent(app.clientId)}`)}>Delete data</a>
                <ButtonForm action="/account/revoke" csrf={props.csrf} fields={{ client_id: app.clientId }} label="Revoke access" kind="danger" />
              </div>
            </li>
          ))}
        </ul>
      )}
      <p>
        <a href="/account/data" download="">
          Download all my data
        </a>{' '}
        <span class="muted">(your profile, the apps you authorized and every setting they saved, as JSON)</span>
      </p>
      <h2>Recent activity</h2>
      <RecentActivity events={props.activity} />
      <div class="actions">
        <ButtonForm action="/logout" csrf={props.csrf} label="Sign out" kind="secondary" />
        <ButtonForm action="/account/sign-out-everywhere" csrf={props.csrf} label="Sign out everywhere" kind="secondary" />
      </div>
      <DeleteAccountSection />
    </Layout>
  )
}
