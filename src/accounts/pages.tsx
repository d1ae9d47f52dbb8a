/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { ProviderButtons, type ProviderButton } from '../providers/pages'
import { Html } from '@elysiajs/html'
import { ButtonForm, CsrfField, ErrorNote, Hidden, LastUsed, Layout, When, attr } from '../views/layout'
import type { AuditEvent } from '../db/store'
import { ACCOUNT_KINDS } from '../audit'
import { PasskeyScripts, PasskeySignInForm, SecuritySections, type SecurityState } from './mfa-pages'
import { DeleteAccountSection } from './profile-pages'
import type { User } from './users'
import { PASSWORD_MAX, PASSWORD_MIN } from './users'
import { raw, t, th } from '../i18n'
import { isKnownAddress } from '../web/client-address'
import type { MessageKey } from '../i18n/types'

function ContinueTo(props: { appName?: string }) {
  return props.appName ? (
    <p class="muted">
      {th('signIn.continueTo', { app: raw(<strong safe>{props.appName}</strong>) })}
    </p>
  ) : (
    ''
  )
}

export function LoginPage(props: { csrf: string; returnTo?: string; appName?: string; error?: string; email?: string; signupOpen: boolean; passkeys: boolean; mail: boolean; note?: string; providers?: ProviderButton[] }) {
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
      <ProviderButtons providers={props.providers ?? []} returnTo={props.returnTo} />
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

export function SignupPage(props: { csrf: string; returnTo?: string; appName?: string; error?: string; fullName?: string; email?: string; providers?: ProviderButton[] }) {
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
      <ProviderButtons providers={props.providers ?? []} returnTo={props.returnTo} />
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

/** The audit log's kinds that /account words (the catalog's `activity.*`, src/audit.ts); another kind shows as it is. */
const ACTIVITY: ReadonlySet<string> = new Set(ACCOUNT_KINDS)
const METHODS = new Set(['password', 'passkey', 'two_step', 'recovery_code'])
const methodWords = (method: string) => (METHODS.has(method) ? t(`activity.method.${method}` as MessageKey & `activity.method.${string}`) : method)
const activityWords = (kind: string) => (ACTIVITY.has(kind) ? t(`activity.${kind}` as MessageKey & `activity.${string}`) : kind)

function RecentActivity(props: { events: AuditEvent[] }) {
  if (props.events.length === 0) return <p class="muted">{th('account.noActivity')}</p>
  return (
    <ul class="activity">
      {props.events.map((e) => (
        <li>
          <When at={e.at} /> — <span safe>{activityWords(e.kind)}</span>
          {e.detail && JSON.parse(e.detail).method ? <span class="muted" safe>{` (${methodWords(JSON.parse(e.detail).method)})`}</span> : ''}
          {e.address ? <span class="muted" safe>{' ' + (isKnownAddress(e.address) ? t('account.activityFrom', { address: e.address }) : t('account.activityFromUnknown'))}</span> : ''}
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
  /** "Your apps": what the user may open, with logos. */
  yourApps?: JSX.Element
  /** "Connected accounts" (upstream providers). */
  connected?: JSX.Element
  /** "Language and time zone". */
  language?: JSX.Element
}) {
  return (
    <Layout title={t('account.title')} wide>
      <div class="profile">
        <img src={attr(props.avatarUrl)} alt="" />
        <div>
          <h1 safe>{props.user.fullName}</h1>
          <p class="muted" safe>
            {props.user.email}
          </p>
          {props.admin ? (
            <p>
              <a href="/admin">{th('account.admin')}</a>
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
      {props.yourApps ?? ''}
      {props.profile ?? ''}
      {props.email ?? ''}
      <SecuritySections csrf={props.csrf} state={props.security} />
      {props.connected ?? ''}
      {props.sessions ?? ''}
      {props.language ?? ''}
      <h2>{th('account.appsTitle')}</h2>
      {props.apps.length === 0 ? (
        <p class="muted">{th('account.noApps')}</p>
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
                  {th('account.since', { day: raw(<When at={app.grantedAt} />) })}
                  {' · '}
                  <LastUsed at={app.lastUsedAt} />
                </div>
              </div>
              <div class="actions">
                <a href={`/account/data?client_id=${encodeURIComponent(app.clientId)}`} download="">
                  {th('account.downloadData')}
                </a>
                <a href={attr(`/account/data/delete?client_id=${encodeURIComponent(app.clientId)}`)}>{th('account.deleteData')}</a>
                <ButtonForm action="/account/revoke" csrf={props.csrf} fields={{ client_id: app.clientId }} label={t('account.revoke')} kind="danger" />
              </div>
            </li>
          ))}
        </ul>
      )}
      <p>
        <a href="/account/data" download="">
          {th('account.downloadAll')}
        </a>{' '}
        <span class="muted">{th('account.downloadAllHint')}</span>
      </p>
      <h2>{th('account.activityTitle')}</h2>
      <RecentActivity events={props.activity} />
      <div class="actions">
        <ButtonForm action="/logout" csrf={props.csrf} label={t('account.signOut')} kind="secondary" />
        <ButtonForm action="/account/sign-out-everywhere" csrf={props.csrf} label={t('account.signOutEverywhere')} kind="secondary" />
      </div>
      <DeleteAccountSection />
    </Layout>
  )
}
