/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import type { Children } from '@kitajs/html'
import type { AuditEvent, GroupView, UserListing } from '../db/store'
import { ID_TOKEN_ALGS, type ClientView } from '../oauth/clients'
import type { ResourceView } from '../oauth/resources'
import { ButtonForm, CsrfField, ErrorNote, Hidden, Layout, When, attr } from '../views/layout'

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

export type UserRow = UserListing & { mfa: { totp: boolean; passkeys: number } }

export function UsersPage(props: { csrf: string; users: UserRow[]; query: string; selfId: string; error?: string; notice?: string; invitation?: string }) {
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
                <td data-label="Email" class="long" safe>
                  {u.email}
                </td>
                <td data-label="Name" safe>
                  {u.fullName}
                </td>
                <td data-label="Admin">{yes(u.admin)}</td>
                <td data-label="Disabled">{yes(u.disabled)}</td>
                <td data-label="Two-step">{[u.mfa.totp ? 'TOTP' : '', u.mfa.passkeys ? `${u.mfa.passkeys} passkey(s)` : ''].filter(Boolean).join(', ')}</td>
                <td data-label="Actions" class="row-actions">
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
        <UserFields />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="new-password" required />
        <AdminCheckbox />
        <div class="actions">
          <button type="submit">Create user</button>
        </div>
      </form>
      <h2>Invite a user</h2>
      <p class="muted">They choose their own password through a link valid for 7 days: mailed when mail is set up, otherwise shown here once.</p>
      <form method="post" action="/admin/users/invite">
        <CsrfField token={props.csrf} />
        <UserFields prefix="invite_" />
        <AdminCheckbox prefix="invite_" />
        <div class="actions">
          <button type="submit">Invite</button>
        </div>
      </form>
    </AdminLayout>
  )
}

function UserFields(props: { prefix?: string }) {
  const id = (name: string) => (props.prefix ?? '') + name
  return (
    <>
      <label for={id('email')}>Email</label>
      <input id={id('email')} name="email" type="email" required />
      <label for={id('full_name')}>Full name</label>
      <input id={id('full_name')} name="full_name" type="text" required />
    </>
  )
}

function AdminCheckbox(props: { prefix?: string }) {
  return (
    <label class="check">
      <input type="checkbox" name="admin" value="true" id={(props.prefix ?? '') + 'admin'} /> Administrator
    </label>
  )
}

export type AppRow = ClientView & { allowed_groups: string[]; kind: string }

const KIND_WORDS: Record<string, string> = { operator: '', metadata: 'metadata document', dynamic: 'registered dynamically' }

export function AppsPage(props: { csrf: string; apps: AppRow[]; groups: string[]; error?: string; notice?: string }) {
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
        <AppFields groups={props.groups} />
        <label class="check">
          <input type="checkbox" name="public" value="true" /> Public client (no secret; PKCE)
        </label>
        <div class="actions">
          <button type="submit">Create app</button>
        </div>
      </form>
    </AdminLayout>
  )
}

/** The options an app has, filled in when editing one. */
function AppFields(props: { groups: string[]; app?: AppRow }) {
  const a = props.app
  const allowed = new Set(a?.allowed_groups ?? [])
  return (
    <>
      <label for="name">Name</label>
      <input id="name" name="name" type="text" required maxlength="200" value={attr(a?.name ?? '')} />
      <label for="redirect_uris">Redirect URIs (one per line)</label>
      <textarea id="redirect_uris" name="redirect_uris" rows="3" required safe>
        {(a?.redirect_uris ?? []).join('\n')}
      </textarea>
      <label for="post_logout_redirect_uris">Post-logout redirect URIs (one per line)</label>
      <textarea id="post_logout_redirect_uris" name="post_logout_redirect_uris" rows="2" safe>
        {(a?.post_logout_redirect_uris ?? []).join('\n')}
      </textarea>
      <label class="check">
        <input type="checkbox" name="skip_consent" value="true" checked={a?.skip_consent} /> Skip the consent page (first-party app)
      </label>
      <label class="check">
        <input type="checkbox" name="require_mfa" value="true" checked={a?.require_mfa} /> Require two-step sign-in
      </label>
      <label for="id_token_alg">ID tokens signed with</label>
      <select id="id_token_alg" name="id_token_alg">
        {ID_TOKEN_ALGS.map((alg) => (
          <option value={alg} selected={(a?.id_token_signed_response_alg ?? 'RS256') === alg}>
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
      <input id="introspects" name="introspects" type="text" maxlength="4000" value={attr((a?.introspects ?? []).join(' '))} />
    </>
  )
}

export function AppPage(props: { csrf: string; app: AppRow; groups: string[]; error?: string; notice?: string }) {
  const fields = { client_id: props.app.client_id }
  return (
    <AdminLayout title="Apps" error={props.error} notice={props.notice}>
      <h2 safe>{props.app.name}</h2>
      <p>
        Client ID <code safe>{props.app.client_id}</code> · {props.app.public ? 'public' : 'confidential'}
      </p>
      <form method="post" action="/admin/apps/update">
        <CsrfField token={props.csrf} />
        <Hidden name="client_id" value={props.app.client_id} />
        <AppFields groups={props.groups} app={props.app} />
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

/** A new client secret: shown this once, never stored in the clear. */
export function SecretPage(props: { clientId: string; name: string; secret: string }) {
  return (
    <AdminLayout title="Apps" notice="Copy the secret now: it is not shown again.">
      <h2 safe>{props.name}</h2>
      <p>
        Client ID <code safe>{props.clientId}</code>
      </p>
      <p>
        Client secret <code class="secret" safe>{props.secret}</code>
      </p>
      <p>
        <a href={attr(`/admin/apps/edit?client_id=${encodeURIComponent(props.clientId)}`)}>Done</a>
      </p>
    </AdminLayout>
  )
}

export function GroupsPage(props: { csrf: string; groups: GroupView[]; error?: string; notice?: string }) {
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
            <input name="user" type="text" placeholder="email or user id" aria-label={attr(`Add a member to ${g.name}`)} required />
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
        <input id="group_name" name="name" type="text" required maxlength="64" />
        <div class="actions">
          <button type="submit">Create group</button>
        </div>
      </form>
    </AdminLayout>
  )
}

export function ResourcesPage(props: { csrf: string; resources: ResourceView[]; error?: string; notice?: string }) {
  return (
    <AdminLayout title="Resources" error={props.error} notice={props.notice}>
      <table class="admin">
        <thead>
          <tr>
            <th>Name</th>
            <th>URI</th>
            <th>Scopes</th>
            <th>Tokens</th>
            <th>Actions</th>
          </tr>
        </thead>
        <tbody>
          {props.resources.map((r) => (
            <tr>
              <td data-label="Name" safe>
                {r.name}
              </td>
              <td data-label="URI">
                <code safe>{r.uri}</code>
              </td>
              <td data-label="Scopes" safe>
                {Object.keys(r.scopes).join(' ')}
              </td>
              <td data-label="Tokens" safe>
                {r.token_format}
              </td>
              <td data-label="" class="row-actions">
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
        <input id="uri" name="uri" type="text" required placeholder="https://mcp.example.com" />
        <label for="resource_name">Name</label>
        <input id="resource_name" name="name" type="text" required maxlength="200" />
        <label for="scopes">Scopes (one per line: name=what the consent page says)</label>
        <textarea id="scopes" name="scopes" rows="3" required></textarea>
        <label for="token_format">Access tokens</label>
        <select id="token_format" name="token_format">
          <option value="opaque">opaque (checked by introspection)</option>
          <option value="jwt">JWT (RFC 9068, checked offline)</option>
        </select>
        <label for="introspectors">Clients that may introspect its tokens (client IDs, space-separated)</label>
        <input id="introspectors" name="introspectors" type="text" />
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
              <td data-label="Key ID">
                <code safe>{k.kid}</code>
              </td>
              <td data-label="Algorithm" safe>
                {k.alg}
              </td>
              <td data-label="Created">
                <When at={k.createdAt} />
              </td>
              <td data-label="State" safe>
                {k.state}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="muted">Rotating publishes a new key at once; it signs once relying parties can have fetched it, and the old key stays published until tokens it signed have expired.</p>
      <ButtonForm action="/admin/keys/rotate" csrf={props.csrf} label="Rotate signing key" kind="danger" inline={false} />
    </AdminLayout>
  )
}

export function AuditPage(props: { events: AuditEvent[]; filter: { user: string; client: string; kind: string }; kinds: readonly string[] }) {
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
              <td data-label="Time">
                <time datetime={new Date(e.at).toISOString()}>{new Date(e.at).toISOString().slice(0, 19).replace('T', ' ')}</time>
              </td>
              <td data-label="Kind" safe>
                {e.kind}
              </td>
              <td data-label="User" class="long" safe>
                {e.userId ?? ''}
              </td>
              <td data-label="App" class="long" safe>
                {e.clientId ?? ''}
              </td>
              <td data-label="Address" class="long" safe>
                {e.address ?? ''}
              </td>
              <td data-label="Detail" class="long" safe>
                {e.detail ?? ''}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {props.events.length === 0 ? <p class="muted">No events match.</p> : ''}
    </AdminLayout>
  )
}

/**
 * A destructive action on a sign-in older than 15 minutes: the same form again, its fields
 * kept, with the admin's password — or a fresh sign-in (a passkey) and the action repeated.
 */
export function ConfirmPage(props: { csrf: string; action: string; fields: Record<string, string | string[]>; hasPassword: boolean; signInAgain: string; error?: string }) {
  const kept = Object.entries(props.fields).filter(([name]) => name !== 'csrf_token' && name !== 'confirm_password')
  return (
    <AdminLayout title="Confirm it is you" error={props.error}>
      <p>You signed in more than 15 minutes ago. This change removes something or gives more access, so confirm it is you first.</p>
      {props.hasPassword ? (
        <form method="post" action={attr(props.action)}>
          <CsrfField token={props.csrf} />
          {kept.flatMap(([name, value]) => ([] as string[]).concat(value).map((v) => <Hidden name={name} value={v} />))}
          <label for="confirm_password">Your password</label>
          <input id="confirm_password" name="confirm_password" type="password" autocomplete="current-password" required />
          <div class="actions">
            <button type="submit" class="danger">
              Confirm
            </button>
          </div>
        </form>
      ) : (
        ''
      )}
      <p>
        <a href={attr(props.signInAgain)}>{props.hasPassword ? 'Or sign in again (with a passkey)' : 'Sign in again with your passkey'}</a>, then repeat the change.
      </p>
    </AdminLayout>
  )
}
