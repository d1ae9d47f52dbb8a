/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import type { ProviderView } from '../providers/service'
import { AdminLayout } from './pages'

// The page's words, in one place (the message catalog takes them from here).
const WORDS = {
  title: 'Sign-in providers',
  none: 'No providers: people sign in with a password or a passkey only.',
  manage: 'Providers are managed with latchkey provider create|update|delete (their secrets are read from files) or latchkey apply.',
  yes: 'yes',
  no: 'no',
  any: 'any',
}

/**
 * /admin/providers (SPEC "Sign in with another account": `/admin` lists them): as `latchkey
 * provider list` shows them, with the callback to register at each; never a secret.
 */
export function ProvidersPage(props: { providers: Array<ProviderView & { callback_url: string }> }) {
  return (
    <AdminLayout title={WORDS.title}>
      {props.providers.length === 0 ? (
        <p class="muted">{WORDS.none}</p>
      ) : (
        <table class="admin">
          <thead>
            <tr>
              <th>Name</th>
              <th>Kind</th>
              <th>Issuer</th>
              <th>Client ID</th>
              <th>New accounts</th>
              <th>Domains</th>
              <th>Links by verified email</th>
              <th>Trusts its two-step</th>
              <th>Callback</th>
            </tr>
          </thead>
          <tbody>
            {props.providers.map((p) => (
              <tr>
                <td data-label="Name" safe>
                  {p.name}
                </td>
                <td data-label="Kind" safe>
                  {p.kind}
                </td>
                <td data-label="Issuer" class="long">
                  <code safe>{p.issuer}</code>
                </td>
                <td data-label="Client ID" class="long">
                  <code safe>{p.client_id}</code>
                </td>
                <td data-label="New accounts">{p.allow_create ? WORDS.yes : WORDS.no}</td>
                <td data-label="Domains" safe>
                  {p.allowed_domains.length ? p.allowed_domains.join(', ') : WORDS.any}
                </td>
                <td data-label="Links by verified email">{p.link_verified_email ? WORDS.yes : WORDS.no}</td>
                <td data-label="Trusts its two-step">{p.trust_mfa ? WORDS.yes : WORDS.no}</td>
                <td data-label="Callback" class="long">
                  <code safe>{p.callback_url}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p class="muted">{WORDS.manage}</p>
    </AdminLayout>
  )
}
