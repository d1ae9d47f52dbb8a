import { Elysia, t } from 'elysia'
import type { AppContext } from '../context'
import type { StoredSetting } from '../db/store'
import { PageError } from '../lib/errors'
import { findClient, isClientId } from '../oauth/clients'
import { htmlPage, seeOther } from '../views/page'
import { parsePageForm } from '../web/forms'
import { RevokeForm } from './model'
import { forbidden } from './sign-in'
import { DeleteDataPage } from './profile-pages'
import { accountPage } from './security'
import { csrfAccepted, formCsrf, loginUrl, readSession } from './web'
import { toUserView } from './users'
import { t as msg } from '../i18n'
import { speechOf } from '../i18n/request'

const iso = (ms: number) => new Date(ms).toISOString()
/**
 * A setting as the download lists it. Its value stays the stored JSON text, spliced into the file
 * as it is (`download`): indenting a value afresh made a deeply nested one ~68 times its size (the
 * user's 16 MiB of settings, a 1.1 GiB string).
 */
const settingOut = (s: StoredSetting) => ({ key: s.key, value: new StoredJson(s.value), updated_at: iso(s.updatedAt) })

class StoredJson {
  constructor(readonly text: string) {}
}

/** A JSON file the browser saves (never cached: it is the user's data): indented, each setting's value as stored. */
function download(body: unknown, filename: string): Response {
  const values: string[] = []
  // Each stored value is written as a placeholder string, then swapped for its text. The
  // placeholder begins with U+0000, which JSON.stringify writes as the six characters \u0000,
  // then a random id: nothing in the file can spell it unless it knows that id.
  const id = crypto.randomUUID()
  const indented = JSON.stringify(body, (_key, value: unknown) => (value instanceof StoredJson ? `\u0000${id}:${values.push(value.text) - 1}` : value), 2)
  const text = indented.replace(new RegExp(`"\\\\u0000${id}:(\\d+)"`, 'g'), (_match, index: string) => values[Number(index)]!)
  return new Response(text + '\n', {
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'content-disposition': `attachment; filename="${filename}"`,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    },
  })
}

/**
 * The user's own data (SPEC, settings sync): "Download data" of one app's settings, "Delete data"
 * (each key deleted takes its revision, so the app's other devices hear of it), and "Download all
 * my data": the profile, the apps with their scopes, and every setting.
 */
export function dataRoutes(ctx: AppContext) {
  return new Elysia({ name: 'account-data' })
    .get(
      '/account/data',
      async function downloadData({ request, query }) {
        const session = await readSession(ctx, request)
        if (!session) return seeOther(loginUrl('/account'))
        const { user } = session
        const [apps, settings, clients] = await Promise.all([ctx.store.grants.listAuthorizedApps(user.id), ctx.store.settings.exportSettings(user.id), ctx.store.clients.listClients()])
        const names = new Map(clients.map((c) => [c.id, c.name]))
        if (query.client_id !== undefined) {
          if (!isClientId(query.client_id) || !names.has(query.client_id)) throw new PageError(404, 'error.unknownApp')
          const mine = settings.find((a) => a.clientId === query.client_id)?.settings ?? []
          const app = { client_id: query.client_id, name: names.get(query.client_id)! }
          return download({ app, settings: mine.map(settingOut) }, `latchkey-settings-${query.client_id.replace(/[^A-Za-z0-9]/g, '-').slice(0, 64)}.json`)
        }
        const ids = [...new Set([...apps.map((a) => a.clientId), ...settings.map((s) => s.clientId)])]
        const profile = { id: user.id, email: user.email, email_verified: user.emailVerified, full_name: user.fullName, avatar_url: toUserView(user, ctx.config.issuer).avatar_url }
        const all = ids.map((clientId) => ({
          client_id: clientId,
          name: names.get(clientId) ?? clientId,
          scopes: [...new Set(apps.filter((a) => a.clientId === clientId).flatMap((a) => a.scopes))],
          settings: (settings.find((s) => s.clientId === clientId)?.settings ?? []).map(settingOut),
        }))
        return download({ exported_at: iso(ctx.clock.now()), profile, apps: all }, 'latchkey-my-data.json')
      },
      { query: t.Object({ client_id: t.Optional(t.String()) }) },
    )
    .get(
      '/account/data/delete',
      async function confirmDeleteData({ request, query }) {
        const session = await readSession(ctx, request)
        if (!session) return seeOther(loginUrl('/account'))
        const clientId = query.client_id ?? ''
        const client = isClientId(clientId) ? await findClient(ctx.store, clientId) : undefined
        if (!client) throw new PageError(404, 'error.unknownApp')
        const { settings } = await ctx.store.settings.listSettings(session.user.id, clientId)
        const csrf = formCsrf(ctx, request, session).token
        return htmlPage(() => DeleteDataPage({ csrf, clientId, appName: client.name, settings: settings.length }), { speech: speechOf(ctx.config, request, { user: session.user }) })
      },
      { query: t.Object({ client_id: t.Optional(t.String()) }) },
    )
    .post(
      '/account/data/delete',
      async function deleteData({ request, body }) {
        const session = await readSession(ctx, request)
        if (!session || !csrfAccepted(ctx, request, session, body.csrf_token)) throw forbidden()
        const clientId = body.client_id ?? ''
        if (!isClientId(clientId)) throw new PageError(400, 'error.unknownApp')
        const changes = await ctx.store.settings.deleteAppSettings(session.user.id, clientId, ctx.clock.now())
        ctx.settingsCache.invalidate(session.user.id, clientId)
        for (const change of changes) ctx.settingsHub.published(session.user.id, clientId, change)
        // Said on /account: what was deleted (the count is of keys, one revision each).
        const name = (await findClient(ctx.store, clientId))?.name ?? clientId
        const n = changes.length
        return accountPage(ctx, request, session, undefined, () => msg('account.dataDeleted', { count: n, app: name }))
      },
      { parse: parsePageForm, body: RevokeForm },
    )
}
