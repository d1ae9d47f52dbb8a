/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@kitajs/html'
import { ButtonForm, Layout } from '../views/layout'
import { currentBrand } from '../brand'
import { formActionSource, htmlPage } from '../views/page'
import { t, th, type Speech } from '../i18n'

/**
 * GET /.latchkey/logout: a button, never a sign-out (a cross-site link or image must not end the
 * session, logout CSRF); the POST carries a token bound to the site cookie.
 */
export function siteLogoutPage(csrf: string, issuer: string, speech?: Speech): Response {
  return htmlPage(
    () => (
      <Layout title={t('signOut.title')}>
        <h1>{th('signOut.title')}</h1>
        <p>{th('signOut.site', { brand: currentBrand().name })}</p>
        <ButtonForm action="/.latchkey/logout" csrf={csrf} label={t('signOut.submit')} inline={false} />
      </Layout>
    ),
    // The POST's 303 ends at Latchkey's /login, and Chromium holds redirects to form-action too.
    { formAction: [formActionSource(issuer)], headers: { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' }, speech },
  )
}
