import type { AppContext } from '../context'
import { findClient } from '../oauth/clients'
import { canonicalResource } from '../oauth/resources'
import { canonicalSiteHost } from '../authz/hosts'
import type { FormFields } from '../web/forms'
import { field } from './web'

/**
 * What a confirmation page names (SPEC "/admin": "Delete carol@example.com: 3 apps lose access,
 * 41 settings are deleted"): the change and its reach in one line, what else follows, and the
 * words of the button that does it.
 */
export interface Confirmation {
  summary: string
  details: string[]
  button: string
}

/** The target is gone (or never was): the section's page says so, nothing is asked. */
export type Missing = { error: string; status: number }

export type Confirm = (body: FormFields) => Promise<Confirmation | Missing>

/** "1 app loses", "3 apps lose": a count with its noun and verb agreeing. */
export const counted = (n: number, one: string, many: string, verbs: [string, string]) => `${n} ${n === 1 ? one : many} ${n === 1 ? verbs[0] : verbs[1]}`

const reach = (apps: number, appWord: [string, string], settings: number) =>
  `${counted(apps, appWord[0], appWord[1], ['loses access', 'lose access'])}, ${counted(settings, 'setting', 'settings', ['is deleted', 'are deleted'])}`

/**
 * The confirmations of /admin's destructive actions, each read from the database when asked —
 * on the first POST, which changes nothing, and again on the confirming one.
 */
export function confirmations(ctx: AppContext) {
  const user = async (body: FormFields) => ctx.store.users.findUser(field(body, 'user_id'))
  const app = async (body: FormFields) => findClient(ctx.store, field(body, 'client_id'))
  const NO_USER: Missing = { error: 'There is no such user.', status: 404 }
  const NO_APP: Missing = { error: 'There is no such app.', status: 404 }

  return {
    async deleteUser(body: FormFields): Promise<Confirmation | Missing> {
      const found = await user(body)
      if (!found) return NO_USER
      const { settings, others } = await ctx.store.settings.footprint({ userId: found.id })
      return {
        summary: `Delete ${found.email}: ${reach(others, ['app', 'apps'], settings)}`,
        details: ['Their sessions, tokens, consents, passkeys and group memberships are deleted with the account.', 'This cannot be undone.'],
        button: `Delete ${found.email}`,
      }
    },
    async signOut(body: FormFields): Promise<Confirmation | Missing> {
      const found = await user(body)
      if (!found) return NO_USER
      return {
        summary: `Sign ${found.email} out everywhere: every session of theirs ends, on every device`,
        details: ['They sign in again to use their account and to authorize apps.'],
        button: 'Sign out everywhere',
      }
    },
    async resetTwoStep(body: FormFields): Promise<Confirmation | Missing> {
      const found = await user(body)
      if (!found) return NO_USER
      return {
        summary: `Reset two-step sign-in of ${found.email}: their authenticator app and recovery codes are removed, and their sessions end`,
        details: ['They sign in with their password alone, and can turn two-step sign-in on again.'],
        button: 'Reset two-step',
      }
    },
    async deleteApp(body: FormFields): Promise<Confirmation | Missing> {
      const found = await app(body)
      if (!found) return NO_APP
      const { settings, others } = await ctx.store.settings.footprint({ clientId: found.id })
      return {
        summary: `Delete ${found.name}: ${reach(others, ['user', 'users'], settings)}`,
        details: ['Its tokens stop working at once, and its client ID and secret are refused.', 'This cannot be undone.'],
        button: `Delete ${found.name}`,
      }
    },
    async rotateSecret(body: FormFields): Promise<Confirmation | Missing> {
      const found = await app(body)
      if (!found) return NO_APP
      return {
        summary: `Rotate the secret of ${found.name}: the app stops working until it uses the new secret`,
        details: ['The new secret is shown once, on the next page. Tokens already issued keep working.'],
        button: 'Rotate secret',
      }
    },
    async deleteGroup(body: FormFields): Promise<Confirmation | Missing> {
      const name = field(body, 'name')
      const group = (await ctx.store.groups.listGroups()).find((g) => g.name === name)
      if (!group) return { error: 'There is no such group.', status: 404 }
      return {
        summary: `Delete the group ${group.name}: ${counted(group.members.length, 'member', 'members', ['leaves it', 'leave it'])}`,
        details: ['The accounts stay; apps see them without this group.'],
        button: `Delete ${group.name}`,
      }
    },
    async deleteResource(body: FormFields): Promise<Confirmation | Missing> {
      const uri = canonicalResource(field(body, 'uri'))
      const resource = uri ? await ctx.store.resources.findResource(uri) : undefined
      if (!resource) return { error: 'There is no such resource.', status: 404 }
      return {
        summary: `Delete the resource ${resource.name} (${resource.uri}): its access and refresh tokens stop working`,
        details: ['Apps can no longer ask for its scopes, and the consents given for it are forgotten.'],
        button: `Delete ${resource.name}`,
      }
    },
    async deleteSite(body: FormFields): Promise<Confirmation | Missing> {
      const host = canonicalSiteHost(field(body, 'host'))
      const [site] = host ? await ctx.store.sites.findSites([host]) : []
      if (!site) return { error: 'There is no such site.', status: 404 }
      return {
        summary: `Delete the site ${site.name} (${site.host}): its sessions end, and the proxy's checks for it are refused`,
        details: ['Its policy and rules are deleted with it. Remove it from the proxy too.', 'This cannot be undone.'],
        button: `Delete ${site.name}`,
      }
    },
    async rotateKey(): Promise<Confirmation> {
      return {
        summary: 'Rotate the signing key: a new key signs ID tokens once relying parties can have fetched it',
        details: ['The current key stays published until the tokens it signed have expired, so nothing stops working.'],
        button: 'Rotate signing key',
      }
    },
  }
}
