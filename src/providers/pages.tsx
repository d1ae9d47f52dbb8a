/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import type { IdentityRecord } from '../db/store'
import { ButtonForm, When, attr } from '../views/layout'
import { t, th } from '../i18n'

export interface ProviderButton {
  id: string
  name: string
}

/** "Continue with NAME" on the sign-in pages: links (GET), each keeping where the sign-in returns to. */
export function ProviderButtons(props: { providers: ProviderButton[]; returnTo?: string }): JSX.Element {
  if (props.providers.length === 0) return <></>
  const query = props.returnTo ? `?return_to=${encodeURIComponent(props.returnTo)}` : ''
  return (
    <div class="providers">
      <p class="muted" safe>{t('provider.or')}</p>
      <ul class="actions">
        {props.providers.map((p) => (
          <li>
            <a class="button secondary" href={attr(`/login/provider/${p.id}${query}`)} safe>
              {t('provider.continueWith', { name: p.name })}
            </a>
          </li>
        ))}
      </ul>
    </div>
  )
}

/** /account → "Connected accounts": each identity with Disconnect, each other provider with Connect. */
export function ConnectedAccounts(props: { csrf: string; providers: ProviderButton[]; identities: IdentityRecord[] }): JSX.Element {
  const linked = new Map(props.identities.map((i) => [i.providerId, i]))
  return (
    <section id="connected">
      <h2 safe>{t('provider.connected')}</h2>
      {props.identities.length === 0 ? <p class="muted" safe>{t('provider.connectedNone')}</p> : ''}
      <ul class="apps">
        {props.providers.map((p) => {
          const identity = linked.get(p.id)
          return (
            <li>
              <div>
                <strong safe>{p.name}</strong>
                {identity ? (
                  <div class="muted">
                    <span safe>{identity.email ?? ''}</span> {th('provider.since')} <When at={identity.createdAt} />
                  </div>
                ) : (
                  ''
                )}
              </div>
              <div class="actions">
                {identity ? (
                  <ButtonForm action={`/account/providers/${p.id}/disconnect`} csrf={props.csrf} label={t('provider.disconnect')} ariaLabel={t('provider.disconnectLabel', { name: p.name })} kind="danger" />
                ) : (
                  <ButtonForm action={`/account/providers/${p.id}/connect`} csrf={props.csrf} label={t('provider.connect', { name: p.name })} kind="secondary" />
                )}
              </div>
            </li>
          )
        })}
      </ul>
    </section>
  )
}
