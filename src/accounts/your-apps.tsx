/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@kitajs/html'
import type { YourApp } from '../db/store'
import { AppLogo } from '../views/app-logo'
import { attr } from '../views/layout'

// Words of this section, in one place (the message catalog takes them over).
const WORDS = {
  heading: 'Your apps',
  none: 'No apps yet. Apps your administrator sets up for you, and apps you allow to use your account, appear here.',
  authorized: 'You allowed it to use your account',
  noLink: 'No link to open it',
}

const hostOf = (url: string) => new URL(url).host

/**
 * /account → "Your apps" (SPEC "Brand and language"): the apps with a launch URL the user may use,
 * and the apps they authorized, each with its logo; the name opens the app where it has a link.
 */
export function YourAppsSection(props: { apps: readonly YourApp[] }): JSX.Element {
  return (
    <section aria-labelledby="your-apps">
      <h2 id="your-apps">{WORDS.heading}</h2>
      {props.apps.length === 0 ? (
        <p class="muted">{WORDS.none}</p>
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
                  {app.launchUrl ? hostOf(app.launchUrl) : app.authorized ? WORDS.authorized : WORDS.noLink}
                </div>
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  )
}
