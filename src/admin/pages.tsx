/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import type { Children } from '@kitajs/html'
import type { AuditEvent, GroupView, UserListing } from '../db/store'
import { ID_TOKEN_ALGS, type ClientView } from '../oauth/clients'
import type { ResourceView } from '../oauth/resources'
import { ButtonForm, CsrfField, ErrorNote, Hidden, Layout, attr } from '../views/layout'
import type { FormFields } from '../web/forms'

const SECTIONS = [
  ['/admin/users', 'Users'],
  ['/admin/apps', 'Apps'],
  ['/admin/groups', 'Groups'],
  ['/admin/resources', 'Resources'],
  ['/admin/keys', 'Signing keys'],
  ['/admin/audit', 'Audit log'],
] as const

export function AdminLayout(props: { title: string; error?: string; notice?: string; children?: Children }): JSX.Element {
  return (
    <Layout title={`${props.title} · Admin`} admin>
      <nav class="admin">
        {SECTIONS.map(([href, label]) => (label === props.title ? <strong>{label}</strong> : <a href={href}>{label}</a>))}
        <a href="/account">Your account</a>
      </nav>
      <h1 safe>{props.title}</h1>
      <ErrorNote message={props.error} />
      {props.notice ? (
        <p class="notice" role="status" safe>
          {props.notice}
        </p>
      ) : (
        ''
      )}
      {props.children}
    </Layout>
  )
}

const yes = (on: boolean) => (on ? 'yes' : '')

/** What a refused form had typed in (SPEC "/admin": a form that fails validation keeps what was typed): the form's action and its fields. */
export interface Typed {
  form: string
  fields: FormFields
}

/** The typed value of one field, when `typed` is this form's; '' otherwise. */
function typedIn(typed: Typed | undefined, form: string, match?: (fields: FormFields) => boolean): (name: string) => string {
  const mine = typed?.form === form && (!match || match(typed.fields))
  return (name) => {
    if (!mine) return ''
    const value = typed!.fields[name]
    return Array.isArray(value) ? (value[0] ?? '') : (value ?? '')
  }
}

/** A moment in UTC, to the second, saying so (SPEC "/admin": times show their time zone). */
export function Moment(props: { at: number }): JSX.Element {
  const iso = new Date(props.at).toISOString()
  return <time datetime={iso}>{iso.slice(0, 19).replace('T', ' ')} UTC</time>
}

export type UserRow = UserListing & { mfa: { totp: boolean; passkeys: number } }

export function UsersPage(props: { csrf: string; users: UserRow[]; query: string; selfId: string; error?: string; notice?: string; invitation?: string; typed?: Typed }) {
  const created = typedIn(props.typed, '/admin/users')
  const invited = typedIn(props.typed, '/admin/users/invite')
  return (
    <AdminLayout title="Users" error={props.error} notice={props.notice}>
      {props.invitation ? (
        <p class="origin">
          Invitation link (shown once, valid 7 days): <code class="secret" safe>{props.invitation}</code>
        </p>
      ) : (
        ''
      )}
      <form method="get" action="/admin/users" class="search">
        <label for="q">Search by email or name</label>
        <input id="q" name="q" type="text" value={attr(props.query)} maxlength="200" />
        <button type="submit" class="secondary">
          Search
        </button>
      </form>
      <table class="admin">
        <thead>
          <tr>
            <th>Email</th>
            <th>Name</th>
            <th>Admin</th>
            <th>Disabled</th>
            <th>Two-step</th>
            <th>Actions</th>
          </tr>
        </thead>
        <tbody>
          {props.users.map((u) => {
            const fields = { user_id: u.id }
            const self = u.id === props.selfId
            return (
              <tr>
                <td safe>{u.email}</td>
                <td safe>{u.fullName}</td>
                <td>{yes(u.admin)}</td>
                <td>{yes(u.disabled)}</td>
                <td>{[u.mfa.totp ? 'TOTP' : '', u.mfa.passkeys ? `${u.mfa.passkeys} passkey(s)` : ''].filter(Boolean).join(', ')}</td>
                <td class="row-actions">
                  {self ? (
                    <span class="muted">you</span>
                  ) : (
                    <ButtonForm action={u.disabled ? '/admin/users/enable' : '/admin/users/disable'} csrf={props.csrf} label={u.disabled ? 'Enable' : 'Disable'} kind="secondary" fields={fields} />
                  )}
                  <ButtonForm action="/admin/users/admin" csrf={props.csrf} label={u.admin ? 'Remove admin' : 'Make admin'} kind="secondary" fields={{ ...fields, admin: String(!u.admin) }} />
                  <ButtonForm action="/admin/users/sign-out" csrf={props.csrf} label="Sign out everywhere" kind="secondary" fields={fields} />
                  {u.mfa.totp ? <ButtonForm action="/admin/users/reset-two-step" csrf={props.csrf} label="Reset two-step" kind="danger" fields={fields} /> : ''}
                  {self ? '' : <ButtonForm action="/admin/users/delete" csrf={props.csrf} label="Delete" kind="danger" fields={fields} />}
                </td>
              </tr>
            )
          })}
        </tbody>
      </table>
      {props.users.length === 0 ? <p class="muted">No users match.</p> : ''}
      <h2>Create a user</h2>
      <form method="post" action="/admin/users">
        <CsrfField token={props.csrf} />
        <UserFields typed={created} />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="new-password" required />
        <AdminCheckbox checked={created('admin') === 'true'} />
        <div class="actions">
          <button type="submit">Create user</button>
        </div>
      </form>
      <h2>Invite a user</h2>
      <p class="muted">They choose their own password through a link valid for 7 days: mailed when mail is set up, otherwise shown here once.</p>
      <form method="post" action="/admin/users/invite">
        <CsrfField token={props.csrf} />
        <UserFields prefix="invite_" typed={invited} />
        <AdminCheckbox prefix="invite_" checked={invited('admin') === 'true'} />
        <div class="actions">
          <button type="submit">Invite</button>
        </div>
      </form>
    </AdminLayout>
  )
}

function UserFields(props: { prefix?: string; typed: (name: string) => string }) {
  const id = (name: string) => (props.prefix ?? '') + name
  return (
    <>
      <label for={id('email')}>Email</label>
      <input id={id('email')} name="email" type="email" required value={attr(props.typed('email'))} />
      <label for={id('full_name')}>Full name</label>
      <input id={id('full_name')} name="full_name" type="text" required value={attr(props.typed('full_name'))} />
    </>
  )
}

function AdminCheckbox(props: { prefix?: string; checked: boolean }) {
  return (
    <label class="check">
      <input type="checkbox" name="admin" value="true" id={(props.prefix ?? '') + 'admin'} checked={props.checked} /> Administrator
    </label>
  )
}

export type AppRow = ClientView & { allowed_groups: string[]; kind: string }

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
              <td>
                <a href={attr(`/admin/apps/edit?client_id=${encodeURIComponent(a.client_id)}`)} safe>
                  {a.name}
                </a>
              </td>
              <td>
                <code safe>{a.client_id}</code>
              </td>
              <td safe>{[a.public ? 'public' : 'confidential', KIND_WORDS[a.kind] ?? ''].filter(Boolean).join(', ')}</td>
              <td safe>{a.allowed_groups.join(', ') || 'everyone'}</td>
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
}

const NEW_APP: AppValues = { name: '', redirectUris: '', postLogoutRedirectUris: '', skipConsent: false, requireMfa: false, idTokenAlg: 'RS256', allowedGroups: [], introspects: '' }

const appValues = (a: AppRow): AppValues => ({
  name: a.name,
  redirectUris: a.redirect_uris.join('\n'),
  postLogoutRedirectUris: (a.post_logout_redirect_uris ?? []).join('\n'),
  skipConsent: a.skip_consent,
  requireMfa: a.require_mfa,
  idTokenAlg: a.id_token_signed_response_alg ?? 'RS256',
  allowedGroups: a.allowed_groups,
  introspects: (a.introspects ?? []).join(' '),
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
      <textarea id="redirect_uris" name="redirect_uris" rows="3" required safe>
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
    </>
  )
}

export function AppPage(props: { csrf: string; app: AppRow; groups: string[]; endpoints: Array<[string, string]>; error?: string; notice?: string; typed?: Typed }) {
  const fields = { client_id: props.app.client_id }
  const typed = props.typed?.form === '/admin/apps/update' ? props.typed.fields : undefined
  return (
    <AdminLayout title="Apps" error={props.error} notice={props.notice}>
      <h2 safe>{props.app.name}</h2>
      <p>
        Client ID <code safe>{props.app.client_id}</code> · {props.app.public ? 'public' : 'confidential'}
      </p>
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

export function GroupsPage(props: { csrf: string; groups: GroupView[]; error?: string; notice?: string; typed?: Typed }) {
  const created = typedIn(props.typed, '/admin/groups')
  return (
    <AdminLayout title="Groups" error={props.error} notice={props.notice}>
      {props.groups.length === 0 ? <p class="muted">No groups yet.</p> : ''}
      {props.groups.map((g) => (
        <section class="group">
          <h2 safe>{g.name}</h2>
          <ul class="apps">
            {g.members.map((m) => (
              <li>
                <span safe>{m.email}</span>
                <ButtonForm action="/admin/groups/remove" csrf={props.csrf} label="Remove" kind="secondary" fields={{ name: g.name, user: m.id }} />
              </li>
            ))}
          </ul>
          <form method="post" action="/admin/groups/add" class="rename">
            <CsrfField token={props.csrf} />
            <Hidden name="name" value={g.name} />
            <input
              name="user"
              type="text"
              placeholder="email or user id"
              aria-label={attr(`Add a member to ${g.name}`)}
              required
              value={attr(typedIn(props.typed, '/admin/groups/add', (f) => f.name === g.name)('user'))}
            />
            <button type="submit" class="secondary">
              Add member
            </button>
          </form>
          <ButtonForm action="/admin/groups/delete" csrf={props.csrf} label="Delete group" kind="danger" fields={{ name: g.name }} />
        </section>
      ))}
      <h2>Create a group</h2>
      <form method="post" action="/admin/groups">
        <CsrfField token={props.csrf} />
        <label for="group_name">Name</label>
        <input id="group_name" name="name" type="text" required maxlength="64" value={attr(created('name'))} />
        <div class="actions">
          <button type="submit">Create group</button>
        </div>
      </form>
    </AdminLayout>
  )
}

export function ResourcesPage(props: { csrf: string; resources: ResourceView[]; error?: string; notice?: string; typed?: Typed }) {
  const typed = typedIn(props.typed, '/admin/resources')
  return (
    <AdminLayout title="Resources" error={props.error} notice={props.notice}>
      <table class="admin">
        <thead>
          <tr>
            <th>Name</th>
            <th>URI</th>
            <th>Scopes</th>
            <th>Tokens</th>
            <th></th>
          </tr>
        </thead>
        <tbody>
          {props.resources.map((r) => (
            <tr>
              <td safe>{r.name}</td>
              <td>
                <code safe>{r.uri}</code>
              </td>
              <td safe>{Object.keys(r.scopes).join(' ')}</td>
              <td safe>{r.token_format}</td>
              <td>
                <ButtonForm action="/admin/resources/delete" csrf={props.csrf} label="Delete" kind="danger" fields={{ uri: r.uri }} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {props.resources.length === 0 ? <p class="muted">No resources yet.</p> : ''}
      <h2>Add a resource</h2>
      <form method="post" action="/admin/resources">
        <CsrfField token={props.csrf} />
        <label for="uri">URI</label>
        <input id="uri" name="uri" type="text" required placeholder="https://mcp.example.com" value={attr(typed('uri'))} />
        <label for="resource_name">Name</label>
        <input id="resource_name" name="name" type="text" required maxlength="200" value={attr(typed('name'))} />
        <label for="scopes">Scopes (one per line: name=what the consent page says)</label>
        <textarea id="scopes" name="scopes" rows="3" required safe>
          {typed('scopes')}
        </textarea>
        <label for="token_format">Access tokens</label>
        <select id="token_format" name="token_format">
          <option value="opaque">opaque (checked by introspection)</option>
          <option value="jwt" selected={typed('token_format') === 'jwt'}>
            JWT (RFC 9068, checked offline)
          </option>
        </select>
        <label for="introspectors">Clients that may introspect its tokens (client IDs, space-separated)</label>
        <input id="introspectors" name="introspectors" type="text" value={attr(typed('introspectors'))} />
        <div class="actions">
          <button type="submit">Add resource</button>
        </div>
      </form>
    </AdminLayout>
  )
}

export function KeysPage(props: { csrf: string; keys: Array<{ kid: string; alg: string; createdAt: number; state: string }>; error?: string; notice?: string }) {
  return (
    <AdminLayout title="Signing keys" error={props.error} notice={props.notice}>
      <table class="admin">
        <thead>
          <tr>
            <th>Key ID</th>
            <th>Algorithm</th>
            <th>Created</th>
            <th>State</th>
          </tr>
        </thead>
        <tbody>
          {props.keys.map((k) => (
            <tr>
              <td>
                <code safe>{k.kid}</code>
              </td>
              <td safe>{k.alg}</td>
              <td>
                <Moment at={k.createdAt} />
              </td>
              <td safe>{k.state}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="muted">Rotating publishes a new key at once; it signs once relying parties can have fetched it, and the old key stays published until tokens it signed have expired.</p>
      <ButtonForm action="/admin/keys/rotate" csrf={props.csrf} label="Rotate signing key" kind="danger" inline={false} />
    </AdminLayout>
  )
}

/** The emails of users and the names of apps the audit page names, looked up when it is shown (an id alone where one is gone). */
export interface AuditNames {
  users: Map<string, string>
  clients: Map<string, string>
}

/** A name with its id beside it; the id alone when the name is unknown (deleted since). */
function Named(props: { id: string | null; name?: string }): JSX.Element {
  if (props.id === null) return ''
  return (
    <>
      {props.name ? <span safe>{props.name}</span> : ''} <code class="muted" safe>{props.id}</code>
    </>
  )
}

/** An event's detail, with its actor (the admin who acted) named. */
function auditDetail(detail: string | null, names: AuditNames): string {
  if (!detail) return ''
  try {
    const parsed = JSON.parse(detail) as Record<string, unknown>
    const actor = typeof parsed.actor === 'string' ? names.users.get(parsed.actor) : undefined
    return actor ? JSON.stringify({ ...parsed, actor: `${actor} (${parsed.actor})` }) : detail
  } catch {
    return detail
  }
}

export function AuditPage(props: { events: AuditEvent[]; filter: { user: string; client: string; kind: string }; kinds: readonly string[]; names: AuditNames }) {
  return (
    <AdminLayout title="Audit log">
      <form method="get" action="/admin/audit" class="filters">
        <label for="user">User ID</label>
        <input id="user" name="user" type="text" value={attr(props.filter.user)} />
        <label for="client">Client ID</label>
        <input id="client" name="client" type="text" value={attr(props.filter.client)} />
        <label for="kind">Kind</label>
        <select id="kind" name="kind">
          <option value="">any</option>
          {props.kinds.map((k) => (
            <option value={attr(k)} selected={k === props.filter.kind}>
              {k}
            </option>
          ))}
        </select>
        <div class="actions">
          <button type="submit" class="secondary">
            Filter
          </button>
        </div>
      </form>
      <table class="admin audit">
        <thead>
          <tr>
            <th>Time</th>
            <th>Kind</th>
            <th>User</th>
            <th>App</th>
            <th>Address</th>
            <th>Detail</th>
          </tr>
        </thead>
        <tbody>
          {props.events.map((e) => (
            <tr>
              <td>
                <Moment at={e.at} />
              </td>
              <td safe>{e.kind}</td>
              <td>
                <Named id={e.userId} name={e.userId === null ? undefined : props.names.users.get(e.userId)} />
              </td>
              <td>
                <Named id={e.clientId} name={e.clientId === null ? undefined : props.names.clients.get(e.clientId)} />
              </td>
              <td safe>{e.address ?? ''}</td>
              <td safe>{auditDetail(e.detail, props.names)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {props.events.length === 0 ? <p class="muted">No events match.</p> : ''}
    </AdminLayout>
  )
}
