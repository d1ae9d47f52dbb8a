/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@kitajs/html'
import type { YourApp } from '../db/store'
import { AppLogo } from '../views/app-logo'
import { attr } from '../views/layout'
import { t } from '../i18n'

const hostOf = (url: string) => new URL(url).host

/**
 * /account → "Your apps" (SPEC "Brand and language"): the apps with a launch URL the user may use,
 * and the apps they authorized, each with its logo; the name opens the app where it has a link.
 */
export function YourAppsSection(props: { apps: readonly YourApp[] }): JSX.Element {
  return (
    <section aria-labelledby="your-apps">
      <h2 id="your-apps" safe>{t('yourApps.heading')}</h2>
      {props.apps.length === 0 ? (
        <p class="muted" safe>{t('yourApps.none')}</p>
      ) : (
        <ul class="your-apps">
          {props.apps.map((app) => (
            <li>
              <AppLogo id={app.clientId} name={app.name} logoEtag={app.logoEtag} placeholder />
              <div>
                {app.launchUrl ? (
                  <a href={attr(app.launchUrl)} class="app-name" safe>
                    {app.name}
                  </a>
                ) : (
                  <strong class="app-name" safe>
                    {app.name}
                  </strong>
                )}
                <div class="muted" safe>
                  {app.launchUrl ? hostOf(app.launchUrl) : app.authorized ? t('yourApps.authorized') : t('yourApps.noLink')}
                </div>
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  )
}
