/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import type { User } from '../../accounts/users'
import { ButtonForm, CsrfField, Hidden, Layout, attr } from '../../views/layout'
import { AppLogo } from '../../views/app-logo'
import { raw, t, th } from '../../i18n'
import { scopeWords } from '../scopes'
import type { AuthorizationRequest } from './request'

/** The authorization request again, as hidden fields of a form that POSTs the decision. */
/** A consent decision's two buttons (the authorization and the device consent pages): `decision` = allow | deny. */
export function DecisionButtons() {
  return (
    <div class="actions">
      <button type="submit" name="decision" value="allow">
        {th('consent.allow')}
      </button>
      <button type="submit" name="decision" value="deny" class="secondary">
        {th('consent.deny')}
      </button>
    </div>
  )
}

function RequestFields(props: { request: AuthorizationRequest }) {
  const { request } = props
  // A pushed request (RFC 9126) is named by its request_uri; its parameters stay on the server.
  const hidden: Record<string, string | undefined> = request.requestUri ? { client_id: request.client.id, request_uri: request.requestUri } : {
    client_id: request.client.id,
    redirect_uri: request.redirectUri,
    scope: request.scopes.join(' '),
    state: request.state,
    response_type: 'code',
    code_challenge: request.codeChallenge,
    code_challenge_method: request.codeChallenge ? 'S256' : undefined,
    nonce: request.nonce,
    resource: request.resource?.uri,
  }
  return <>{Object.entries(hidden).map(([name, value]) => (value === undefined ? '' : <Hidden name={name} value={value} />))}</>
}

/**
 * Where an app the operator did not register comes from: a metadata document's client is its
 * URL's host (the name is the document's own claim, the host is what the user can trust), and a
 * dynamically registered one is said to be unverified.
 */
function WhoIsAsking(props: { request: AuthorizationRequest }) {
  const { client } = props.request
  if (client.kind === 'metadata')
    return (
      <p class="origin" data-origin>
        {th('consent.fromSite', { host: raw(<strong safe>{new URL(client.id).host}</strong>) })}
      </p>
    )
  if (client.kind === 'dynamic')
    return (
      <p class="origin" data-unverified>
        {th('consent.unverified', { warning: raw(<strong>{th('consent.unverifiedWarning')}</strong>) })}
      </p>
    )
  return ''
}

/** `returnTo`: this authorization request, where "Not you?" (a sign-out) lets someone else sign in and come back. */
export function ConsentPage(props: { request: AuthorizationRequest; user: User; csrf: string; returnTo: string }) {
  const { request, user } = props
  return (
    <Layout title={t('consent.title')}>
      <AppLogo id={request.client.id} name={request.client.name} logoEtag={request.client.logoEtag} large />
      <h1>
        {request.resource
          ? th('consent.wantsResource', { app: raw(<span safe>{request.client.name}</span>), resource: raw(<strong safe>{request.resource.name}</strong>) })
          : th('consent.wantsAccount', { app: raw(<span safe>{request.client.name}</span>) })}
      </h1>
      <WhoIsAsking request={request} />
      <p class="muted">{th('consent.signedInAs', { name: raw(<strong safe>{user.fullName}</strong>), email: raw(<span safe>{user.email}</span>) })}</p>
      <ButtonForm action="/login/switch" csrf={props.csrf} fields={{ return_to: props.returnTo }} label={t('consent.notYou')} kind="secondary" />
      <p>{th('consent.willBeAble')}</p>
      <ul class="scopes">
        {request.scopes.map((s) => (
          <li data-scope={s} safe>
            {scopeWords(s, request.resource?.scopes)}
          </li>
        ))}
      </ul>
      <form method="post" action="/oauth/authorize">
        <CsrfField token={props.csrf} />
        <RequestFields request={request} />
        <DecisionButtons />
      </form>
      <p class="muted">{th('consent.revokeLater')}</p>
    </Layout>
  )
}

/** The app is restricted to groups the user is in none of (`--allowed-group`): no consent to give; "Back to the app" says so to it. */
export function AccessDeniedPage(props: { request: AuthorizationRequest; back: string }) {
  return (
    <Layout title={t('consent.deniedTitle')}>
      <h1>{th('consent.deniedTitle')}</h1>
      <p>{th('consent.denied', { app: raw(<strong safe>{props.request.client.name}</strong>) })}</p>
      <p>
        <a href={attr(props.back)}>{th('consent.backToApp')}</a>
      </p>
    </Layout>
  )
}

/**
 * The app requires two factors and the user has no second one: set one up now (and on to the app
 * afterwards: `returnTo`, this authorization request), or "Cancel" (access_denied).
 */
export function MfaRequiredPage(props: { request: AuthorizationRequest; csrf: string; returnTo: string }) {
  return (
    <Layout title={t('consent.mfaTitle')}>
      <h1>{th('consent.mfaTitle')}</h1>
      <p>{th('consent.mfa', { app: raw(<strong safe>{props.request.client.name}</strong>), accountPage: raw(<a href="/account">{th('consent.accountPage')}</a>) })}</p>
      <ButtonForm action="/account/two-step/setup" csrf={props.csrf} fields={{ return_to: props.returnTo }} label={t('consent.setUpMfa')} inline={false} />
      <form method="post" action="/oauth/authorize">
        <CsrfField token={props.csrf} />
        <RequestFields request={props.request} />
        <div class="actions">
          <button type="submit" name="decision" value="deny" class="secondary">
            {th('consent.cancel')}
          </button>
        </div>
      </form>
    </Layout>
  )
}
