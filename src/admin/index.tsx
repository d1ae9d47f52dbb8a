/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import { Elysia } from 'elysia'
import type { AppContext } from '../context'
import { AUDIT_KINDS } from '../audit'
import { inviteUser, resetTwoStep } from '../accounts/email-links'
import { GroupInUse, checkGroupName, createGroup, deleteGroup, existingGroups, removeMember, setAllowedGroups, userByRef } from '../accounts/groups'
import { deleteSessionsOf, type Session } from '../accounts/sessions'
import { checkFullName, checkPassword, insertUser, normalizeEmail, setUserDisabled } from '../accounts/users'
import { formCsrf, loginUrl } from '../accounts/web'
import { signerOf, type AdminChange } from '../db/store'
import { hashPassword } from '../lib/crypto'
import { InputError, PageError } from '../lib/errors'
import { checkIntrospects, createClient, deleteClient, findClient, listClients, rotateSecret, setIntrospects, toView, updateClient, type Client } from '../oauth/clients'
import { canonicalResource, createResource, toResourceView } from '../oauth/resources'
import { addSiteRule, checkSiteHost, createSite, toSiteView } from '../authz/sites'
import { htmlPage, seeOther } from '../views/page'
import { t } from '../i18n'
import { sayError } from '../i18n/known-errors'
import type { MessageKey } from '../i18n/types'
import { speechOf } from '../i18n/request'
import type { FormFields } from '../web/forms'
import { endpoints } from '../oauth/metadata'
import { confirmations, type Confirm, type Confirmation } from './confirm'
import { noticeCookie, takeNotice } from './notice'
import { ConfirmPage } from './confirm-page'
import type { Typed } from './pages'
import { AppPage, AppsPage, SecretPage, type AppRow } from './app-pages'
import { auditNames } from './audit-names'
import { AuditPage, GroupsPage, KeysPage, ResourcesPage, UsersPage, type KeyState, type Saying, type Words } from './pages'
import { SitesPage } from './site-pages'
import { ProvidersPage } from './provider-pages'
import { callbackUrl, toProviderView } from '../providers/service'
import { REAUTH_AFTER_MS, adminForms, adminSession, field, fieldValues, lines } from './web'

/** What a page shows besides its data: a refusal (with its status and what was typed) or a word on what was done. */
interface Said {
  error?: Words
  status?: number
  notice?: Words
  typed?: Typed
}

/**
 * An action's outcome: done (back to its page, or `to`, with a notice of what was done), refused
 * with a message, or a page of its own.
 */
type Outcome = Response | { error: Words; status?: number } | { notice: Saying; to?: string }

/**
 * Whether a form asks for the password or passkey again after 15 minutes (SPEC "Admins"): every
 * destructive action and every change that widens access — making an admin, enabling an account,
 * a new app or any edit of one (redirect URIs, skip-consent, allowed groups, two-step, introspection
 * rights: the whole form, so an option added later is covered), a group member (apps allowed to
 * the group), a resource (its introspectors). A function decides by the form's fields.
 */
type Reauth = boolean | ((body: FormFields) => boolean)

const USERS_SHOWN = 200
const AUDIT_SHOWN = 200

/**
 * Input errors a person can fix, in the admin's language: the catalog's words for the form when
 * the check gives them, else the pages' known refusals (an email, a password) or its English.
 */
const inputError = (error: unknown): Words | undefined => (error instanceof InputError ? (error.words ?? (() => sayError(error))) : undefined)

/**
 * /admin: users, apps, groups, resources, signing keys and the audit log, for admins only (see
 * `adminSession`). Server-rendered, no script; every form posts urlencoded with its CSRF token;
 * each change is in the audit log with the admin as its actor; a destructive one, and one that
 * widens access, asks for the password again when the sign-in is older than 15 minutes.
 */
export function adminRoutes(ctx: AppContext) {
  const forms = adminForms(ctx)
  const confirm = confirmations(ctx)
  const csrf = (request: Request, session: Session) => formCsrf(ctx, request, session).token

  /** Committed before the admin's change is answered (SPEC "Audit log"): every caller awaits it. */
  function audit(kind: string, request: Request, session: Session, fields: { userId?: string; clientId?: string; detail?: Record<string, string | number | boolean> } = {}): Promise<void> {
    return ctx.audit.record(kind, { userId: fields.userId, clientId: fields.clientId, request, detail: { actor: session.user.id, ...fields.detail } })
  }

  /** An admin page in the admin's language (SPEC "Brand and language": their choice on /account, then the request's). */
  const page = (request: Request, session: Session, render: () => JSX.Element, status?: number) =>
    htmlPage(render, { status, speech: speechOf(ctx.config, request, { user: session.user }) })

  const pages = {
    async users(request: Request, session: Session, said: Said = {}, invitation?: string) {
      const query = (new URL(request.url).searchParams.get('q') ?? '').trim().slice(0, 200)
      const [users, mfa] = await Promise.all([ctx.store.users.listUsers({ query: query || undefined, limit: USERS_SHOWN }), ctx.store.mfa.summaries()])
      const rows = users.map((u) => ({ ...u, mfa: mfa.get(u.id) ?? { totp: false, passkeys: 0 } }))
      return page(request, session, () => <UsersPage csrf={csrf(request, session)} users={rows} query={query} selfId={session.user.id} invitation={invitation} {...said} />, said.status)
    },
    async apps(request: Request, session: Session, said: Said = {}) {
      const [apps, groups] = await Promise.all([listClients(ctx.store), groupNames()])
      const rows = await Promise.all(apps.map(appRow))
      return page(request, session, () => <AppsPage csrf={csrf(request, session)} apps={rows} groups={groups} {...said} />, said.status)
    },
    async app(request: Request, session: Session, client: Client, said: Said = {}) {
      const [app, groups] = await Promise.all([appRow(client), groupNames()])
      return page(request, session, () => <AppPage csrf={csrf(request, session)} app={app} groups={groups} endpoints={appEndpoints} {...said} />, said.status)
    },
    async groups(request: Request, session: Session, said: Said = {}) {
      const groups = await ctx.store.groups.listGroups()
      return page(request, session, () => <GroupsPage csrf={csrf(request, session)} groups={groups} {...said} />, said.status)
    },
    async resources(request: Request, session: Session, said: Said = {}) {
      const resources = (await ctx.store.resources.listResources()).map(toResourceView)
      return page(request, session, () => <ResourcesPage csrf={csrf(request, session)} resources={resources} {...said} />, said.status)
    },
    async sites(request: Request, session: Session, said: Said = {}) {
      const [sites, groups] = await Promise.all([ctx.store.sites.listSites(), groupNames()])
      return page(request, session, () => <SitesPage csrf={csrf(request, session)} sites={sites.map(toSiteView)} groups={groups} {...said} />, said.status)
    },
    async providers(request: Request, session: Session, said: Said = {}) {
      const providers = (await ctx.store.providers.listProviders()).map((p) => ({ ...toProviderView(p), callback_url: callbackUrl(ctx.config.issuer, p.id) }))
      return page(request, session, () => <ProvidersPage csrf={csrf(request, session)} providers={providers} {...said} />, said.status)
    },
    async keys(request: Request, session: Session, said: Said = {}) {
      const all = await ctx.store.keys.listSigningKeys()
      const now = ctx.clock.now()
      const signer = signerOf(all, now)?.kid
      const keys = all.map((k) => ({
        kid: k.kid,
        alg: k.alg,
        createdAt: k.createdAt,
        state: (k.kid === signer ? { key: 'admin.keys.signsNow' } : k.signsFrom !== null && k.signsFrom > now ? { signsFrom: k.signsFrom } : { key: 'admin.keys.published' }) satisfies KeyState,
      }))
      return page(request, session, () => <KeysPage csrf={csrf(request, session)} keys={keys} {...said} />, said.status)
    },
  }
  type Section = 'users' | 'apps' | 'groups' | 'resources' | 'sites' | 'providers' | 'keys'
  const { issuer, ...urls } = endpoints(ctx.config.issuer)
  /** What an app's developer needs (SPEC "/admin": a new app's page shows the issuer, the discovery URL and every endpoint). */
  const appEndpoints: Array<[MessageKey, string]> = [
    ['admin.endpoint.issuer', issuer],
    ['admin.endpoint.discovery', `${issuer}/.well-known/openid-configuration`],
    ['admin.endpoint.authorization', urls.authorization_endpoint],
    ['admin.endpoint.token', urls.token_endpoint],
    ['admin.endpoint.userinfo', urls.userinfo_endpoint],
    ['admin.endpoint.introspection', urls.introspection_endpoint],
    ['admin.endpoint.revocation', urls.revocation_endpoint],
    ['admin.endpoint.endSession', urls.end_session_endpoint],
    ['admin.endpoint.jwks', urls.jwks_uri],
  ]

  async function groupNames() {
    return (await ctx.store.groups.listGroups()).map((g) => g.name)
  }
  async function appRow(client: Client): Promise<AppRow> {
    return { ...toView(client), allowed_groups: await ctx.store.groups.allowedGroups(client.id), kind: client.kind, jwks: client.jwks }
  }

  /**
   * One admin form: the session it was accepted for; for a destructive action (`confirm`) a
   * confirmation page first, naming what will happen — the first POST changes nothing, the
   * page's own POST (`confirmed=yes`) does it; for a destructive action or one that widens
   * access (`reauth`, or `reauth(body)` when only some of the form's changes do) the
   * re-authentication rule, asked on that same page. Then the change. Done: back to the
   * section's page (303) with a notice of what was done. Refused: the section's page again with
   * the reason and what was typed, nothing changed.
   */
  function action(path: string, section: Section, run: (request: Request, session: Session, body: FormFields) => Promise<Outcome>, reauth: Reauth = false, confirming?: Confirm) {
    return async ({ request, body }: { request: Request; body: unknown }) => {
      const fields = body as FormFields
      const session = forms.session(request)
      const needsReauth = reauth === true || (typeof reauth === 'function' && reauth(fields))
      let what: Confirmation | undefined
      if (confirming) {
        const found = await confirming(fields)
        if ('error' in found) return pages[section](request, session, found)
        what = found
      }
      const ask = async (refused?: { refused: Saying; status: number }) => {
        const account = await ctx.store.users.findUserByEmail(session.user.email)
        const stale = needsReauth && ctx.clock.now() - session.authTime > REAUTH_AFTER_MS
        const render = () => (
          <ConfirmPage
            csrf={csrf(request, session)}
            action={path}
            back={backTo(section, fields)}
            fields={fields}
            what={what}
            askPassword={stale}
            hasPassword={!!account?.passwordHash}
            signInAgain={`${loginUrl(`/admin/${section}`)}&reauth=1`}
            error={refused?.refused}
          />
        )
        return page(request, session, render, refused?.status ?? 200)
      }
      if (what && field(fields, 'confirmed') !== 'yes') return ask()
      if (needsReauth) {
        const fresh = await forms.freshness(request, session, fields)
        if (fresh !== 'fresh') return ask(fresh === 'ask' ? undefined : fresh)
      }
      let outcome: Outcome
      try {
        outcome = await run(request, session, fields)
      } catch (error) {
        const message = inputError(error)
        if (message === undefined) throw error
        outcome = { error: message, status: 400 }
      }
      if (outcome instanceof Response) return outcome
      if ('notice' in outcome) return seeOther(outcome.to ?? `/admin/${section}`, [noticeCookie(ctx, session, outcome.notice)])
      return pages[section](request, session, { ...outcome, typed: { form: path, fields } })
    }
  }
  /** A POST route of an admin form: its path, the parser that checks admin and CSRF, the action. */
  const form = (path: string, section: Section, run: Parameters<typeof action>[2], reauth: Reauth = false, confirming?: Confirm) =>
    [path, action(path, section, run, reauth, confirming), { parse: forms.parse }] as const
  /** Where "Cancel" on a confirmation page goes: the app's own page for an app, else the section. */
  const backTo = (section: Section, body: FormFields) =>
    section === 'apps' && field(body, 'client_id') ? `/admin/apps/edit?client_id=${encodeURIComponent(field(body, 'client_id'))}` : `/admin/${section}`
  /** The forms whose `admin` checkbox (or choice) makes someone an admin ask again; the same forms without it do not. */
  const makesAdmin = (body: FormFields) => field(body, 'admin') === 'true'

  const NO_USER: { error: Saying; status: number } = { error: { key: 'admin.error.noUser' }, status: 404 }
  /** Demote, disable or delete — never the last enabled admin; what a disabled or deleted user held stops working at once. */
  async function keepingAnAdmin(id: string, change: AdminChange): Promise<{ error: Words; status: number } | undefined> {
    const outcome = await ctx.store.users.changeKeepingAnAdmin(id, change, ctx.clock.now())
    if (outcome === 'last-admin') return { error: { key: 'admin.error.lastAdmin' }, status: 409 }
    if (outcome === 'unknown') return NO_USER
  }

  /** The app a form names, or its page's refusal. */
  async function namedApp(body: FormFields): Promise<Client> {
    const client = await findClient(ctx.store, field(body, 'client_id'))
    if (!client) throw new PageError(404, 'error.noApp')
    return client
  }

  const checkbox = (body: FormFields, name: string) => field(body, name) === 'true'
  /** A text field of space-separated values (client ids). */
  const words = (text: string) => text.split(/\s+/).filter(Boolean)
  /** A GET page of /admin: with the notice of the action that led here, shown once. */
  const get = (render: (request: Request, session: Session, said: Said) => Promise<Response>) => async ({ request }: { request: Request }) => {
    const session = await adminSession(ctx, request)
    const { notice, cookies } = takeNotice(ctx, request, session)
    const response = await render(request, session, { notice })
    for (const c of cookies) response.headers.append('set-cookie', c)
    return response
  }
  /** The email of a user a form names, for its notice (the id when there is no such user any more). */
  const emailOf = async (id: string) => (await ctx.store.users.findUser(id))?.email ?? id

  return (
    new Elysia({ name: 'admin' })
      .get('/admin', async ({ request }) => (await adminSession(ctx, request), seeOther('/admin/users')))
      // Users
      .get('/admin/users', get((request, session, said) => pages.users(request, session, said)))
      .post(
        ...form('/admin/users', 'users', async (request, session, body) => {
          const email = normalizeEmail(field(body, 'email'))
          const fullName = checkFullName(field(body, 'full_name'))
          const passwordHash = await hashPassword(checkPassword(field(body, 'password')))
          const user = await insertUser(ctx.store, { email, fullName, avatarUrl: null, passwordHash, emailVerified: true }, ctx.clock.now())
          if (checkbox(body, 'admin')) await ctx.store.users.setAdmin(user.id, true)
          await audit('user.created', request, session, { userId: user.id, detail: { admin: checkbox(body, 'admin') } })
          return { notice: checkbox(body, 'admin') ? { key: 'admin.notice.createdAdmin', params: { email } } : { key: 'admin.notice.createdUser', params: { email } } }
        }, makesAdmin),
      )
      .post(
        ...form('/admin/users/invite', 'users', async (request, session, body) => {
          const email = normalizeEmail(field(body, 'email'))
          const fullName = checkFullName(field(body, 'full_name'))
          const mailed = ctx.config.smtpUrl !== null
          const { user, url } = await inviteUser(ctx.store, ctx.config, { email, fullName }, ctx.clock.now(), mailed)
          if (checkbox(body, 'admin')) await ctx.store.users.setAdmin(user.id, true)
          await audit('user.invited', request, session, { userId: user.id, detail: { admin: checkbox(body, 'admin'), mailed } })
          if (mailed) return pages.users(request, session, { notice: { key: 'admin.notice.invitationSent', params: { email } } })
          return pages.users(request, session, { notice: { key: 'admin.notice.invited', params: { email } } }, url)
        }, makesAdmin),
      )
      .post(
        ...form(
          '/admin/users/disable',
          'users',
          async (request, session, body) => {
            const id = field(body, 'user_id')
            if (id === session.user.id) return { error: { key: 'admin.error.disableSelf' }, status: 409 }
            const email = await emailOf(id)
            const refused = await keepingAnAdmin(id, 'disable')
            if (refused) return refused
            await audit('user.updated', request, session, { userId: id, detail: { disabled: true } })
            return { notice: { key: 'admin.notice.disabled', params: { email } } }
          },
          true,
        ),
      )
      .post(
        ...form('/admin/users/enable', 'users', async (request, session, body) => {
          const id = field(body, 'user_id')
          if (!(await setUserDisabled(ctx, id, false))) return NO_USER
          await audit('user.updated', request, session, { userId: id, detail: { disabled: false } })
          return { notice: { key: 'admin.notice.enabled', params: { email: await emailOf(id) } } }
        }, true),
      )
      .post(
        ...form('/admin/users/admin', 'users', async (request, session, body) => {
          const id = field(body, 'user_id')
          const admin = field(body, 'admin')
          if (admin !== 'true' && admin !== 'false') return { error: { key: 'admin.error.sayAdmin' }, status: 400 }
          if (admin === 'true') {
            if (!(await ctx.store.users.setAdmin(id, true))) return NO_USER
          } else {
            const refused = await keepingAnAdmin(id, 'demote')
            if (refused) return refused
          }
          await audit('user.updated', request, session, { userId: id, detail: { admin: admin === 'true' } })
          return { notice: { key: admin === 'true' ? 'admin.notice.madeAdmin' : 'admin.notice.removedAdmin', params: { email: await emailOf(id) } } }
        }, makesAdmin),
      )
      .post(
        ...form(
          '/admin/users/sign-out',
          'users',
          async (request, session, body) => {
            const id = field(body, 'user_id')
            const user = await ctx.store.users.findUser(id)
            if (!user) return NO_USER
            await deleteSessionsOf(ctx.store, id, id === session.user.id ? session : undefined)
            await audit('user.signed_out', request, session, { userId: id })
            return { notice: { key: 'admin.notice.signedOut', params: { email: user.email } } }
          },
          false,
          confirm.signOut,
        ),
      )
      .post(
        ...form(
          '/admin/users/reset-two-step',
          'users',
          async (request, session, body) => {
            const id = field(body, 'user_id')
            if (!(await resetTwoStep(ctx.store, ctx.config, id, ctx.clock.now()))) return NO_USER
            await audit('user.two_step_reset', request, session, { userId: id })
            return { notice: { key: 'admin.notice.resetTwoStep', params: { email: await emailOf(id) } } }
          },
          true,
          confirm.resetTwoStep,
        ),
      )
      .post(
        ...form(
          '/admin/users/delete',
          'users',
          async (request, session, body) => {
            const id = field(body, 'user_id')
            if (id === session.user.id) return { error: { key: 'admin.error.deleteSelf' }, status: 409 }
            const email = await emailOf(id)
            const refused = await keepingAnAdmin(id, 'delete')
            if (refused) return refused
            await audit('user.deleted', request, session, { userId: id })
            return { notice: { key: 'admin.notice.deleted', params: { name: email } } }
          },
          true,
          confirm.deleteUser,
        ),
      )
      // Apps
      .get('/admin/apps', get((request, session, said) => pages.apps(request, session, said)))
      .get(
        '/admin/apps/edit',
        get(async (request, session, said) => {
          const client = await findClient(ctx.store, new URL(request.url).searchParams.get('client_id') ?? '')
          if (!client) throw new PageError(404, 'error.noApp')
          return pages.app(request, session, client, said)
        }),
      )
      .post(
        ...form('/admin/apps', 'apps', async (request, session, body) => {
          const groups = await existingGroups(ctx.store, fieldValues(body, 'allowed_groups'))
          const introspects = await checkIntrospects(ctx.store, words(field(body, 'introspects')), checkbox(body, 'public'))
          const { client, secret } = await createClient(
            ctx.store,
            {
              name: field(body, 'name'),
              redirectUris: lines(field(body, 'redirect_uris')),
              postLogoutRedirectUris: lines(field(body, 'post_logout_redirect_uris')),
              public: checkbox(body, 'public'),
              skipConsent: checkbox(body, 'skip_consent'),
              requireMfa: checkbox(body, 'require_mfa'),
              idTokenAlg: field(body, 'id_token_alg') || undefined,
              introspects,
              ...(field(body, 'machine_options') === 'shown' ? machineOptions(body, checkbox(body, 'public')) : {}),
            },
            ctx.clock.now(),
          )
          if (groups.length) await setAllowedGroups(ctx, client.id, groups)
          await audit('client.created', request, session, { clientId: client.id })
          if (secret) return page(request, session, () => <SecretPage clientId={client.id} name={client.name} secret={secret} endpoints={appEndpoints} notice={t('admin.apps.createdSecret', { name: client.name })} />)
          return { notice: { key: 'admin.notice.created', params: { name: client.name } }, to: `/admin/apps/edit?client_id=${encodeURIComponent(client.id)}` }
        }, true),
      )
      .post(
        ...form('/admin/apps/update', 'apps', async (request, session, body) => {
          const client = await namedApp(body)
          try {
            const groups = await existingGroups(ctx.store, fieldValues(body, 'allowed_groups'))
            const introspects = await checkIntrospects(ctx.store, words(field(body, 'introspects')), client.public)
            const changed = await updateApp(ctx, client, body)
            await setIntrospects(ctx.store, client, introspects)
            await setAllowedGroups(ctx, client.id, groups)
            await audit('client.updated', request, session, { clientId: client.id, detail: { redirect_uris: changed.redirectUris.join(' ') } })
          } catch (error) {
            const message = inputError(error)
            if (message === undefined) throw error
            return pages.app(request, session, client, { error: message, status: 400, typed: { form: '/admin/apps/update', fields: body } })
          }
          return { notice: { key: 'admin.notice.saved', params: { name: field(body, 'name') || client.name } }, to: `/admin/apps/edit?client_id=${encodeURIComponent(client.id)}` }
        }, true),
      )
      .post(
        ...form(
          '/admin/apps/rotate-secret',
          'apps',
          async (request, session, body) => {
            const client = await namedApp(body)
            const secret = await rotateSecret(ctx.store, client.id)
            if (!secret) return pages.app(request, session, client, { error: { key: 'admin.error.publicNoSecret' }, status: 409 })
            await audit('client.secret_rotated', request, session, { clientId: client.id })
            return page(request, session, () => <SecretPage clientId={client.id} name={client.name} secret={secret} endpoints={appEndpoints} notice={t('admin.apps.rotatedSecret', { name: client.name })} />)
          },
          true,
          confirm.rotateSecret,
        ),
      )
      .post(
        ...form(
          '/admin/apps/delete',
          'apps',
          async (request, session, body) => {
            const client = await namedApp(body)
            await deleteClient(ctx.store, client.id)
            await audit('client.deleted', request, session, { clientId: client.id })
            return { notice: { key: 'admin.notice.deleted', params: { name: client.name } } }
          },
          true,
          confirm.deleteApp,
        ),
      )
      // Groups
      .get('/admin/groups', get((request, session, said) => pages.groups(request, session, said)))
      .post(
        ...form('/admin/groups', 'groups', async (request, session, body) => {
          const name = await createGroup(ctx.store, field(body, 'name').trim(), ctx.clock.now())
          await audit('group.created', request, session, { detail: { group: name } })
          return { notice: { key: 'admin.notice.createdGroup', params: { name } } }
        }),
      )
      .post(
        ...form(
          '/admin/groups/delete',
          'groups',
          async (request, session, body) => {
            const name = field(body, 'name')
            try {
              if (!(await deleteGroup(ctx.store, name))) return { error: { key: 'admin.error.noGroup' }, status: 404 }
            } catch (error) {
              if (error instanceof GroupInUse) return { error: inputError(error)!, status: 409 }
              throw error
            }
            await audit('group.deleted', request, session, { detail: { group: name } })
            return { notice: { key: 'admin.notice.deletedGroup', params: { name } } }
          },
          true,
          confirm.deleteGroup,
        ),
      )
      .post(
        ...form('/admin/groups/add', 'groups', async (request, session, body) => {
          const name = checkGroupName(field(body, 'name'))
          const user = await userByRef(ctx.store, field(body, 'user').trim())
          if (!user) return { error: { key: 'admin.error.noUserNamed', params: { user: field(body, 'user').trim() } }, status: 404 }
          if (!(await ctx.store.groups.addMember(name, user.id))) return { error: { key: 'admin.error.noGroup' }, status: 404 }
          await audit('group.member_added', request, session, { userId: user.id, detail: { group: name } })
          return { notice: { key: 'admin.notice.addedMember', params: { email: user.email, name } } }
        }, true),
      )
      .post(
        ...form('/admin/groups/remove', 'groups', async (request, session, body) => {
          const name = field(body, 'name')
          const userId = field(body, 'user')
          const email = await emailOf(userId)
          if (!(await removeMember(ctx, name, userId))) return { error: { key: 'admin.error.notMember' }, status: 404 }
          await audit('group.member_removed', request, session, { userId, detail: { group: name } })
          return { notice: { key: 'admin.notice.removedMember', params: { email, name } } }
        }),
      )
      // Resources
      .get('/admin/resources', get((request, session, said) => pages.resources(request, session, said)))
      .post(
        ...form('/admin/resources', 'resources', async (request, session, body) => {
          const resource = await createResource(
            ctx.store,
            {
              uri: field(body, 'uri').trim(),
              name: field(body, 'name'),
              scopes: lines(field(body, 'scopes')),
              tokenFormat: field(body, 'token_format') || 'opaque',
              introspectors: field(body, 'introspectors').split(/\s+/).filter(Boolean),
            },
            ctx.clock.now(),
          )
          await audit('resource.created', request, session, { detail: { resource: resource.uri } })
          return { notice: { key: 'admin.notice.addedResource', params: { name: resource.name, uri: resource.uri } } }
        }, true),
      )
      .post(
        ...form(
          '/admin/resources/delete',
          'resources',
          async (request, session, body) => {
            const uri = canonicalResource(field(body, 'uri'))
            if (!uri || !(await ctx.store.resources.deleteResource(uri))) return { error: { key: 'admin.error.noResource' }, status: 404 }
            await audit('resource.deleted', request, session, { detail: { resource: uri } })
            return { notice: { key: 'admin.notice.deletedResource', params: { uri } } }
          },
          true,
          confirm.deleteResource,
        ),
      )
      // Sites (forward-auth): a new site, a rule (a bypass opens paths to anyone) and a deletion all ask again after 15 minutes.
      .get('/admin/sites', get((request, session, said) => pages.sites(request, session, said)))
      .post(
        ...form('/admin/sites', 'sites', async (request, session, body) => {
          const site = await createSite(
            ctx.store,
            { host: field(body, 'host').trim(), name: field(body, 'name'), policy: field(body, 'policy') || undefined, allowedGroups: fieldValues(body, 'allowed_groups'), jwt: checkbox(body, 'jwt') },
            ctx.clock.now(),
          )
          await audit('site.created', request, session, { detail: { site: site.host } })
          return { notice: { key: 'admin.notice.addedSite', params: { name: site.name, host: site.host } } }
        }, true),
      )
      .post(
        ...form('/admin/sites/rule', 'sites', async (request, session, body) => {
          const host = checkSiteHost(field(body, 'host'))
          await addSiteRule(ctx.store, host, { paths: lines(field(body, 'paths')), methods: words(field(body, 'methods')), networks: words(field(body, 'networks')), clients: words(field(body, 'clients')), policy: field(body, 'policy') || undefined })
          await audit('site.rule_added', request, session, { detail: { site: host } })
          return { notice: { key: 'admin.notice.addedRule', params: { host } } }
        }, true),
      )
      .post(
        ...form(
          '/admin/sites/delete',
          'sites',
          async (request, session, body) => {
            const host = checkSiteHost(field(body, 'host'))
            if (!(await ctx.store.sites.deleteSite(host))) return { error: { key: 'admin.error.noSite' }, status: 404 }
            await audit('site.deleted', request, session, { detail: { site: host } })
            return { notice: { key: 'admin.notice.deletedSite', params: { host } } }
          },
          true,
          confirm.deleteSite,
        ),
      )
      // Sign-in providers: listed; a deletion asks first, naming whom it leaves with only a password reset.
      .get('/admin/providers', get((request, session, said) => pages.providers(request, session, said)))
      .post(
        ...form(
          '/admin/providers/delete',
          'providers',
          async (request, session, body) => {
            const id = field(body, 'id')
            const provider = await ctx.store.providers.findProvider(id)
            const done = provider && (await ctx.store.providers.deleteProvider(id))
            if (!provider || !done) return { error: { key: 'admin.error.noProvider' }, status: 404 }
            await audit('provider.deleted', request, session, { detail: { provider: id, connected: done.connected, no_other_way_in: done.stranded } })
            return { notice: { key: 'admin.notice.deleted', params: { name: provider.name } } }
          },
          true,
          confirm.deleteProvider,
        ),
      )
      // Signing keys
      .get('/admin/keys', get((request, session, said) => pages.keys(request, session, said)))
      .post(
        ...form(
          '/admin/keys/rotate',
          'keys',
          async (request, session) => {
            const keys = await ctx.signingKeys.rotate()
            for (const key of keys) await audit('key.rotated', request, session, { detail: { kid: key.kid, alg: key.alg } })
            return { notice: { key: 'admin.notice.rotatedKey', params: { keys: keys.map((k) => `${k.kid} (${k.alg})`).join(', ') } } }
          },
          true,
          confirm.rotateKey,
        ),
      )
      // The audit log
      .get('/admin/audit', async ({ request }) => {
        const session = await adminSession(ctx, request)
        const params = new URL(request.url).searchParams
        const filter = { user: (params.get('user') ?? '').trim().slice(0, 100), client: (params.get('client') ?? '').trim().slice(0, 2000), kind: params.get('kind') ?? '' }
        if (filter.kind && !AUDIT_KINDS.includes(filter.kind)) filter.kind = ''
        const events = await ctx.store.audit.list({ userId: filter.user || undefined, clientId: filter.client || undefined, kind: filter.kind || undefined, limit: AUDIT_SHOWN })
        const names = await auditNames(ctx, events)
        return page(request, session, () => <AuditPage events={events} filter={filter} kinds={AUDIT_KINDS} names={names} />)
      })
  )
}

/** An app's options as the edit form gives them, checked as at creation (the client_id and public stay). */
async function updateApp(ctx: AppContext, client: Client, body: FormFields) {
  const options = {
    name: field(body, 'name'),
    redirectUris: lines(field(body, 'redirect_uris')),
    postLogoutRedirectUris: lines(field(body, 'post_logout_redirect_uris')),
    skipConsent: field(body, 'skip_consent') === 'true',
    requireMfa: field(body, 'require_mfa') === 'true',
    idTokenAlg: field(body, 'id_token_alg') || undefined,
  }
  // A form without the machine options (an older page) keeps what the app has.
  const machine =
    field(body, 'machine_options') === 'shown'
      ? machineOptions(body, client.public)
      : { grantTypes: client.grantTypes, allowedScopes: client.allowedScopes, requirePar: client.requirePar, authMethod: client.authMethod ?? undefined, jwks: client.jwks ?? undefined, jwksUri: client.jwksUri ?? undefined }
  // As `client update`: an app with keys has no secret to fall back on.
  if (client.authMethod === 'private_key_jwt' && machine.authMethod !== 'private_key_jwt')
    throw new InputError('this app authenticates with its keys and has no secret; create a new app to use a secret', { key: 'admin.input.keyedNoSecret' })
  const input = { public: client.public, grantTypes: machine.grantTypes, allowedScopes: machine.allowedScopes, requirePar: machine.requirePar, authMethod: machine.authMethod ?? null, jwks: machine.jwks ?? null, jwksUri: machine.jwksUri ?? null }
  if (!(await updateClient(ctx.store, client.id, { ...options, ...input }))) throw new PageError(404, 'error.noApp')
  return options
}

/** The app form's machine options (grants, allowed scopes, PAR, keys), checked by createClient/updateClient as the CLI's are. */
function machineOptions(body: FormFields, isPublic: boolean) {
  const method = field(body, 'auth_method')
  const keyed = !isPublic && method === 'private_key_jwt'
  return {
    grantTypes: fieldValues(body, 'grant_types'),
    allowedScopes: field(body, 'allowed_scopes').split(/\s+/).filter(Boolean),
    requirePar: field(body, 'require_par') === 'true',
    authMethod: keyed ? 'private_key_jwt' : undefined,
    jwks: keyed && field(body, 'jwks').trim() ? field(body, 'jwks') : undefined,
    jwksUri: keyed && field(body, 'jwks_uri').trim() ? field(body, 'jwks_uri').trim() : undefined,
  }
}
