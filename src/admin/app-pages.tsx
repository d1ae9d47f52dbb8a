/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import { DEVICE_CODE, GRANT_TYPES, ID_TOKEN_ALGS, type ClientView } from '../oauth/clients'
import { ButtonForm, CsrfField, Hidden, attr } from '../views/layout'
import type { FormFields } from '../web/forms'
import { currentSpeech, t, th } from '../i18n'
import type { MessageKey } from '../i18n/types'
import { AdminLayout, type Typed, type Words } from './pages'

// /admin/apps: the list, the create and edit forms, an app's endpoints, a new secret.

export type AppRow = ClientView & { allowed_groups: string[]; kind: string; jwks?: string | null }

const GRANT_NAMES: Record<string, MessageKey> = {
  authorization_code: 'admin.apps.grant.authorizationCode',
  client_credentials: 'admin.apps.grant.clientCredentials',
  [DEVICE_CODE]: 'admin.apps.grant.deviceCode',
}
const METHODS: ReadonlyArray<readonly [string, MessageKey]> = [
  ['client_secret', 'admin.apps.method.clientSecret'],
  ['private_key_jwt', 'admin.apps.method.privateKeyJwt'],
]
/** A message without placeholders, named by a key held in a table. */
const word = (key: MessageKey) => currentSpeech().messages[key].text(undefined)

const KIND_WORDS: Record<string, MessageKey | undefined> = { operator: undefined, metadata: 'admin.apps.kind.metadata', dynamic: 'admin.apps.kind.dynamic' }

export function AppsPage(props: { csrf: string; apps: AppRow[]; groups: string[]; error?: Words; notice?: Words; typed?: Typed }) {
  const typed = props.typed?.form === '/admin/apps' ? props.typed.fields : undefined
  return (
    <AdminLayout title={t('admin.apps.title')} error={props.error} notice={props.notice}>
      <table class="admin">
        <thead>
          <tr>
            <th>{th('admin.field.name')}</th>
            <th>{th('admin.audit.clientId')}</th>
            <th>{th('admin.apps.type')}</th>
            <th>{th('admin.apps.allowedGroups')}</th>
          </tr>
        </thead>
        <tbody>
          {props.apps.map((a) => (
            <tr>
              <td data-label={attr(t('admin.field.name'))}>
                <a href={attr(`/admin/apps/edit?client_id=${encodeURIComponent(a.client_id)}`)} safe>
                  {a.name}
                </a>
              </td>
              <td data-label={attr(t('admin.audit.clientId'))}>
                <code safe>{a.client_id}</code>
              </td>
              <td data-label={attr(t('admin.apps.type'))} safe>{[a.public ? t('admin.apps.public') : t('admin.apps.confidential'), KIND_WORDS[a.kind] ? word(KIND_WORDS[a.kind]!) : ''].filter(Boolean).join(', ')}</td>
              <td data-label={attr(t('admin.apps.allowedGroups'))} safe>{a.allowed_groups.join(', ') || t('admin.apps.everyone')}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {props.apps.length === 0 ? <p class="muted">{th('admin.apps.none')}</p> : ''}
      <h2>{th('admin.apps.create')}</h2>
      <form method="post" action="/admin/apps">
        <CsrfField token={props.csrf} />
        <AppFields groups={props.groups} values={typed ? typedApp(typed) : NEW_APP} />
        <label class="check">
          <input type="checkbox" name="public" value="true" checked={typed?.public === 'true'} /> {th('admin.apps.publicClient')}
        </label>
        <div class="actions">
          <button type="submit">{th('admin.apps.createSubmit')}</button>
        </div>
      </form>
    </AdminLayout>
  )
}

/** An app form's values: an app's own, a new app's defaults, or what was typed. */
interface AppValues {
  name: string
  redirectUris: string
  postLogoutRedirectUris: string
  skipConsent: boolean
  requireMfa: boolean
  idTokenAlg: string
  allowedGroups: string[]
  introspects: string
  grantTypes: string[]
  allowedScopes: string
  requirePar: boolean
  authMethod: string
  jwksUri: string
  jwks: string
}

const NEW_APP: AppValues = {
  name: '',
  redirectUris: '',
  postLogoutRedirectUris: '',
  skipConsent: false,
  requireMfa: false,
  idTokenAlg: 'RS256',
  allowedGroups: [],
  introspects: '',
  grantTypes: ['authorization_code'],
  allowedScopes: '',
  requirePar: false,
  authMethod: 'client_secret',
  jwksUri: '',
  jwks: '',
}

const appValues = (a: AppRow): AppValues => ({
  name: a.name,
  redirectUris: a.redirect_uris.join('\n'),
  postLogoutRedirectUris: (a.post_logout_redirect_uris ?? []).join('\n'),
  skipConsent: a.skip_consent,
  requireMfa: a.require_mfa,
  idTokenAlg: a.id_token_signed_response_alg ?? 'RS256',
  allowedGroups: a.allowed_groups,
  introspects: (a.introspects ?? []).join(' '),
  grantTypes: a.grant_types,
  allowedScopes: a.allowed_scopes.join(' '),
  requirePar: a.require_pushed_authorization_requests,
  authMethod: a.token_endpoint_auth_method === 'private_key_jwt' ? 'private_key_jwt' : 'client_secret',
  jwksUri: a.jwks_uri ?? '',
  jwks: a.jwks ?? '',
})

function typedApp(fields: FormFields): AppValues {
  const one = (name: string) => ([] as string[]).concat(fields[name] ?? [])[0] ?? ''
  return {
    name: one('name'),
    redirectUris: one('redirect_uris'),
    postLogoutRedirectUris: one('post_logout_redirect_uris'),
    skipConsent: one('skip_consent') === 'true',
    requireMfa: one('require_mfa') === 'true',
    idTokenAlg: one('id_token_alg') || 'RS256',
    allowedGroups: ([] as string[]).concat(fields.allowed_groups ?? []),
    introspects: one('introspects'),
    grantTypes: ([] as string[]).concat(fields.grant_types ?? []),
    allowedScopes: one('allowed_scopes'),
    requirePar: one('require_par') === 'true',
    authMethod: one('auth_method') || 'client_secret',
    jwksUri: one('jwks_uri'),
    jwks: one('jwks'),
  }
}

/** The options an app has: its own when editing one, or what was typed when the form was refused. */
function AppFields(props: { groups: string[]; values: AppValues }) {
  const a = props.values
  const allowed = new Set(a.allowedGroups)
  return (
    <>
      <label for="name">{th('admin.field.name')}</label>
      <input id="name" name="name" type="text" required maxlength="200" value={attr(a.name)} />
      <label for="redirect_uris">{th('admin.apps.redirectUris')}</label>
      <textarea id="redirect_uris" name="redirect_uris" rows="3" dir="ltr" safe>
        {a.redirectUris}
      </textarea>
      <label for="post_logout_redirect_uris">{th('admin.apps.postLogoutUris')}</label>
      <textarea id="post_logout_redirect_uris" name="post_logout_redirect_uris" rows="2" dir="ltr" safe>
        {a.postLogoutRedirectUris}
      </textarea>
      <label class="check">
        <input type="checkbox" name="skip_consent" value="true" checked={a.skipConsent} /> {th('admin.apps.skipConsent')}
      </label>
      <label class="check">
        <input type="checkbox" name="require_mfa" value="true" checked={a.requireMfa} /> {th('admin.apps.requireMfa')}
      </label>
      <label for="id_token_alg">{th('admin.apps.idTokenAlg')}</label>
      <select id="id_token_alg" name="id_token_alg">
        {ID_TOKEN_ALGS.map((alg) => (
          <option value={alg} selected={a.idTokenAlg === alg}>
            {alg}
          </option>
        ))}
      </select>
      <fieldset>
        <legend>{th('admin.apps.groupsLegend')}</legend>
        {props.groups.length === 0 ? <span class="muted">{th('admin.groups.none')}</span> : ''}
        {props.groups.map((g) => (
          <label class="check">
            <input type="checkbox" name="allowed_groups" value={attr(g)} checked={allowed.has(g)} /> <span safe>{g}</span>
          </label>
        ))}
      </fieldset>
      <label for="introspects">{th('admin.apps.introspects')}</label>
      <input id="introspects" name="introspects" type="text" maxlength="4000" value={attr(a.introspects)} dir="ltr" />
      <MachineFields values={a} />
    </>
  )
}

/** Grants, allowed scopes, PAR and client authentication (SPEC "Machines and devices"), as `client create|update` takes them. */
function MachineFields(props: { values: AppValues }) {
  const a = props.values
  return (
    <fieldset>
      <legend>{th('admin.apps.machines')}</legend>
      {/* Unchecked boxes send nothing: this says the form had them (a form without them keeps what the app has). */}
      <Hidden name="machine_options" value="shown" />
      <fieldset>
        <legend>{th('admin.apps.grants')}</legend>
        {GRANT_TYPES.map((g) => (
          <label class="check">
            <input type="checkbox" name="grant_types" value={g} checked={a.grantTypes.includes(g)} /> <span safe>{GRANT_NAMES[g] ? word(GRANT_NAMES[g]!) : g}</span>
          </label>
        ))}
      </fieldset>
      <label for="allowed_scopes">{th('admin.apps.allowedScopes')}</label>
      <input id="allowed_scopes" name="allowed_scopes" type="text" maxlength="4000" value={attr(a.allowedScopes)} dir="ltr" />
      <label class="check">
        <input type="checkbox" name="require_par" value="true" checked={a.requirePar} /> {th('admin.apps.requirePar')}
      </label>
      <label for="auth_method">{th('admin.apps.authMethod')}</label>
      <select id="auth_method" name="auth_method">
        {METHODS.map(([value, key]) => (
          <option value={value} selected={a.authMethod === value} safe>
            {word(key)}
          </option>
        ))}
      </select>
      <label for="jwks_uri">{th('admin.apps.jwksUri')}</label>
      <input id="jwks_uri" name="jwks_uri" type="url" maxlength="2000" value={attr(a.jwksUri)} />
      <label for="jwks">{th('admin.apps.jwks')}</label>
      <textarea id="jwks" name="jwks" rows="3" spellcheck="false" dir="ltr" safe>
        {a.jwks}
      </textarea>
    </fieldset>
  )
}

export function AppPage(props: { csrf: string; app: AppRow; groups: string[]; endpoints: Array<[MessageKey, string]>; error?: Words; notice?: Words; typed?: Typed }) {
  const fields = { client_id: props.app.client_id }
  const typed = props.typed?.form === '/admin/apps/update' ? props.typed.fields : undefined
  return (
    <AdminLayout title={t('admin.apps.title')} error={props.error} notice={props.notice}>
      <div class="app-head">
        {props.app.logo_url ? <img class="app-logo" src={attr(props.app.logo_url)} alt="" width="40" height="40" /> : ''}
        <h2 safe>{props.app.name}</h2>
      </div>
      <p>
        {th('admin.audit.clientId')} <code safe>{props.app.client_id}</code> · {props.app.public ? th('admin.apps.public') : th('admin.apps.confidential')}
      </p>
      <LogoAndLaunch app={props.app} />
      <Endpoints endpoints={props.endpoints} />
      <h2>{th('admin.apps.settings')}</h2>
      <form method="post" action="/admin/apps/update">
        <CsrfField token={props.csrf} />
        <Hidden name="client_id" value={props.app.client_id} />
        <AppFields groups={props.groups} values={typed ? typedApp(typed) : appValues(props.app)} />
        <div class="actions">
          <button type="submit">{th('admin.apps.save')}</button>
        </div>
      </form>
      <h2>{th('admin.apps.danger')}</h2>
      <div class="actions">
        {props.app.public ? '' : <ButtonForm action="/admin/apps/rotate-secret" csrf={props.csrf} label={t('admin.apps.rotateSecret')} kind="danger" fields={fields} />}
        <ButtonForm action="/admin/apps/delete" csrf={props.csrf} label={t('admin.apps.delete')} kind="danger" fields={fields} />
      </div>
    </AdminLayout>
  )
}

/** Its logo and launch URL, set with `latchkey client update --logo-file / --launch-url` (a file is no form field here). */
function LogoAndLaunch(props: { app: AppRow }) {
  const { launch_url: launch, logo_url: logo } = props.app
  return (
    <p class="muted">
      {launch ? (
        <>
          {th('admin.apps.opensAt')}{' '}
          <a href={attr(launch)} class="long" safe>
            {launch}
          </a>{' '}
          {th('admin.apps.fromYourApps')}{' '}
        </>
      ) : (
        th('admin.apps.noLaunch') + ' '
      )}
      {logo ? th('admin.apps.logo') : th('admin.apps.noLogo')} {th('admin.apps.change')} <code>latchkey client update ID --logo-file PATH --launch-url URL</code>.
    </p>
  )
}

/**
 * Where an app's developer points it: the issuer, the discovery URL and every endpoint, each
 * with a copy button. The buttons are hidden until /assets/copy.js (same origin) shows them:
 * without script the URLs are plain text to select.
 */
function Endpoints(props: { endpoints: Array<[MessageKey, string]> }) {
  return (
    <>
      <h2>{th('admin.apps.endpoints')}</h2>
      <table class="admin endpoints">
        <tbody>
          {props.endpoints.map(([key, url], i) => (
            <tr>
              <th scope="row" safe>
                {word(key)}
              </th>
              <td>
                <code id={`endpoint-${i}`} safe>
                  {url}
                </code>
              </td>
              <td>
                <button type="button" class="secondary copy" data-copy={`endpoint-${i}`} aria-label={attr(t('admin.apps.copyLabel', { label: word(key) }))} hidden>
                  {th('admin.apps.copy')}
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <script src="/assets/copy.js" defer></script>
    </>
  )
}

/** A new client secret: shown this once, never stored in the clear. */
export function SecretPage(props: { clientId: string; name: string; secret: string; endpoints: Array<[MessageKey, string]>; notice: string }) {
  return (
    <AdminLayout title={t('admin.apps.title')} notice={props.notice}>
      <h2 safe>{props.name}</h2>
      <p>
        {th('admin.audit.clientId')} <code safe>{props.clientId}</code>
      </p>
      <p>
        {th('admin.apps.clientSecret')} <code class="secret" safe>{props.secret}</code>
      </p>
      <Endpoints endpoints={props.endpoints} />
      <p>
        <a href={attr(`/admin/apps/edit?client_id=${encodeURIComponent(props.clientId)}`)}>{th('admin.apps.done')}</a>
      </p>
    </AdminLayout>
  )
}
