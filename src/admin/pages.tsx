/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import type { Children } from '@kitajs/html'
import type { AuditEvent, GroupView, UserListing } from '../db/store'
import type { ResourceView } from '../oauth/resources'
import { scopeWords } from '../oauth/scopes'
import { ButtonForm, CsrfField, ErrorNote, Hidden, Layout, attr } from '../views/layout'
import type { FormFields } from '../web/forms'
import { currentSpeech, formatTime, raw, t, th } from '../i18n'
import { isKnownAddress } from '../web/client-address'
import type { MessageKey } from '../i18n/types'

const SECTIONS = [
  ['/admin/users', 'admin.users.title'],
  ['/admin/apps', 'admin.apps.title'],
  ['/admin/groups', 'admin.groups.title'],
  ['/admin/resources', 'admin.resources.title'],
  ['/admin/sites', 'admin.sites.title'],
  ['/admin/providers', 'admin.providers.title'],
  ['/admin/keys', 'admin.keys.title'],
  ['/admin/audit', 'admin.audit.title'],
] as const satisfies ReadonlyArray<readonly [string, MessageKey]>

/**
 * A message named by its catalog key, said when the page renders (in the admin's language): what
 * a notice cookie carries across the redirect, and a refusal the code words itself.
 */
export interface Saying {
  key: MessageKey
  params?: Readonly<Record<string, string | number>>
}
/** Words for a page: a Saying, text already written, or words made when the page renders (in its speech). */
export type Words = string | Saying | (() => string)
export const say = (words: Words | undefined): string | undefined =>
  words === undefined || typeof words === 'string' ? words : typeof words === 'function' ? words() : currentSpeech().messages[words.key].text(words.params)

export function AdminLayout(props: { title: string; error?: Words; notice?: Words; children?: Children }): JSX.Element {
  const notice = say(props.notice)
  return (
    <Layout title={t('admin.pageTitle', { title: props.title })} admin>
      <nav class="admin">
        {SECTIONS.map(([href, key]) => {
          const label = t(key)
          return label === props.title ? <strong safe>{label}</strong> : <a href={href} safe>{label}</a>
        })}
        <a href="/account">{th('admin.yourAccount')}</a>
      </nav>
      <h1 safe>{props.title}</h1>
      <ErrorNote message={say(props.error)} />
      {notice ? (
        <p class="notice" role="status" safe>
          {notice}
        </p>
      ) : (
        ''
      )}
      {props.children}
    </Layout>
  )
}

const yes = (on: boolean) => (on ? t('admin.yes') : '')

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

/**
 * A moment to the second in the admin's language and zone (their /account choice, else UTC),
 * naming the zone (SPEC "/admin": times show their time zone); the exact instant for machines.
 */
export function Moment(props: { at: number }): JSX.Element {
  return (
    <time datetime={new Date(props.at).toISOString()} safe>
      {formatTime(props.at, 'second')}
    </time>
  )
}

export type UserRow = UserListing & { mfa: { totp: boolean; passkeys: number } }

export function UsersPage(props: { csrf: string; users: UserRow[]; query: string; selfId: string; error?: Words; notice?: Words; invitation?: string; typed?: Typed }) {
  const created = typedIn(props.typed, '/admin/users')
  const invited = typedIn(props.typed, '/admin/users/invite')
  return (
    <AdminLayout title={t('admin.users.title')} error={props.error} notice={props.notice}>
      {props.invitation ? (
        <p class="origin">
          {th('admin.users.invitation')} <code class="secret" safe>{props.invitation}</code>
        </p>
      ) : (
        ''
      )}
      <form method="get" action="/admin/users" class="search">
        <label for="q">{th('admin.users.search')}</label>
        <input id="q" name="q" type="text" value={attr(props.query)} maxlength="200" />
        <button type="submit" class="secondary">
          {th('admin.users.searchSubmit')}
        </button>
      </form>
      <table class="admin">
        <thead>
          <tr>
            <th>{th('admin.field.email')}</th>
            <th>{th('admin.field.name')}</th>
            <th>{th('admin.field.admin')}</th>
            <th>{th('admin.field.disabled')}</th>
            <th>{th('admin.field.twoStep')}</th>
            <th>{th('admin.field.actions')}</th>
          </tr>
        </thead>
        <tbody>
          {props.users.map((u) => {
            const fields = { user_id: u.id }
            const self = u.id === props.selfId
            return (
              <tr>
                <td data-label={attr(t('admin.field.email'))} class="long" safe>
                  {u.email}
                </td>
                <td data-label={attr(t('admin.field.name'))} safe>
                  {u.fullName}
                </td>
                <td data-label={attr(t('admin.field.admin'))}>{yes(u.admin)}</td>
                <td data-label={attr(t('admin.field.disabled'))}>{yes(u.disabled)}</td>
                <td data-label={attr(t('admin.field.twoStep'))}>{[u.mfa.totp ? 'TOTP' : '', u.mfa.passkeys ? t('admin.users.passkeys', { count: u.mfa.passkeys }) : ''].filter(Boolean).join(', ')}</td>
                <td data-label={attr(t('admin.field.actions'))} class="row-actions">
                  {self ? (
                    <span class="muted">{th('admin.users.you')}</span>
                  ) : (
                    <ButtonForm action={u.disabled ? '/admin/users/enable' : '/admin/users/disable'} csrf={props.csrf} label={u.disabled ? t('admin.users.enable') : t('admin.users.disable')} kind="secondary" fields={fields} />
                  )}
                  <ButtonForm action="/admin/users/admin" csrf={props.csrf} label={u.admin ? t('admin.users.removeAdmin') : t('admin.users.makeAdmin')} kind="secondary" fields={{ ...fields, admin: String(!u.admin) }} />
                  <ButtonForm action="/admin/users/sign-out" csrf={props.csrf} label={t('admin.users.signOut')} kind="secondary" fields={fields} />
                  {u.mfa.totp ? <ButtonForm action="/admin/users/reset-two-step" csrf={props.csrf} label={t('admin.users.resetTwoStep')} kind="danger" fields={fields} /> : ''}
                  {self ? '' : <ButtonForm action="/admin/users/delete" csrf={props.csrf} label={t('admin.delete')} kind="danger" fields={fields} />}
                </td>
              </tr>
            )
          })}
        </tbody>
      </table>
      {props.users.length === 0 ? <p class="muted">{th('admin.users.none')}</p> : ''}
      <h2>{th('admin.users.create')}</h2>
      <form method="post" action="/admin/users">
        <CsrfField token={props.csrf} />
        <UserFields typed={created} />
        <label for="password">{th('admin.users.password')}</label>
        <input id="password" name="password" type="password" autocomplete="new-password" required />
        <AdminCheckbox checked={created('admin') === 'true'} />
        <div class="actions">
          <button type="submit">{th('admin.users.createSubmit')}</button>
        </div>
      </form>
      <h2>{th('admin.users.invite')}</h2>
      <p class="muted">{th('admin.users.inviteHint')}</p>
      <form method="post" action="/admin/users/invite">
        <CsrfField token={props.csrf} />
        <UserFields prefix="invite_" typed={invited} />
        <AdminCheckbox prefix="invite_" checked={invited('admin') === 'true'} />
        <div class="actions">
          <button type="submit">{th('admin.users.inviteSubmit')}</button>
        </div>
      </form>
    </AdminLayout>
  )
}

function UserFields(props: { prefix?: string; typed: (name: string) => string }) {
  const id = (name: string) => (props.prefix ?? '') + name
  return (
    <>
      <label for={id('email')}>{th('admin.field.email')}</label>
      <input id={id('email')} name="email" type="email" required value={attr(props.typed('email'))} />
      <label for={id('full_name')}>{th('admin.users.fullName')}</label>
      <input id={id('full_name')} name="full_name" type="text" required value={attr(props.typed('full_name'))} />
    </>
  )
}

function AdminCheckbox(props: { prefix?: string; checked: boolean }) {
  return (
    <label class="check">
      <input type="checkbox" name="admin" value="true" id={(props.prefix ?? '') + 'admin'} checked={props.checked} /> {th('admin.users.administrator')}
    </label>
  )
}

export function GroupsPage(props: { csrf: string; groups: GroupView[]; error?: Words; notice?: Words; typed?: Typed }) {
  const created = typedIn(props.typed, '/admin/groups')
  return (
    <AdminLayout title={t('admin.groups.title')} error={props.error} notice={props.notice}>
      {props.groups.length === 0 ? <p class="muted">{th('admin.groups.none')}</p> : ''}
      {props.groups.map((g) => (
        <section class="group">
          <h2 safe>{g.name}</h2>
          <ul class="apps">
            {g.members.map((m) => (
              <li>
                <span safe>{m.email}</span>
                <ButtonForm action="/admin/groups/remove" csrf={props.csrf} label={t('admin.groups.remove')} kind="secondary" fields={{ name: g.name, user: m.id }} />
              </li>
            ))}
          </ul>
          <form method="post" action="/admin/groups/add" class="rename">
            <CsrfField token={props.csrf} />
            <Hidden name="name" value={g.name} />
            <input
              name="user"
              type="text"
              placeholder={attr(t('admin.groups.memberPlaceholder'))}
              aria-label={attr(t('admin.groups.addMemberTo', { name: g.name }))}
              required
              value={attr(typedIn(props.typed, '/admin/groups/add', (f) => f.name === g.name)('user'))}
            />
            <button type="submit" class="secondary">
              {th('admin.groups.addMember')}
            </button>
          </form>
          <ButtonForm action="/admin/groups/delete" csrf={props.csrf} label={t('admin.groups.delete')} kind="danger" fields={{ name: g.name }} />
        </section>
      ))}
      <h2>{th('admin.groups.create')}</h2>
      <form method="post" action="/admin/groups">
        <CsrfField token={props.csrf} />
        <label for="group_name">{th('admin.field.name')}</label>
        <input id="group_name" name="name" type="text" required maxlength="64" value={attr(created('name'))} />
        <div class="actions">
          <button type="submit">{th('admin.groups.createSubmit')}</button>
        </div>
      </form>
    </AdminLayout>
  )
}

export function ResourcesPage(props: { csrf: string; resources: ResourceView[]; error?: Words; notice?: Words; typed?: Typed }) {
  const typed = typedIn(props.typed, '/admin/resources')
  return (
    <AdminLayout title={t('admin.resources.title')} error={props.error} notice={props.notice}>
      <table class="admin">
        <thead>
          <tr>
            <th>{th('admin.field.name')}</th>
            <th>{th('admin.field.uri')}</th>
            <th>{th('admin.field.scopes')}</th>
            <th>{th('admin.field.tokens')}</th>
            <th>{th('admin.field.actions')}</th>
          </tr>
        </thead>
        <tbody>
          {props.resources.map((r) => (
            <tr>
              <td data-label={attr(t('admin.field.name'))} safe>
                {r.name}
              </td>
              <td data-label={attr(t('admin.field.uri'))}>
                <code safe>{r.uri}</code>
              </td>
              <td data-label={attr(t('admin.field.scopes'))}>
                {/* Each scope with its words in the reader's language (else English), as the consent page shows them. */}
                {Object.keys(r.scopes).map((scope) => (
                  <div>
                    <code safe>{scope}</code> <span class="muted" safe>{scopeWords(scope, r.scopes)}</span>
                  </div>
                ))}
              </td>
              <td data-label={attr(t('admin.field.tokens'))} safe>
                {r.token_format}
              </td>
              <td data-label="" class="row-actions">
                <ButtonForm action="/admin/resources/delete" csrf={props.csrf} label={t('admin.delete')} kind="danger" fields={{ uri: r.uri }} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {props.resources.length === 0 ? <p class="muted">{th('admin.resources.none')}</p> : ''}
      <h2>{th('admin.resources.add')}</h2>
      <form method="post" action="/admin/resources">
        <CsrfField token={props.csrf} />
        <label for="uri">{th('admin.field.uri')}</label>
        <input id="uri" name="uri" type="text" required placeholder="https://mcp.example.com" value={attr(typed('uri'))} dir="ltr" />
        <label for="resource_name">{th('admin.field.name')}</label>
        <input id="resource_name" name="name" type="text" required maxlength="200" value={attr(typed('name'))} />
        <label for="scopes">{th('admin.resources.scopes')}</label>
        <textarea id="scopes" name="scopes" rows="3" required dir="ltr" safe>
          {typed('scopes')}
        </textarea>
        <label for="token_format">{th('admin.resources.accessTokens')}</label>
        <select id="token_format" name="token_format">
          <option value="opaque">{th('admin.resources.opaque')}</option>
          <option value="jwt" selected={typed('token_format') === 'jwt'}>
            {th('admin.resources.jwt')}
          </option>
        </select>
        <label for="introspectors">{th('admin.resources.introspectors')}</label>
        <input id="introspectors" name="introspectors" type="text" value={attr(typed('introspectors'))} dir="ltr" />
        <div class="actions">
          <button type="submit">{th('admin.resources.addSubmit')}</button>
        </div>
      </form>
    </AdminLayout>
  )
}

/** A signing key's state: in words, or the moment a newer key starts signing (shown as a time). */
export type KeyState = Saying | { signsFrom: number }

export function KeysPage(props: { csrf: string; keys: Array<{ kid: string; alg: string; createdAt: number; state: KeyState }>; error?: Words; notice?: Words }) {
  return (
    <AdminLayout title={t('admin.keys.title')} error={props.error} notice={props.notice}>
      <table class="admin">
        <thead>
          <tr>
            <th>{th('admin.field.keyId')}</th>
            <th>{th('admin.field.algorithm')}</th>
            <th>{th('admin.field.created')}</th>
            <th>{th('admin.field.state')}</th>
          </tr>
        </thead>
        <tbody>
          {props.keys.map((k) => (
            <tr>
              <td data-label={attr(t('admin.field.keyId'))}>
                <code safe>{k.kid}</code>
              </td>
              <td data-label={attr(t('admin.field.algorithm'))} safe>
                {k.alg}
              </td>
              <td data-label={attr(t('admin.field.created'))}>
                <Moment at={k.createdAt} />
              </td>
              {'signsFrom' in k.state ? (
                <td data-label={attr(t('admin.field.state'))}>{th('admin.keys.signsFrom', { at: raw(<Moment at={k.state.signsFrom} />) })}</td>
              ) : (
                <td data-label={attr(t('admin.field.state'))} safe>
                  {say(k.state)}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      <p class="muted">{th('admin.keys.hint')}</p>
      <ButtonForm action="/admin/keys/rotate" csrf={props.csrf} label={t('admin.keys.rotate')} kind="danger" inline={false} />
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
    <AdminLayout title={t('admin.audit.title')}>
      <form method="get" action="/admin/audit" class="filters">
        <label for="user">{th('admin.audit.userId')}</label>
        <input id="user" name="user" type="text" value={attr(props.filter.user)} />
        <label for="client">{th('admin.audit.clientId')}</label>
        <input id="client" name="client" type="text" value={attr(props.filter.client)} />
        <label for="kind">{th('admin.field.kind')}</label>
        <select id="kind" name="kind">
          <option value="">{th('admin.audit.any')}</option>
          {props.kinds.map((k) => (
            <option value={attr(k)} selected={k === props.filter.kind}>
              {k}
            </option>
          ))}
        </select>
        <div class="actions">
          <button type="submit" class="secondary">
            {th('admin.audit.filter')}
          </button>
        </div>
      </form>
      <table class="admin audit">
        <thead>
          <tr>
            <th>{th('admin.field.time')}</th>
            <th>{th('admin.field.kind')}</th>
            <th>{th('admin.field.user')}</th>
            <th>{th('admin.field.app')}</th>
            <th>{th('admin.field.address')}</th>
            <th>{th('admin.field.detail')}</th>
          </tr>
        </thead>
        <tbody>
          {props.events.map((e) => (
            <tr>
              <td data-label={attr(t('admin.field.time'))}>
                <Moment at={e.at} />
              </td>
              <td data-label={attr(t('admin.field.kind'))} safe>
                {e.kind}
              </td>
              <td data-label={attr(t('admin.field.user'))} class="long">
                <Named id={e.userId} name={e.userId === null ? undefined : props.names.users.get(e.userId)} />
              </td>
              <td data-label={attr(t('admin.field.app'))} class="long">
                <Named id={e.clientId} name={e.clientId === null ? undefined : props.names.clients.get(e.clientId)} />
              </td>
              <td data-label={attr(t('admin.field.address'))} class="long" safe>
                {e.address === null ? '' : isKnownAddress(e.address) ? e.address : t('sessions.unknownAddress')}
              </td>
              <td data-label={attr(t('admin.field.detail'))} class="long" safe>
                {auditDetail(e.detail, props.names)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {props.events.length === 0 ? <p class="muted">{th('admin.audit.none')}</p> : ''}
    </AdminLayout>
  )
}
