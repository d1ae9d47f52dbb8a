import type { AppContext } from '../context'
import { findClient } from '../oauth/clients'
import { canonicalResource } from '../oauth/resources'
import { canonicalSiteHost } from '../authz/hosts'
import type { FormFields } from '../web/forms'
import { field } from './web'
import { t } from '../i18n'
import type { Saying } from './pages'

/** Words said when the page renders, in its language (src/i18n: a render speaks one language). */
export type Words = () => string

/**
 * What a confirmation page names (SPEC "/admin": "Delete carol@example.com: 3 apps lose access,
 * 41 settings are deleted"): the change and its reach in one line, what else follows, and the
 * words of the button that does it.
 */
export interface Confirmation {
  summary: Words
  details: Words[]
  button: Words
}

/** The target is gone (or never was): the section's page says so, nothing is asked. */
export type Missing = { error: Saying; status: number }

export type Confirm = (body: FormFields) => Promise<Confirmation | Missing>

/** "1 app loses access, 3 settings are deleted": each count with its noun and verb agreeing (the catalog's plurals). */
const reach = (apps: number, of: 'users' | 'apps', settings: number) =>
  t('admin.confirm.reach', { lose: of === 'apps' ? t('admin.confirm.appsLose', { count: apps }) : t('admin.confirm.usersLose', { count: apps }), deleted: t('admin.confirm.settingsDeleted', { count: settings }) })

/**
 * The confirmations of /admin's destructive actions, each read from the database when asked —
 * on the first POST, which changes nothing, and again on the confirming one.
 */
export function confirmations(ctx: AppContext) {
  const user = async (body: FormFields) => ctx.store.users.findUser(field(body, 'user_id'))
  const app = async (body: FormFields) => findClient(ctx.store, field(body, 'client_id'))
  const NO_USER: Missing = { error: { key: 'admin.error.noUser' }, status: 404 }
  const NO_APP: Missing = { error: { key: 'admin.error.noApp' }, status: 404 }

  return {
    async deleteUser(body: FormFields): Promise<Confirmation | Missing> {
      const found = await user(body)
      if (!found) return NO_USER
      const { settings, others } = await ctx.store.settings.footprint({ userId: found.id })
      return {
        summary: () => t('admin.confirm.deleteUser', { email: found.email, reach: reach(others, 'apps', settings) }),
        details: [() => t('admin.confirm.deleteUserDetail'), () => t('admin.confirm.cannotUndo')],
        button: () => t('admin.confirm.deleteNamed', { name: found.email }),
      }
    },
    async signOut(body: FormFields): Promise<Confirmation | Missing> {
      const found = await user(body)
      if (!found) return NO_USER
      return {
        summary: () => t('admin.confirm.signOut', { email: found.email }),
        details: [() => t('admin.confirm.signOutDetail')],
        button: () => t('admin.users.signOut'),
      }
    },
    async resetTwoStep(body: FormFields): Promise<Confirmation | Missing> {
      const found = await user(body)
      if (!found) return NO_USER
      return {
        summary: () => t('admin.confirm.resetTwoStep', { email: found.email }),
        details: [() => t('admin.confirm.resetTwoStepDetail')],
        button: () => t('admin.users.resetTwoStep'),
      }
    },
    async deleteApp(body: FormFields): Promise<Confirmation | Missing> {
      const found = await app(body)
      if (!found) return NO_APP
      const { settings, others } = await ctx.store.settings.footprint({ clientId: found.id })
      return {
        summary: () => t('admin.confirm.deleteApp', { name: found.name, reach: reach(others, 'users', settings) }),
        details: [() => t('admin.confirm.deleteAppDetail'), () => t('admin.confirm.cannotUndo')],
        button: () => t('admin.confirm.deleteNamed', { name: found.name }),
      }
    },
    async rotateSecret(body: FormFields): Promise<Confirmation | Missing> {
      const found = await app(body)
      if (!found) return NO_APP
      return {
        summary: () => t('admin.confirm.rotateSecret', { name: found.name }),
        details: [() => t('admin.confirm.rotateSecretDetail')],
        button: () => t('admin.apps.rotateSecret'),
      }
    },
    async deleteGroup(body: FormFields): Promise<Confirmation | Missing> {
      const name = field(body, 'name')
      const group = (await ctx.store.groups.listGroups()).find((g) => g.name === name)
      if (!group) return { error: { key: 'admin.error.noGroup' }, status: 404 }
      return {
        summary: () => t('admin.confirm.deleteGroup', { name: group.name, leave: t('admin.confirm.membersLeave', { count: group.members.length }) }),
        details: [() => t('admin.confirm.deleteGroupDetail')],
        button: () => t('admin.confirm.deleteNamed', { name: group.name }),
      }
    },
    async deleteResource(body: FormFields): Promise<Confirmation | Missing> {
      const uri = canonicalResource(field(body, 'uri'))
      const resource = uri ? await ctx.store.resources.findResource(uri) : undefined
      if (!resource) return { error: { key: 'admin.error.noResource' }, status: 404 }
      return {
        summary: () => t('admin.confirm.deleteResource', { name: resource.name, uri: resource.uri }),
        details: [() => t('admin.confirm.deleteResourceDetail')],
        button: () => t('admin.confirm.deleteNamed', { name: resource.name }),
      }
    },
    async deleteSite(body: FormFields): Promise<Confirmation | Missing> {
      const host = canonicalSiteHost(field(body, 'host'))
      const [site] = host ? await ctx.store.sites.findSites([host]) : []
      if (!site) return { error: { key: 'admin.error.noSite' }, status: 404 }
      return {
        summary: () => t('admin.confirm.deleteSite', { name: site.name, host: site.host }),
        details: [() => t('admin.confirm.deleteSiteDetail'), () => t('admin.confirm.cannotUndo')],
        button: () => t('admin.confirm.deleteNamed', { name: site.name }),
      }
    },
    async deleteProvider(body: FormFields): Promise<Confirmation | Missing> {
      const id = field(body, 'id')
      const provider = await ctx.store.providers.findProvider(id)
      const reach = provider && (await ctx.store.providers.providerReach(id))
      if (!provider || !reach) return { error: { key: 'admin.error.noProvider' }, status: 404 }
      // Those it is the only way in for can come back only by a password reset mail (WaysIn): said in numbers.
      const stranded: Words[] = reach.stranded ? [() => t('admin.confirm.providerStranded', { count: reach.stranded })] : []
      return {
        summary: () => t('admin.confirm.deleteProvider', { name: provider.name, connected: t('admin.confirm.providerConnected', { count: reach.connected }) }),
        details: [...stranded, () => t('admin.confirm.deleteProviderDetail'), () => t('admin.confirm.cannotUndo')],
        button: () => t('admin.confirm.deleteNamed', { name: provider.name }),
      }
    },
    async rotateKey(): Promise<Confirmation> {
      return {
        summary: () => t('admin.confirm.rotateKey'),
        details: [() => t('admin.confirm.rotateKeyDetail')],
        button: () => t('admin.keys.rotate'),
      }
    },
  }
}
