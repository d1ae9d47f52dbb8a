/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import type { SignInProof } from './confirm'
import { CsrfField, ErrorNote, Hidden, Layout, attr } from '../views/layout'
import { PasskeyScripts } from './mfa-pages'
import { AVATAR_UPLOAD_PATH, isUploadedAvatar } from './avatar'
import { raw, t, th } from '../i18n'
import { AVATAR_URL_MAX, NAME_MAX, PASSWORD_MAX, PASSWORD_MIN, type User } from './users'

// The profile's words, in one place.

/**
 * /account's profile: the name and the picture — an https:// URL, an uploaded file (its own
 * multipart form) or, with neither, the generated initials; "Remove picture" when there is one.
 */
export function ProfileSection(props: { csrf: string; user: User }) {
  const uploaded = isUploadedAvatar(props.user.avatarUrl)
  return (
    <>
      <h2>{th('profile.title')}</h2>
      <form method="post" action="/account/profile">
        <CsrfField token={props.csrf} />
        <label for="profile-name">{th('profile.fullName')}</label>
        <input id="profile-name" name="full_name" type="text" autocomplete="name" required maxlength={String(NAME_MAX)} value={attr(props.user.fullName)} />
        <label for="profile-avatar">{th('profile.picture')}</label>
        <input id="profile-avatar" name="avatar_url" type="url" maxlength={String(AVATAR_URL_MAX)} placeholder="https://" value={attr(uploaded ? '' : (props.user.avatarUrl ?? ''))} />
        <p class="muted">{uploaded ? th('profile.pictureUploaded') : th('profile.pictureHint')}</p>
        <div class="actions">
          <button type="submit">{th('profile.save')}</button>
        </div>
      </form>
      <form method="post" action={AVATAR_UPLOAD_PATH} enctype="multipart/form-data">
        <CsrfField token={props.csrf} />
        <label for="profile-picture">{th('profile.upload')}</label>
        <input id="profile-picture" name="picture" type="file" accept="image/png,image/jpeg,image/webp" required />
        <p class="muted">{th('profile.uploadHint')}</p>
        <div class="actions">
          <button type="submit" class="secondary">
            {th('profile.uploadSubmit')}
          </button>
        </div>
      </form>
      {props.user.avatarUrl !== null ? (
        <form method="post" action="/account/avatar/remove">
          <CsrfField token={props.csrf} />
          <div class="actions">
            <button type="submit" class="secondary">
              {th('profile.removePicture')}
            </button>
          </div>
        </form>
      ) : (
        ''
      )}
    </>
  )
}

// The words of confirming with a passkey, in one place.

/**
 * "Confirm with a passkey": passkeys.js asks for a fresh assertion of this account
 * (/account/passkeys/confirm-options), puts it in the form's `credential` field and submits the
 * form. `alone`: the form's only way (an account without a password), so the button is its
 * submit button, shown even without JavaScript (the server then says a passkey is needed); else
 * a second button, shown by the script.
 */
export function PasskeyConfirm(props: { label: string; alone: boolean; danger?: boolean }) {
  const kind = props.danger ? 'danger' : 'secondary'
  return (
    <>
      <input type="hidden" name="credential" value="" />
      <p class="error passkey-error" role="alert" hidden></p>
      {props.alone ? (
        <button type="submit" class={props.danger ? 'danger' : undefined} data-passkey-confirm="">
          {props.label}
        </button>
      ) : (
        <button type="button" class={kind} data-passkey-confirm="" hidden>
          {props.label}
        </button>
      )}
    </>
  )
}

/** What such an account reads where a password or a passkey would be asked: to delete it, or to set a password. */
export function SignInAgain(props: { proof: SignInProof; to: 'delete' | 'setPassword' }) {
  if (props.proof.fresh) return <p class="muted">{th('confirm.signedInJustNow')}</p>
  const link = raw(<a href={attr(`/login?reauth=1&return_to=${encodeURIComponent(props.proof.returnTo)}`)}>{th('confirm.signInAgainLink')}</a>)
  return (
    <p>
      {th('confirm.connectedOnly')} {props.to === 'delete' ? th('deleteAccount.signInAgain', { link }) : th('confirm.setPasswordSignInAgain', { link })}
    </p>
  )
}

/**
 * "Change password": the current one or a fresh passkey, then the new one. An account without a
 * password sets one here after a fresh passkey (`/account/password`), or, with no passkey either,
 * after a fresh sign-in (`signIn`).
 */
export function ChangePasswordForm(props: { csrf: string; hasPassword: boolean; passkeys: boolean; signIn?: SignInProof }) {
  if (props.signIn && !props.signIn.fresh) return <SignInAgain proof={props.signIn} to="setPassword" />
  if (!props.hasPassword)
    return (
      <form method="post" action="/account/password">
        {props.signIn ? <SignInAgain proof={props.signIn} to="setPassword" /> : <p class="muted">{th('confirm.passkeyOnly')}</p>}
        <CsrfField token={props.csrf} />
        <label for="new-password">{th('password.new')}</label>
        <input id="new-password" name="password" type="password" autocomplete="new-password" required minlength={String(PASSWORD_MIN)} maxlength={String(PASSWORD_MAX)} />
        <div class="actions">
          {props.signIn ? <button type="submit">{th('confirm.setPasswordSubmit')}</button> : <PasskeyConfirm label={t('confirm.setPassword')} alone />}
        </div>
      </form>
    )
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
        {props.passkeys ? <PasskeyConfirm label={t('confirm.changeWithPasskey')} alone={false} /> : ''}
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
 * The confirmation of "Delete my account": what goes, then the password again or a fresh
 * passkey (an account without a password: the passkey only).
 */
export function DeleteAccountPage(props: { csrf: string; contents: AccountContents; hasPassword: boolean; passkeys: boolean; signIn?: SignInProof; error?: string }) {
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
      {props.signIn ? <SignInAgain proof={props.signIn} to="delete" /> : ''}
      {props.signIn && !props.signIn.fresh ? (
        <p>
          <a href="/account">{th('common.cancel')}</a>
        </p>
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
            {props.hasPassword || props.signIn ? (
              <button type="submit" class="danger">
                {th('deleteAccount.submit')}
              </button>
            ) : (
              ''
            )}
            {!props.signIn && (props.passkeys || !props.hasPassword) ? (
              <PasskeyConfirm label={props.hasPassword ? t('confirm.deleteWithPasskey') : t('confirm.deletePasskeyOnly')} alone={!props.hasPassword} danger />
            ) : (
              ''
            )}
            <a href="/account">{th('common.cancel')}</a>
          </div>
        </form>
      )}
      {props.passkeys ? <PasskeyScripts /> : ''}
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
