/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import { DEVICE_CODE, GRANT_TYPES, ID_TOKEN_ALGS, type ClientView } from '../oauth/clients'
import { ButtonForm, CsrfField, Hidden, attr } from '../views/layout'
import type { FormFields } from '../web/forms'
import { AdminLayout, type Typed } from './pages'

// /admin/apps: the list, the create and edit forms, an app's endpoints, a new secret.

export type AppRow = ClientView & { allowed_groups: string[]; kind: string; jwks?: string | null }

/** The machine options' words (issue 38), in one place. */
const MACHINE_WORDS = {
  legend: 'Machines and devices',
  grants: 'It may use',
  grantNames: {
    authorization_code: 'Sign-in in a browser (authorization code, with refresh tokens)',
    client_credentials: 'Its own tokens, no user (client credentials)',
    [DEVICE_CODE]: 'Sign-in on a device with a code (device grant)',
  } as Record<string, string>,
  allowedScopes: "With client credentials: the resources' scopes its own tokens may carry (space-separated)",
  requirePar: 'Sign-in requests only through pushed authorization requests (PAR)',
  authMethod: 'A confidential app authenticates with',
  methods: { client_secret: 'its secret', private_key_jwt: 'assertions signed with its keys (private_key_jwt)' } as Record<string, string>,
  jwksUri: 'Its public keys at (jwks_uri, https)',
  jwks: 'Or its public keys here (a JWKS)',
}

const KIND_WORDS: Record<string, string> = { operator: '', metadata: 'metadata document', dynamic: 'registered dynamically' }

export function AppsPage(props: { csrf: string; apps: AppRow[]; groups: string[]; error?: string; notice?: string; typed?: Typed }) {
  const typed = props.typed?.form === '/admin/apps' ? props.typed.fields : undefined
  return (
    <AdminLayout title="Apps" error={props.error} notice={props.notice}>
      <table class="admin">
        <thead>
          <tr>
            <th>Name</th>
            <th>Client ID</th>
            <th>Type</th>
            <th>Allowed groups</th>
          </tr>
        </thead>
        <tbody>
          {props.apps.map((a) => (
            <tr>
              <td data-label="Name">
                <a href={attr(`/admin/apps/edit?client_id=${encodeURIComponent(a.client_id)}`)} safe>
                  {a.name}
                </a>
              </td>
              <td data-label="Client ID">
                <code safe>{a.client_id}</code>
              </td>
              <td data-label="Type" safe>{[a.public ? 'public' : 'confidential', KIND_WORDS[a.kind] ?? ''].filter(Boolean).join(', ')}</td>
              <td data-label="Allowed groups" safe>{a.allowed_groups.join(', ') || 'everyone'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {props.apps.length === 0 ? <p class="muted">No apps yet.</p> : ''}
      <h2>Create an app</h2>
      <form method="post" action="/admin/apps">
        <CsrfField token={props.csrf} />
        <AppFields groups={props.groups} values={typed ? typedApp(typed) : NEW_APP} />
        <label class="check">
          <input type="checkbox" name="public" value="true" checked={typed?.public === 'true'} /> Public client (no secret; PKCE)
        </label>
        <div class="actions">
          <button type="submit">Create app</button>
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
      <label for="name">Name</label>
      <input id="name" name="name" type="text" required maxlength="200" value={attr(a.name)} />
      <label for="redirect_uris">Redirect URIs (one per line)</label>
      <textarea id="redirect_uris" name="redirect_uris" rows="3" safe>
        {a.redirectUris}
      </textarea>
      <label for="post_logout_redirect_uris">Post-logout redirect URIs (one per line)</label>
      <textarea id="post_logout_redirect_uris" name="post_logout_redirect_uris" rows="2" safe>
        {a.postLogoutRedirectUris}
      </textarea>
      <label class="check">
        <input type="checkbox" name="skip_consent" value="true" checked={a.skipConsent} /> Skip the consent page (first-party app)
      </label>
      <label class="check">
        <input type="checkbox" name="require_mfa" value="true" checked={a.requireMfa} /> Require two-step sign-in
      </label>
      <label for="id_token_alg">ID tokens signed with</label>
      <select id="id_token_alg" name="id_token_alg">
        {ID_TOKEN_ALGS.map((alg) => (
          <option value={alg} selected={a.idTokenAlg === alg}>
            {alg}
          </option>
        ))}
      </select>
      <fieldset>
        <legend>Only members of these groups may use it (none: everyone)</legend>
        {props.groups.length === 0 ? <span class="muted">No groups yet.</span> : ''}
        {props.groups.map((g) => (
          <label class="check">
            <input type="checkbox" name="allowed_groups" value={attr(g)} checked={allowed.has(g)} /> <span safe>{g}</span>
          </label>
        ))}
      </fieldset>
      <label for="introspects">A resource server: may introspect the access tokens of these apps (client IDs, space-separated; * for every app's)</label>
      <input id="introspects" name="introspects" type="text" maxlength="4000" value={attr(a.introspects)} />
      <MachineFields values={a} />
    </>
  )
}

/** Grants, allowed scopes, PAR and client authentication (SPEC "Machines and devices"), as `client create|update` takes them. */
function MachineFields(props: { values: AppValues }) {
  const a = props.values
  const w = MACHINE_WORDS
  return (
    <fieldset>
      <legend>{w.legend}</legend>
      {/* Unchecked boxes send nothing: this says the form had them (a form without them keeps what the app has). */}
      <Hidden name="machine_options" value="shown" />
      <fieldset>
        <legend>{w.grants}</legend>
        {GRANT_TYPES.map((g) => (
          <label class="check">
            <input type="checkbox" name="grant_types" value={g} checked={a.grantTypes.includes(g)} /> <span safe>{w.grantNames[g]}</span>
          </label>
        ))}
      </fieldset>
      <label for="allowed_scopes">{w.allowedScopes}</label>
      <input id="allowed_scopes" name="allowed_scopes" type="text" maxlength="4000" value={attr(a.allowedScopes)} />
      <label class="check">
        <input type="checkbox" name="require_par" value="true" checked={a.requirePar} /> {w.requirePar}
      </label>
      <label for="auth_method">{w.authMethod}</label>
      <select id="auth_method" name="auth_method">
        {Object.entries(w.methods).map(([value, words]) => (
          <option value={value} selected={a.authMethod === value} safe>
            {words}
          </option>
        ))}
      </select>
      <label for="jwks_uri">{w.jwksUri}</label>
      <input id="jwks_uri" name="jwks_uri" type="url" maxlength="2000" value={attr(a.jwksUri)} />
      <label for="jwks">{w.jwks}</label>
      <textarea id="jwks" name="jwks" rows="3" spellcheck="false" safe>
        {a.jwks}
      </textarea>
    </fieldset>
  )
}

export function AppPage(props: { csrf: string; app: AppRow; groups: string[]; endpoints: Array<[string, string]>; error?: string; notice?: string; typed?: Typed }) {
  const fields = { client_id: props.app.client_id }
  const typed = props.typed?.form === '/admin/apps/update' ? props.typed.fields : undefined
  return (
    <AdminLayout title="Apps" error={props.error} notice={props.notice}>
      <div class="app-head">
        {props.app.logo_url ? <img class="app-logo" src={attr(props.app.logo_url)} alt="" width="40" height="40" /> : ''}
        <h2 safe>{props.app.name}</h2>
      </div>
      <p>
        Client ID <code safe>{props.app.client_id}</code> · {props.app.public ? 'public' : 'confidential'}
      </p>
      <LogoAndLaunch app={props.app} />
      <Endpoints endpoints={props.endpoints} />
      <h2>Settings</h2>
      <form method="post" action="/admin/apps/update">
        <CsrfField token={props.csrf} />
        <Hidden name="client_id" value={props.app.client_id} />
        <AppFields groups={props.groups} values={typed ? typedApp(typed) : appValues(props.app)} />
        <div class="actions">
          <button type="submit">Save</button>
        </div>
      </form>
      <h2>Danger zone</h2>
      <div class="actions">
        {props.app.public ? '' : <ButtonForm action="/admin/apps/rotate-secret" csrf={props.csrf} label="Rotate secret" kind="danger" fields={fields} />}
        <ButtonForm action="/admin/apps/delete" csrf={props.csrf} label="Delete app" kind="danger" fields={fields} />
      </div>
    </AdminLayout>
  )
}

// The words of LogoAndLaunch, in one place (the message catalog takes them over).
const LAUNCH_WORDS = {
  opensAt: 'Opens at',
  fromYourApps: 'from users\' "Your apps".',
  noLaunch: 'No launch URL: only users who authorized it see it in "Your apps".',
  logo: 'Its logo is shown on the consent page.',
  noLogo: 'No logo.',
  change: 'Change them with',
}

/** Its logo and launch URL, set with `latchkey client update --logo-file / --launch-url` (a file is no form field here). */
function LogoAndLaunch(props: { app: AppRow }) {
  const { launch_url: launch, logo_url: logo } = props.app
  return (
    <p class="muted">
      {launch ? (
        <>
          {LAUNCH_WORDS.opensAt}{' '}
          <a href={attr(launch)} class="long" safe>
            {launch}
          </a>{' '}
          {LAUNCH_WORDS.fromYourApps}{' '}
        </>
      ) : (
        LAUNCH_WORDS.noLaunch + ' '
      )}
      {logo ? LAUNCH_WORDS.logo : LAUNCH_WORDS.noLogo} {LAUNCH_WORDS.change} <code>latchkey client update ID --logo-file PATH --launch-url URL</code>.
    </p>
  )
}

/**
 * Where an app's developer points it: the issuer, the discovery URL and every endpoint, each
 * with a copy button. The buttons are hidden until /assets/copy.js (same origin) shows them:
 * without script the URLs are plain text to select.
 */
function Endpoints(props: { endpoints: Array<[string, string]> }) {
  return (
    <>
      <h2>Endpoints</h2>
      <table class="admin endpoints">
        <tbody>
          {props.endpoints.map(([label, url], i) => (
            <tr>
              <th scope="row" safe>
                {label}
              </th>
              <td>
                <code id={`endpoint-${i}`} safe>
                  {url}
                </code>
              </td>
              <td>
                <button type="button" class="secondary copy" data-copy={`endpoint-${i}`} aria-label={attr(`Copy the ${label} URL`)} hidden>
                  Copy
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
export function SecretPage(props: { clientId: string; name: string; secret: string; endpoints: Array<[string, string]>; notice: string }) {
  return (
    <AdminLayout title="Apps" notice={props.notice}>
      <h2 safe>{props.name}</h2>
      <p>
        Client ID <code safe>{props.clientId}</code>
      </p>
      <p>
        Client secret <code class="secret" safe>{props.secret}</code>
      </p>
      <Endpoints endpoints={props.endpoints} />
      <p>
        <a href={attr(`/admin/apps/edit?client_id=${encodeURIComponent(props.clientId)}`)}>Done</a>
      </p>
    </AdminLayout>
  )
}
