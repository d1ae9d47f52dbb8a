/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import { Elysia } from 'elysia'
import type { AppContext } from '../context'
import { AUDIT_KINDS } from '../audit'
import { inviteUser, resetTwoStep } from '../accounts/email-links'
import { checkGroupName, createGroup, existingGroups, userByRef } from '../accounts/groups'
import { deleteSessionsOf, type Session } from '../accounts/sessions'
import { checkFullName, checkPassword, insertUser, normalizeEmail, setUserDisabled } from '../accounts/users'
import { formCsrf, loginUrl } from '../accounts/web'
import { signerOf, type AdminChange } from '../db/store'
import { hashPassword } from '../lib/crypto'
import { InputError, PageError } from '../lib/errors'
import { createClient, deleteClient, findClient, listClients, rotateSecret, toView, updateClient, type Client } from '../oauth/clients'
import { canonicalResource, createResource, toResourceView } from '../oauth/resources'
import { htmlPage, seeOther } from '../views/page'
import type { FormFields } from '../web/forms'
import { AppPage, AppsPage, AuditPage, ConfirmPage, GroupsPage, KeysPage, ResourcesPage, SecretPage, UsersPage, type AppRow } from './pages'
import { adminForms, adminSession, field, fieldValues, lines } from './web'

/** What a page shows besides its data: a refusal (with its status) or a word on what was done. */
interface Said {
  error?: string
  status?: number
  notice?: string
}

/** An action's outcome: done (back to its page), refused with a message, or a page of its own. */
type Outcome = Response | { error: string; status?: number } | undefined

const USERS_SHOWN = 200
const AUDIT_SHOWN = 200

/** Input errors a person can fix, in the words the CLI uses too. */
const inputError = (error: unknown) => (error instanceof InputError ? error.message : undefined)

/**
 * /admin: users, apps, groups, resources, signing keys and the audit log, for admins only (see
 * `adminSession`). Server-rendered, no script; every form posts urlencoded with its CSRF token;
 * each change is in the audit log with the admin as its actor; a destructive one asks for the
 * password again when the sign-in is older than 15 minutes.
 */
export function adminRoutes(ctx: AppContext) {
  const forms = adminForms(ctx)
  const csrf = (request: Request, session: Session) => formCsrf(ctx, request, session).token

  /** Committed before the admin's change is answered (SPEC "Audit log"): every caller awaits it. */
  function audit(kind: string, request: Request, session: Session, fields: { userId?: string; clientId?: string; detail?: Record<string, string | boolean> } = {}): Promise<void> {
    return ctx.audit.record(kind, { userId: fields.userId, clientId: fields.clientId, request, detail: { actor: session.user.id, ...fields.detail } })
  }

  const pages = {
    async users(request: Request, session: Session, said: Said = {}, invitation?: string) {
      const query = (new URL(request.url).searchParams.get('q') ?? '').trim().slice(0, 200)
      const [users, mfa] = await Promise.all([ctx.store.users.listUsers({ query: query || undefined, limit: USERS_SHOWN }), ctx.store.mfa.summaries()])
      const rows = users.map((u) => ({ ...u, mfa: mfa.get(u.id) ?? { totp: false, passkeys: 0 } }))
      return htmlPage(<UsersPage csrf={csrf(request, session)} users={rows} query={query} selfId={session.user.id} invitation={invitation} {...said} />, { status: said.status })
    },
    async apps(request: Request, session: Session, said: Said = {}) {
      const [apps, groups] = await Promise.all([listClients(ctx.store), groupNames()])
      const rows = await Promise.all(apps.map(appRow))
      return htmlPage(<AppsPage csrf={csrf(request, session)} apps={rows} groups={groups} {...said} />, { status: said.status })
    },
    async app(request: Request, session: Session, client: Client, said: Said = {}) {
      return htmlPage(<AppPage csrf={csrf(request, session)} app={await appRow(client)} groups={await groupNames()} {...said} />, { status: said.status })
    },
    async groups(request: Request, session: Session, said: Said = {}) {
      return htmlPage(<GroupsPage csrf={csrf(request, session)} groups={await ctx.store.groups.listGroups()} {...said} />, { status: said.status })
    },
    async resources(request: Request, session: Session, said: Said = {}) {
      const resources = (await ctx.store.resources.listResources()).map(toResourceView)
      return htmlPage(<ResourcesPage csrf={csrf(request, session)} resources={resources} {...said} />, { status: said.status })
    },
    async keys(request: Request, session: Session, said: Said = {}) {
      const all = await ctx.store.keys.listSigningKeys()
      const now = ctx.clock.now()
      const signer = signerOf(all, now)?.kid
      const keys = all.map((k) => ({
        kid: k.kid,
        alg: k.alg,
        createdAt: k.createdAt,
        state: k.kid === signer ? 'signs now' : k.signsFrom !== null && k.signsFrom > now ? `signs from ${new Date(k.signsFrom).toISOString()}` : 'published',
      }))
      return htmlPage(<KeysPage csrf={csrf(request, session)} keys={keys} {...said} />, { status: said.status })
    },
  }
  type Section = 'users' | 'apps' | 'groups' | 'resources' | 'keys'

  async function groupNames() {
    return (await ctx.store.groups.listGroups()).map((g) => g.name)
  }
  async function appRow(client: Client): Promise<AppRow> {
    return { ...toView(client), allowed_groups: await ctx.store.groups.allowedGroups(client.id), kind: client.kind }
  }

  /**
   * One admin form: the session it was accepted for; for a destructive action the
   * re-authentication rule; then the change. Done: back to the section's page (303). Refused:
   * the section's page again with the reason, nothing changed.
   */
  function action(path: string, section: Section, run: (request: Request, session: Session, body: FormFields) => Promise<Outcome>, destructive = false) {
    return async ({ request, body }: { request: Request; body: unknown }) => {
      const fields = body as FormFields
      const session = forms.session(request)
      if (destructive) {
        const fresh = await forms.freshness(request, session, fields)
        if (fresh !== 'fresh') {
          const account = await ctx.store.users.findUserByEmail(session.user.email)
          const refused = fresh === 'ask' ? undefined : fresh
          return htmlPage(
            <ConfirmPage csrf={csrf(request, session)} action={path} fields={fields} hasPassword={!!account?.passwordHash} signInAgain={`${loginUrl(`/admin/${section}`)}&reauth=1`} error={refused?.refused} />,
            { status: refused?.status ?? 200 },
          )
        }
      }
      let outcome: Outcome
      try {
        outcome = await run(request, session, fields)
      } catch (error) {
        const message = inputError(error)
        if (message === undefined) throw error
        outcome = { error: message[0]!.toUpperCase() + message.slice(1) + '.', status: 400 }
      }
      if (outcome instanceof Response) return outcome
      if (outcome === undefined) return seeOther(`/admin/${section}`)
      return pages[section](request, session, outcome)
    }
  }
  /** A POST route of an admin form: its path, the parser that checks admin and CSRF, the action. */
  const form = (path: string, section: Section, run: Parameters<typeof action>[2], destructive = false) => [path, action(path, section, run, destructive), { parse: forms.parse }] as const

  const NO_USER = { error: 'There is no such user.', status: 404 }
  /** Demote, disable or delete — never the last enabled admin; what a disabled or deleted user held stops working at once. */
  async function keepingAnAdmin(id: string, change: AdminChange): Promise<Outcome> {
    const outcome = await ctx.store.users.changeKeepingAnAdmin(id, change, ctx.clock.now())
    if (outcome === 'last-admin') return { error: 'This is the last enabled admin: make another admin first.', status: 409 }
    if (outcome === 'unknown') return NO_USER
    if (change !== 'demote') ctx.tokens.forget()
  }

  /** The app a form names, or its page's refusal. */
  async function namedApp(body: FormFields): Promise<Client> {
    const client = await findClient(ctx.store, field(body, 'client_id'))
    if (!client) throw new PageError(404, 'Not found', 'There is no such app.')
    return client
  }

  const checkbox = (body: FormFields, name: string) => field(body, name) === 'true'
  const get = (render: (request: Request, session: Session) => Promise<Response>) => async ({ request }: { request: Request }) => render(request, await adminSession(ctx, request))

  return (
    new Elysia({ name: 'admin' })
      .get('/admin', async ({ request }) => (await adminSession(ctx, request), seeOther('/admin/users')))
      // Users
      .get('/admin/users', get((request, session) => pages.users(request, session)))
      .post(
        ...form('/admin/users', 'users', async (request, session, body) => {
          const email = normalizeEmail(field(body, 'email'))
          const fullName = checkFullName(field(body, 'full_name'))
          const passwordHash = await hashPassword(checkPassword(field(body, 'password')))
          const user = await insertUser(ctx.store, { email, fullName, avatarUrl: null, passwordHash, emailVerified: true }, ctx.clock.now())
          if (checkbox(body, 'admin')) await ctx.store.users.setAdmin(user.id, true)
          await audit('user.created', request, session, { userId: user.id, detail: { admin: checkbox(body, 'admin') } })
        }),
      )
      .post(
        ...form('/admin/users/invite', 'users', async (request, session, body) => {
          const email = normalizeEmail(field(body, 'email'))
          const fullName = checkFullName(field(body, 'full_name'))
          const mailed = ctx.config.smtpUrl !== null
          const { user, url } = await inviteUser(ctx.store, ctx.config, { email, fullName }, ctx.clock.now(), mailed)
          if (checkbox(body, 'admin')) await ctx.store.users.setAdmin(user.id, true)
          await audit('user.invited', request, session, { userId: user.id, detail: { admin: checkbox(body, 'admin'), mailed } })
          if (mailed) return pages.users(request, session, { notice: `Invitation sent to ${email}.` })
          return pages.users(request, session, { notice: `Invited ${email}.` }, url)
        }),
      )
      .post(
        ...form(
          '/admin/users/disable',
          'users',
          async (request, session, body) => {
            const id = field(body, 'user_id')
            if (id === session.user.id) return { error: 'You cannot disable your own account.', status: 409 }
            const refused = await keepingAnAdmin(id, 'disable')
            if (refused) return refused
            await audit('user.updated', request, session, { userId: id, detail: { disabled: true } })
          },
          true,
        ),
      )
      .post(
        ...form('/admin/users/enable', 'users', async (request, session, body) => {
          const id = field(body, 'user_id')
          if (!(await setUserDisabled(ctx, id, false))) return NO_USER
          await audit('user.updated', request, session, { userId: id, detail: { disabled: false } })
        }),
      )
      .post(
        ...form('/admin/users/admin', 'users', async (request, session, body) => {
          const id = field(body, 'user_id')
          const admin = field(body, 'admin')
          if (admin !== 'true' && admin !== 'false') return { error: 'Say whether the user is an admin.', status: 400 }
          if (admin === 'true') {
            if (!(await ctx.store.users.setAdmin(id, true))) return NO_USER
          } else {
            const refused = await keepingAnAdmin(id, 'demote')
            if (refused) return refused
          }
          await audit('user.updated', request, session, { userId: id, detail: { admin: admin === 'true' } })
        }),
      )
      .post(
        ...form('/admin/users/sign-out', 'users', async (request, session, body) => {
          const id = field(body, 'user_id')
          if (!(await ctx.store.users.findUser(id))) return NO_USER
          await deleteSessionsOf(ctx.store, id, id === session.user.id ? session : undefined)
          await audit('user.signed_out', request, session, { userId: id })
        }),
      )
      .post(
        ...form(
          '/admin/users/reset-two-step',
          'users',
          async (request, session, body) => {
            const id = field(body, 'user_id')
            if (!(await resetTwoStep(ctx.store, ctx.config, id, ctx.clock.now()))) return NO_USER
            await audit('user.two_step_reset', request, session, { userId: id })
          },
          true,
        ),
      )
      .post(
        ...form(
          '/admin/users/delete',
          'users',
          async (request, session, body) => {
            const id = field(body, 'user_id')
            if (id === session.user.id) return { error: 'You cannot delete your own account here.', status: 409 }
            const refused = await keepingAnAdmin(id, 'delete')
            if (refused) return refused
            await audit('user.deleted', request, session, { userId: id })
          },
          true,
        ),
      )
      // Apps
      .get('/admin/apps', get((request, session) => pages.apps(request, session)))
      .get('/admin/apps/edit', async ({ request }) => {
        const session = await adminSession(ctx, request)
        const client = await findClient(ctx.store, new URL(request.url).searchParams.get('client_id') ?? '')
        if (!client) throw new PageError(404, 'Not found', 'There is no such app.')
        return pages.app(request, session, client)
      })
      .post(
        ...form('/admin/apps', 'apps', async (request, session, body) => {
          const groups = await existingGroups(ctx.store, fieldValues(body, 'allowed_groups'))
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
            },
            ctx.clock.now(),
          )
          if (groups.length) await ctx.store.groups.setAllowedGroups(client.id, groups)
          await audit('client.created', request, session, { clientId: client.id })
          if (secret) return htmlPage(<SecretPage clientId={client.id} name={client.name} secret={secret} />)
          return seeOther(`/admin/apps/edit?client_id=${encodeURIComponent(client.id)}`)
        }),
      )
      .post(
        ...form('/admin/apps/update', 'apps', async (request, session, body) => {
          const client = await namedApp(body)
          try {
            const groups = await existingGroups(ctx.store, fieldValues(body, 'allowed_groups'))
            const changed = await updateApp(ctx, client, body)
            await ctx.store.groups.setAllowedGroups(client.id, groups)
            await audit('client.updated', request, session, { clientId: client.id, detail: { redirect_uris: changed.redirectUris.join(' ') } })
          } catch (error) {
            const message = inputError(error)
            if (message === undefined) throw error
            return pages.app(request, session, client, { error: message[0]!.toUpperCase() + message.slice(1) + '.', status: 400 })
          }
          return seeOther(`/admin/apps/edit?client_id=${encodeURIComponent(client.id)}`)
        }),
      )
      .post(
        ...form(
          '/admin/apps/rotate-secret',
          'apps',
          async (request, session, body) => {
            const client = await namedApp(body)
            const secret = await rotateSecret(ctx.store, client.id)
            if (!secret) return pages.app(request, session, client, { error: 'A public app has no secret to rotate.', status: 409 })
            await audit('client.secret_rotated', request, session, { clientId: client.id })
            return htmlPage(<SecretPage clientId={client.id} name={client.name} secret={secret} />)
          },
          true,
        ),
      )
      .post(
        ...form(
          '/admin/apps/delete',
          'apps',
          async (request, session, body) => {
            const client = await namedApp(body)
            await deleteClient(ctx.store, client.id)
            ctx.tokens.forget()
            await audit('client.deleted', request, session, { clientId: client.id })
          },
          true,
        ),
      )
      // Groups
      .get('/admin/groups', get((request, session) => pages.groups(request, session)))
      .post(
        ...form('/admin/groups', 'groups', async (request, session, body) => {
          const name = await createGroup(ctx.store, field(body, 'name').trim(), ctx.clock.now())
          await audit('group.created', request, session, { detail: { group: name } })
        }),
      )
      .post(
        ...form(
          '/admin/groups/delete',
          'groups',
          async (request, session, body) => {
            const name = field(body, 'name')
            if (!(await ctx.store.groups.deleteGroup(name))) return { error: 'There is no such group.', status: 404 }
            await audit('group.deleted', request, session, { detail: { group: name } })
          },
          true,
        ),
      )
      .post(
        ...form('/admin/groups/add', 'groups', async (request, session, body) => {
          const name = checkGroupName(field(body, 'name'))
          const user = await userByRef(ctx.store, field(body, 'user').trim())
          if (!user) return { error: `There is no user "${field(body, 'user').trim()}".`, status: 404 }
          if (!(await ctx.store.groups.addMember(name, user.id))) return { error: 'There is no such group.', status: 404 }
          await audit('group.member_added', request, session, { userId: user.id, detail: { group: name } })
        }),
      )
      .post(
        ...form('/admin/groups/remove', 'groups', async (request, session, body) => {
          const name = field(body, 'name')
          const userId = field(body, 'user')
          if (!(await ctx.store.groups.removeMember(name, userId))) return { error: 'That user is not in that group.', status: 404 }
          await audit('group.member_removed', request, session, { userId, detail: { group: name } })
        }),
      )
      // Resources
      .get('/admin/resources', get((request, session) => pages.resources(request, session)))
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
          ctx.resources.forget()
          await audit('resource.created', request, session, { detail: { resource: resource.uri } })
        }),
      )
      .post(
        ...form(
          '/admin/resources/delete',
          'resources',
          async (request, session, body) => {
            const uri = canonicalResource(field(body, 'uri'))
            if (!uri || !(await ctx.store.resources.deleteResource(uri))) return { error: 'There is no such resource.', status: 404 }
            ctx.resources.forget()
            ctx.tokens.forget()
            await audit('resource.deleted', request, session, { detail: { resource: uri } })
          },
          true,
        ),
      )
      // Signing keys
      .get('/admin/keys', get((request, session) => pages.keys(request, session)))
      .post(
        ...form(
          '/admin/keys/rotate',
          'keys',
          async (request, session) => {
            for (const key of await ctx.signingKeys.rotate()) await audit('key.rotated', request, session, { detail: { kid: key.kid, alg: key.alg } })
          },
          true,
        ),
      )
      // The audit log
      .get('/admin/audit', async ({ request }) => {
        await adminSession(ctx, request)
        const params = new URL(request.url).searchParams
        const filter = { user: (params.get('user') ?? '').trim().slice(0, 100), client: (params.get('client') ?? '').trim().slice(0, 2000), kind: params.get('kind') ?? '' }
        if (filter.kind && !AUDIT_KINDS.includes(filter.kind)) filter.kind = ''
        const events = await ctx.store.audit.list({ userId: filter.user || undefined, clientId: filter.client || undefined, kind: filter.kind || undefined, limit: AUDIT_SHOWN })
        return htmlPage(<AuditPage events={events} filter={filter} kinds={AUDIT_KINDS} />)
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
  if (!(await updateClient(ctx.store, client.id, options))) throw new PageError(404, 'Not found', 'There is no such app.')
  return options
}
