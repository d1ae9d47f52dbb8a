/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import type { Children } from '@kitajs/html'
import type { AuditEvent, GroupView, UserListing } from '../db/store'
import type { ResourceView } from '../oauth/resources'
import { ButtonForm, CsrfField, ErrorNote, Hidden, Layout, attr } from '../views/layout'
import type { FormFields } from '../web/forms'

const SECTIONS = [
  ['/admin/users', 'Users'],
  ['/admin/apps', 'Apps'],
  ['/admin/groups', 'Groups'],
  ['/admin/resources', 'Resources'],
  ['/admin/sites', 'Sites'],
  ['/admin/providers', 'Sign-in providers'],
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
export function typedIn(typed: Typed | undefined, form: string, match?: (fields: FormFields) => boolean): (name: string) => string {
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
              <td data-label="Key ID">
                <code safe>{k.kid}</code>
              </td>
              <td data-label="Algorithm" safe>
                {k.alg}
              </td>
              <td data-label="Created">
                <Moment at={k.createdAt} />
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
              <td data-label="Time">
                <Moment at={e.at} />
              </td>
              <td data-label="Kind" safe>
                {e.kind}
              </td>
              <td data-label="User" class="long">
                <Named id={e.userId} name={e.userId === null ? undefined : props.names.users.get(e.userId)} />
              </td>
              <td data-label="App" class="long">
                <Named id={e.clientId} name={e.clientId === null ? undefined : props.names.clients.get(e.clientId)} />
              </td>
              <td data-label="Address" class="long" safe>
                {e.address ?? ''}
              </td>
              <td data-label="Detail" class="long" safe>
                {auditDetail(e.detail, props.names)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {props.events.length === 0 ? <p class="muted">No events match.</p> : ''}
    </AdminLayout>
  )
}
