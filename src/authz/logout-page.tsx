/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@kitajs/html'
import { ButtonForm, Layout } from '../views/layout'
import { currentBrand } from '../brand'
import { formActionSource, htmlPage } from '../views/page'

/**
 * GET /.latchkey/logout: a button, never a sign-out (a cross-site link or image must not end the
 * session, logout CSRF); the POST carries a token bound to the site cookie.
 */
export function siteLogoutPage(csrf: string, issuer: string): Response {
  return htmlPage(
    <Layout title="Sign out">
      <h1>Sign out</h1>
      <p>
        Signing out here signs you out of <span safe>{currentBrand().name}</span> and of every site it protects.
      </p>
      <ButtonForm action="/.latchkey/logout" csrf={csrf} label="Sign out" inline={false} />
    </Layout>,
    // The POST's 303 ends at Latchkey's /login, and Chromium holds redirects to form-action too.
    { formAction: [formActionSource(issuer)], headers: { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' } },
  )
}
