/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import { CsrfField, Hidden, attr } from '../views/layout'
import type { Confirmation } from './confirm'
import { AdminLayout, type Words } from './pages'
import { raw, t, th } from '../i18n'

/**
 * The step between an admin's click and a change that removes something or gives more access:
 * for a destructive action it names what will happen (SPEC "/admin"), and nothing has changed
 * yet; on a sign-in older than 15 minutes it also asks for the password — or a fresh sign-in
 * (a passkey), after which the action is repeated. The form's own fields are kept.
 */
export function ConfirmPage(props: {
  csrf: string
  action: string
  back: string
  fields: Record<string, string | string[]>
  what?: Confirmation
  askPassword: boolean
  hasPassword: boolean
  signInAgain: string
  error?: Words
}) {
  const kept = Object.entries(props.fields).filter(([name]) => name !== 'csrf_token' && name !== 'confirm_password' && name !== 'confirmed')
  const what = props.what
  const canConfirm = !props.askPassword || props.hasPassword
  return (
    <AdminLayout title={props.askPassword ? t('admin.confirm.titleReauth') : t('admin.confirm.title')} error={props.error}>
      {what ? (
        <>
          <p class="confirm">
            <strong safe>{what.summary()}</strong>
          </p>
          <ul>
            {what.details.map((d) => (
              <li safe>{d()}</li>
            ))}
          </ul>
        </>
      ) : (
        ''
      )}
      {props.askPassword ? <p>{th('admin.confirm.stale')}</p> : ''}
      {canConfirm ? (
        <form method="post" action={attr(props.action)}>
          <CsrfField token={props.csrf} />
          {kept.flatMap(([name, value]) => ([] as string[]).concat(value).map((v) => <Hidden name={name} value={v} />))}
          {what ? <Hidden name="confirmed" value="yes" /> : ''}
          {props.askPassword ? (
            <>
              <label for="confirm_password">{th('admin.confirm.password')}</label>
              <input id="confirm_password" name="confirm_password" type="password" autocomplete="current-password" required />
            </>
          ) : (
            ''
          )}
          <div class="actions">
            <button type="submit" class="danger" safe>
              {what ? what.button() : t('admin.confirm.title')}
            </button>
            <a href={attr(props.back)}>{th('admin.confirm.cancel')}</a>
          </div>
        </form>
      ) : (
        ''
      )}
      {props.askPassword ? (
        <p>
          {th('admin.confirm.thenRepeat', { link: raw(<a href={attr(props.signInAgain)}>{props.hasPassword ? th('admin.confirm.signInAgainPasskey') : th('admin.confirm.signInWithPasskey')}</a>) })}
        </p>
      ) : (
        ''
      )}
    </AdminLayout>
  )
}
