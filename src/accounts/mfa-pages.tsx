/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import type { PasskeyRecord } from '../db/store'
import { ButtonForm, CsrfField, ErrorNote, Hidden, LastUsed, Layout, When, attr } from '../views/layout'
import { PASSWORD_MAX, PASSWORD_MIN } from './users'
import { ChangePasswordForm } from './profile-pages'
import type { SignInProof } from './confirm'
import { PASSKEY_NAME_MAX } from './passkeys'
import { raw, t, th } from '../i18n'


/** The scripts of pages that offer passkeys: SimpleWebAuthn's browser half and ours, same origin (script-src 'self'). */
export function PasskeyScripts() {
  return (
    <>
      <script src="/assets/webauthn.js" defer></script>
      <script src="/assets/passkeys.js" defer></script>
    </>
  )
}

/** Where passkeys.js shows a failed ceremony, with its two messages in the page's language. */
function PasskeyErrorNote() {
  return <p class="error passkey-error" role="alert" data-refused={attr(t('passkey.scriptRefused'))} data-cancelled={attr(t('passkey.scriptCancelled'))} hidden></p>
}

/** "Sign in with a passkey": shown by the script when the browser can (hidden without JavaScript). */
export function PasskeySignInForm(props: { csrf: string; returnTo?: string; label?: string }) {
  return (
    <form method="post" action="/login/passkey" id="passkey-sign-in" class="passkey" hidden>
      <CsrfField token={props.csrf} />
      {props.returnTo ? <Hidden name="return_to" value={props.returnTo} /> : ''}
      <input type="hidden" name="credential" value="" />
      <PasskeyErrorNote />
      <button type="submit" class="secondary">
        {props.label ?? th('signIn.passkey')}
      </button>
    </form>
  )
}

export interface SecurityState {
  passkeysOn: boolean
  passkeys: PasskeyRecord[]
  totp: boolean
  recoveryCodesLeft: number
  hasPassword: boolean
  /** Connected accounts (upstream providers). They sign in, but confirm nothing: the password goes only while a passkey stays (countConfirmingWays). */
  connected: number
  /** Mail is set up and the email is not verified: no passkey or two-step verification yet (SPEC "Recovery"). */
  verifyFirst: boolean
  /** No password and no passkey: a fresh sign-in is what confirms (confirm.ts). */
  signIn?: SignInProof
}

/** Why an unverified account cannot add a way in yet: whoever proves the address later takes the account back without it. */
export const VERIFY_FIRST = 'Verify your email first'

/** The account page's sign-in methods: passkeys, two-step verification, password. */
export function SecuritySections(props: { csrf: string; state: SecurityState }) {
  const { csrf, state } = props
  return (
    <>
      {state.passkeysOn ? <PasskeysSection csrf={csrf} passkeys={state.passkeys} verifyFirst={state.verifyFirst} /> : ''}
      <h2>{th('security.twoStepTitle')}</h2>
      {state.totp ? (
        <>
          <p>
            {th('security.twoStepOn')} <span class="muted">{th('security.codesLeft', { count: state.recoveryCodesLeft })}</span>
          </p>
          <ButtonForm action="/account/two-step/recovery-codes" csrf={csrf} label={t('security.newCodes')} kind="secondary" />
          <form method="post" action="/account/two-step/disable">
            <CsrfField token={csrf} />
            <label for="disable-proof">{th('security.disableProof')}</label>
            <input id="disable-proof" name="proof" type="password" autocomplete="off" required />
            <div class="actions">
              <button type="submit" class="danger">
                {th('security.turnOff')}
              </button>
            </div>
          </form>
        </>
      ) : state.verifyFirst ? (
        <p class="muted">{th('account.verifyFirstTwoStep')}</p>
      ) : (
        <form method="post" action="/account/two-step/setup">
          <p class="muted">{th('security.twoStepAsk')}</p>
          <CsrfField token={csrf} />
          <button type="submit" class="secondary">
            {th('security.turnOnTwoStep')}
          </button>
        </form>
      )}
      <h2>{th('security.passwordTitle')}</h2>
      <ChangePasswordForm csrf={csrf} hasPassword={state.hasPassword} passkeys={state.passkeysOn && state.passkeys.length > 0} signIn={state.signIn} />
      {state.hasPassword ? (
        state.passkeys.length > 0 ? (
          <form method="post" action="/account/password/remove">
            <p class="muted">{th('security.passkeyInstead')}</p>
            <CsrfField token={csrf} />
            <button type="submit" class="danger">
              {th('security.removePassword')}
            </button>
          </form>
        ) : (
          <p class="muted">{th('security.withPassword')}</p>
        )
      ) : (
        ''
      )}
    </>
  )
}

function PasskeysSection(props: { csrf: string; passkeys: PasskeyRecord[]; verifyFirst: boolean }) {
  return (
    <>
      <h2>{th('security.passkeysTitle')}</h2>
      {props.passkeys.length === 0 ? <p class="muted">{th('security.passkeysIntro')}</p> : ''}
      <ul class="apps">
        {props.passkeys.map((p) => (
          <li>
            <div>
              <strong safe>{p.name}</strong>
              <div class="muted">
                {th('security.added', { day: raw(<When at={p.createdAt} />) })}
                {' · '}
                <LastUsed at={p.lastUsedAt} />
              </div>
              <form method="post" action="/account/passkeys/rename" class="rename">
                <CsrfField token={props.csrf} />
                <Hidden name="credential_id" value={p.credentialId} />
                <input name="name" type="text" aria-label={attr(t('security.newName'))} required maxlength={String(PASSKEY_NAME_MAX)} value={attr(p.name)} />
                <button type="submit" class="secondary">
                  {th('security.rename')}
                </button>
              </form>
            </div>
            <ButtonForm action="/account/passkeys/remove" csrf={props.csrf} fields={{ credential_id: p.credentialId }} label={t('security.remove')} kind="danger" />
          </li>
        ))}
      </ul>
      {props.verifyFirst ? (
        <p class="muted">{th('account.verifyFirstPasskey')}</p>
      ) : (
        <form method="post" action="/account/passkeys" id="add-passkey">
          <CsrfField token={props.csrf} />
          <input type="hidden" name="credential" value="" />
          <label for="passkey-name">{th('security.passkeyName')}</label>
          <input id="passkey-name" name="name" type="text" required maxlength={String(PASSKEY_NAME_MAX)} placeholder={attr(t('security.passkeyNameExample'))} />
          <PasskeyErrorNote />
          <div class="actions">
            <button type="submit">{th('security.addPasskey')}</button>
          </div>
        </form>
      )}
      <PasskeyScripts />
    </>
  )
}

/** Step 1 of turning TOTP on: the QR code and the secret, then a code to confirm. */
export function TotpSetupPage(props: { csrf: string; qrSvg: string; secretText: string; returnTo?: string; error?: string }) {
  return (
    <Layout title={t('twoStep.title')}>
      <h1>{th('twoStep.title')}</h1>
      <p>{th('totp.intro')}</p>
      <div class="qr">{props.qrSvg}</div>
      <p>
        <code class="secret" safe>
          {props.secretText}
        </code>
      </p>
      <ErrorNote message={props.error} />
      <form method="post" action="/account/two-step/confirm">
        <CsrfField token={props.csrf} />
        {props.returnTo ? <Hidden name="return_to" value={props.returnTo} /> : ''}
        <label for="code">{th('totp.code')}</label>
        <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]{6,7}" required dir="ltr" />
        <div class="actions">
          <button type="submit">{th('totp.turnOn')}</button>
          <a href="/account">{th('common.cancel')}</a>
        </div>
      </form>
    </Layout>
  )
}

/** Recovery codes, shown once (the page is never cached); `continueTo`: the app that asked for two-step verification. */
export function RecoveryCodesPage(props: { codes: string[]; continueTo?: string }) {
  return (
    <Layout title={t('recovery.title')}>
      <h1>{th('recovery.heading')}</h1>
      <p>{th('recovery.intro')}</p>
      <ul class="codes">
        {props.codes.map((c) => (
          <li>
            <code safe>{c}</code>
          </li>
        ))}
      </ul>
      <div class="actions">{props.continueTo ? <a href={attr(props.continueTo)}>{th('recovery.continue')}</a> : <a href="/account">{th('recovery.done')}</a>}</div>
    </Layout>
  )
}

/** /login/two-step: the second factor after the password (or to step up for an app that requires it). */
export function TwoStepPage(props: {
  csrf: string
  returnTo?: string
  recovery: boolean
  totp: boolean
  passkeys: boolean
  appName?: string
  requiredBy?: string
  error?: string
}) {
  const back = props.returnTo ? `&return_to=${encodeURIComponent(props.returnTo)}` : ''
  return (
    <Layout title={t('twoStep.title')}>
      <h1>{th('twoStep.title')}</h1>
      {props.requiredBy ? (
        <p>
          {th('twoStep.requiredBy', { app: raw(<strong safe>{props.requiredBy}</strong>) })}
        </p>
      ) : (
        ''
      )}
      <ErrorNote message={props.error} />
      {props.totp ? (
        <form method="post" action="/login/two-step">
          <CsrfField token={props.csrf} />
          {props.returnTo ? <Hidden name="return_to" value={props.returnTo} /> : ''}
          {props.recovery ? (
            <>
              <label for="recovery_code">{th('twoStep.recoveryCode')}</label>
              <input id="recovery_code" name="recovery_code" type="text" autocomplete="off" required dir="ltr" />
            </>
          ) : (
            <>
              <label for="code">{th('twoStep.code')}</label>
              <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required dir="ltr" />
            </>
          )}
          <div class="actions">
            <button type="submit">{th('twoStep.verify')}</button>
          </div>
        </form>
      ) : (
        ''
      )}
      {props.totp ? (
        <p class="muted">
          {props.recovery ? (
            <a href={attr(`/login/two-step?${back.slice(1)}`)}>{th('twoStep.useCode')}</a>
          ) : (
            <a href={attr(`/login/two-step?recovery=1${back}`)}>{th('twoStep.useRecovery')}</a>
          )}
        </p>
      ) : (
        ''
      )}
      {props.passkeys ? <PasskeySignInForm csrf={props.csrf} returnTo={props.returnTo} label={t('twoStep.usePasskey')} /> : ''}
      {props.passkeys ? <PasskeyScripts /> : ''}
      {props.passkeys && !props.totp ? (
        <noscript>
          <p class="error">{th('twoStep.noScript')}</p>
        </noscript>
      ) : (
        ''
      )}
      <SignInExits csrf={props.csrf} returnTo={props.returnTo} />
    </Layout>
  )
}

/**
 * Never stuck at a second factor: "Cancel" (back to the app with access_denied, or to /login) and
 * "Sign in as someone else" (the pending sign-in ends; /login keeps where it was going).
 */
function SignInExits(props: { csrf: string; returnTo?: string }) {
  const fields = props.returnTo ? { return_to: props.returnTo } : undefined
  return (
    <div class="actions">
      <ButtonForm action="/login/two-step/cancel" csrf={props.csrf} fields={fields} label={t('twoStep.cancel')} kind="secondary" />
      <ButtonForm action="/login/switch" csrf={props.csrf} fields={fields} label={t('twoStep.someoneElse')} kind="secondary" />
    </div>
  )
}

