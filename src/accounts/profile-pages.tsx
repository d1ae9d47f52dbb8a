/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import { CsrfField, ErrorNote, Hidden, Layout, attr } from '../views/layout'
import { raw, t, th } from '../i18n'
import { AVATAR_URL_MAX, NAME_MAX, PASSWORD_MAX, PASSWORD_MIN, type User } from './users'

/** /account's profile: the name and the picture (an https:// URL; empty: the generated initials). */
export function ProfileSection(props: { csrf: string; user: User }) {
  return (
    <>
      <h2>{th('profile.title')}</h2>
      <form method="post" action="/account/profile">
        <CsrfField token={props.csrf} />
        <label for="profile-name">{th('profile.fullName')}</label>
        <input id="profile-name" name="full_name" type="text" autocomplete="name" required maxlength={String(NAME_MAX)} value={attr(props.user.fullName)} />
        <label for="profile-avatar">{th('profile.picture')}</label>
        <input id="profile-avatar" name="avatar_url" type="url" maxlength={String(AVATAR_URL_MAX)} placeholder="https://" value={attr(props.user.avatarUrl ?? '')} />
        <p class="muted">{th('profile.pictureHint')}</p>
        <div class="actions">
          <button type="submit">{th('profile.save')}</button>
        </div>
      </form>
    </>
  )
}

/** "Change password": the current one, then the new one (a user without one gets "Set password" instead). */
export function ChangePasswordForm(props: { csrf: string }) {
  return (
    <form method="post" action="/account/password/change">
      <CsrfField token={props.csrf} />
      <label for="current-password">{th('password.current')}</label>
      <input id="current-password" name="current_password" type="password" autocomplete="current-password" required />
      <label for="changed-password">{th('password.new')}</label>
      <input id="changed-password" name="new_password" type="password" autocomplete="new-password" required minlength={String(PASSWORD_MIN)} maxlength={String(PASSWORD_MAX)} />
      <p class="muted">{th('password.othersSignedOut')}</p>
      <div class="actions">
        <button type="submit">{th('password.change')}</button>
      </div>
    </form>
  )
}

/** The last section of /account: the way to the confirmation page. */
export function DeleteAccountSection() {
  return (
    <>
      <h2>{th('deleteAccount.section')}</h2>
      <p class="muted">{th('deleteAccount.sectionHint')}</p>
      <p>
        <a href="/account/delete">{th('deleteAccount.link')}</a>
      </p>
    </>
  )
}

/** What deleting the account takes with it, in numbers and names. */
export interface AccountContents {
  apps: string[]
  settings: number
  passkeys: number
}

/**
 * The confirmation of "Delete my account": what goes, then the password again — or, for an
 * account without one, a sign-in with a passkey in the last 15 minutes (`signInAgain` when older).
 */
export function DeleteAccountPage(props: { csrf: string; contents: AccountContents; hasPassword: boolean; signInAgain?: string; error?: string }) {
  const { contents } = props
  return (
    <Layout title={t('deleteAccount.title')}>
      <h1>{th('deleteAccount.heading')}</h1>
      <ErrorNote message={props.error} />
      <p>{th('deleteAccount.deletes')}</p>
      <ul>
        <li>{th('deleteAccount.profile')}</li>
        <li>{contents.apps.length ? th('deleteAccount.apps', { count: contents.apps.length, names: contents.apps.join(', ') }) : th('deleteAccount.noApps')}</li>
        <li>{th('deleteAccount.settings', { count: contents.settings })}</li>
        <li>{th('deleteAccount.passkeys', { count: contents.passkeys })}</li>
        <li>{th('deleteAccount.sessions')}</li>
      </ul>
      {props.signInAgain ? (
        <p>{th('deleteAccount.signInAgain', { link: raw(<a href={attr(props.signInAgain)}>{th('deleteAccount.signInAgainLink')}</a>) })}</p>
      ) : (
        <form method="post" action="/account/delete">
          <CsrfField token={props.csrf} />
          {props.hasPassword ? (
            <>
              <label for="confirm-password">{th('deleteAccount.password')}</label>
              <input id="confirm-password" name="password" type="password" autocomplete="current-password" required />
            </>
          ) : (
            ''
          )}
          <div class="actions">
            <button type="submit" class="danger">
              {th('deleteAccount.submit')}
            </button>
            <a href="/account">{th('common.cancel')}</a>
          </div>
        </form>
      )}
    </Layout>
  )
}

/** "Delete data" of one app, asked first: its name and how many settings go. */
export function DeleteDataPage(props: { csrf: string; clientId: string; appName: string; settings: number }) {
  return (
    <Layout title={t('deleteData.title')}>
      <h1>{th('deleteData.heading', { app: raw(<span safe>{props.appName}</span>) })}</h1>
      <p>{th('deleteData.what', { count: props.settings, app: props.appName })}</p>
      <form method="post" action="/account/data/delete">
        <CsrfField token={props.csrf} />
        <Hidden name="client_id" value={props.clientId} />
        <div class="actions">
          <button type="submit" class="danger">
            {th('deleteData.submit')}
          </button>
          <a href="/account">{th('common.cancel')}</a>
        </div>
      </form>
    </Layout>
  )
}
