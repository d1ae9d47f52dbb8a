/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import { CsrfField, ErrorNote, Hidden, Layout, attr } from '../views/layout'
import { AVATAR_UPLOAD_PATH, isUploadedAvatar } from './avatar'
import { AVATAR_URL_MAX, NAME_MAX, PASSWORD_MAX, PASSWORD_MIN, type User } from './users'

// The profile's words, in one place.
const PROFILE_WORDS = {
  pictureAddress: 'Picture (an https:// image address)',
  emptyNote: 'Leave it empty for a picture of your initials.',
  uploadedNote: 'You uploaded your picture. An address here replaces it.',
  upload: 'Upload a picture',
  uploadNote: 'PNG, JPEG or WebP, at most 1 MiB.',
  uploadButton: 'Upload picture',
  remove: 'Remove picture',
}

/**
 * /account's profile: the name and the picture — an https:// URL, an uploaded file (its own
 * multipart form) or, with neither, the generated initials; "Remove picture" when there is one.
 */
export function ProfileSection(props: { csrf: string; user: User }) {
  const uploaded = isUploadedAvatar(props.user.avatarUrl)
  return (
    <>
      <h2>Profile</h2>
      <form method="post" action="/account/profile">
        <CsrfField token={props.csrf} />
        <label for="profile-name">Full name</label>
        <input id="profile-name" name="full_name" type="text" autocomplete="name" required maxlength={String(NAME_MAX)} value={attr(props.user.fullName)} />
        <label for="profile-avatar">{PROFILE_WORDS.pictureAddress}</label>
        <input id="profile-avatar" name="avatar_url" type="url" maxlength={String(AVATAR_URL_MAX)} placeholder="https://" value={attr(uploaded ? '' : (props.user.avatarUrl ?? ''))} />
        <p class="muted">{uploaded ? PROFILE_WORDS.uploadedNote : PROFILE_WORDS.emptyNote}</p>
        <div class="actions">
          <button type="submit">Save profile</button>
        </div>
      </form>
      <form method="post" action={AVATAR_UPLOAD_PATH} enctype="multipart/form-data">
        <CsrfField token={props.csrf} />
        <label for="profile-picture">{PROFILE_WORDS.upload}</label>
        <input id="profile-picture" name="picture" type="file" accept="image/png,image/jpeg,image/webp" required />
        <p class="muted">{PROFILE_WORDS.uploadNote}</p>
        <div class="actions">
          <button type="submit" class="secondary">
            {PROFILE_WORDS.uploadButton}
          </button>
        </div>
      </form>
      {props.user.avatarUrl !== null ? (
        <form method="post" action="/account/avatar/remove">
          <CsrfField token={props.csrf} />
          <div class="actions">
            <button type="submit" class="secondary">
              {PROFILE_WORDS.remove}
            </button>
          </div>
        </form>
      ) : (
        ''
      )}
    </>
  )
}

/** "Change password": the current one, then the new one (a user without one gets "Set password" instead). */
export function ChangePasswordForm(props: { csrf: string }) {
  return (
    <form method="post" action="/account/password/change">
      <CsrfField token={props.csrf} />
      <label for="current-password">Current password</label>
      <input id="current-password" name="current_password" type="password" autocomplete="current-password" required />
      <label for="changed-password">New password</label>
      <input id="changed-password" name="new_password" type="password" autocomplete="new-password" required minlength={String(PASSWORD_MIN)} maxlength={String(PASSWORD_MAX)} />
      <p class="muted">Your other browsers are signed out.</p>
      <div class="actions">
        <button type="submit">Change password</button>
      </div>
    </form>
  )
}

/** The last section of /account: the way to the confirmation page. */
export function DeleteAccountSection() {
  return (
    <>
      <h2>Delete my account</h2>
      <p class="muted">Your account, the apps you authorized and every setting they saved, deleted for good.</p>
      <p>
        <a href="/account/delete">Delete my account…</a>
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

const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

/**
 * The confirmation of "Delete my account": what goes, then the password again — or, for an
 * account without one, a sign-in with a passkey in the last 15 minutes (`signInAgain` when older).
 */
export function DeleteAccountPage(props: { csrf: string; contents: AccountContents; hasPassword: boolean; signInAgain?: string; error?: string }) {
  const { contents } = props
  return (
    <Layout title="Delete your account">
      <h1>Delete your account?</h1>
      <ErrorNote message={props.error} />
      <p>This deletes, at once and for good:</p>
      <ul>
        <li>your profile and your email address;</li>
        <li safe>
          {contents.apps.length ? `the access of ${count(contents.apps.length, 'app', 'apps')} you authorized: ${contents.apps.join(', ')};` : 'no app access (you authorized none);'}
        </li>
        <li safe>{`${count(contents.settings, 'setting', 'settings')} saved by apps;`}</li>
        <li safe>{`${count(contents.passkeys, 'passkey', 'passkeys')}, and two-step verification;`}</li>
        <li>every browser signed in to it, and every token an app holds.</li>
      </ul>
      {props.signInAgain ? (
        <p>
          To confirm, <a href={attr(props.signInAgain)}>sign in again with your passkey</a>, then come back to this page.
        </p>
      ) : (
        <form method="post" action="/account/delete">
          <CsrfField token={props.csrf} />
          {props.hasPassword ? (
            <>
              <label for="confirm-password">Your password</label>
              <input id="confirm-password" name="password" type="password" autocomplete="current-password" required />
            </>
          ) : (
            ''
          )}
          <div class="actions">
            <button type="submit" class="danger">
              Delete my account
            </button>
            <a href="/account">Cancel</a>
          </div>
        </form>
      )}
    </Layout>
  )
}

/** "Delete data" of one app, asked first: its name and how many settings go. */
export function DeleteDataPage(props: { csrf: string; clientId: string; appName: string; settings: number }) {
  return (
    <Layout title="Delete data">
      <h1>
        Delete your data in <span safe>{props.appName}</span>?
      </h1>
      <p safe>{`${count(props.settings, 'setting', 'settings')} that ${props.appName} saved for you will be deleted, on every device. The app keeps its access; revoke it separately.`}</p>
      <form method="post" action="/account/data/delete">
        <CsrfField token={props.csrf} />
        <Hidden name="client_id" value={props.clientId} />
        <div class="actions">
          <button type="submit" class="danger">
            Delete data
          </button>
          <a href="/account">Cancel</a>
        </div>
      </form>
    </Layout>
  )
}
