/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import type { ProviderView } from '../providers/service'
import { AdminLayout, type Words } from './pages'
import { ButtonForm, attr } from '../views/layout'
import { t, th } from '../i18n'

/**
 * /admin/providers (SPEC "Sign in with another account": `/admin` lists them): as `latchkey
 * provider list` shows them, with the callback to register at each; never a secret. Delete asks
 * first, naming who would be left with only a password reset (SPEC "Operators").
 */
export function ProvidersPage(props: { csrf: string; providers: Array<ProviderView & { callback_url: string }>; error?: Words; notice?: Words }) {
  return (
    <AdminLayout title={t('admin.providers.title')} error={props.error} notice={props.notice}>
      {props.providers.length === 0 ? (
        <p class="muted">{th('admin.providers.none')}</p>
      ) : (
        <table class="admin">
          <thead>
            <tr>
              <th>{th('admin.field.name')}</th>
              <th>{th('admin.field.kind')}</th>
              <th>{th('admin.providers.issuer')}</th>
              <th>{th('admin.audit.clientId')}</th>
              <th>{th('admin.providers.newAccounts')}</th>
              <th>{th('admin.providers.domains')}</th>
              <th>{th('admin.providers.linksByEmail')}</th>
              <th>{th('admin.providers.trustsMfa')}</th>
              <th>{th('admin.providers.callback')}</th>
              <th>{th('admin.field.actions')}</th>
            </tr>
          </thead>
          <tbody>
            {props.providers.map((p) => (
              <tr>
                <td data-label={attr(t('admin.field.name'))} safe>
                  {p.name}
                </td>
                <td data-label={attr(t('admin.field.kind'))} safe>
                  {p.kind}
                </td>
                <td data-label={attr(t('admin.providers.issuer'))} class="long">
                  <code safe>{p.issuer}</code>
                </td>
                <td data-label={attr(t('admin.audit.clientId'))} class="long">
                  <code safe>{p.client_id}</code>
                </td>
                <td data-label={attr(t('admin.providers.newAccounts'))}>{p.allow_create ? t('admin.yes') : t('admin.no')}</td>
                <td data-label={attr(t('admin.providers.domains'))} safe>
                  {p.allowed_domains.length ? p.allowed_domains.join(', ') : t('admin.audit.any')}
                </td>
                <td data-label={attr(t('admin.providers.linksByEmail'))}>{p.link_verified_email ? t('admin.yes') : t('admin.no')}</td>
                <td data-label={attr(t('admin.providers.trustsMfa'))}>{p.trust_mfa ? t('admin.yes') : t('admin.no')}</td>
                <td data-label={attr(t('admin.providers.callback'))} class="long">
                  <code safe>{p.callback_url}</code>
                </td>
                <td data-label={attr(t('admin.field.actions'))}>
                  <ButtonForm action="/admin/providers/delete" csrf={props.csrf} label={t('admin.delete')} kind="danger" fields={{ id: p.id }} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p class="muted">{th('admin.providers.manage')}</p>
    </AdminLayout>
  )
}
