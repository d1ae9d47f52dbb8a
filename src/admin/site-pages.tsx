/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import { POLICIES, type SiteView } from '../authz/sites'
import { ButtonForm, CsrfField, attr } from '../views/layout'
import { AdminLayout, typedIn, type Typed, type Words } from './pages'
import { currentSpeech, t, th } from '../i18n'
import type { MessageKey } from '../i18n/types'

/** What each policy asks, in the words the page shows beside its value. */
const POLICY_WORDS: Record<string, MessageKey> = {
  'one-factor': 'admin.sites.policy.oneFactor',
  'two-factor': 'admin.sites.policy.twoFactor',
  bypass: 'admin.sites.policy.bypass',
  deny: 'admin.sites.policy.deny',
}

function PolicySelect(props: { id: string; selected: string }): JSX.Element {
  return (
    <select id={props.id} name="policy">
      {POLICIES.map((p) => (
        <option value={p} selected={props.selected === p} safe>
          {POLICY_WORDS[p] ? currentSpeech().messages[POLICY_WORDS[p]!].text(undefined) : p}
        </option>
      ))}
    </select>
  )
}

/**
 * /admin/sites (SPEC "Protecting apps that speak no OAuth"): the hosts reverse proxies ask about,
 * as `latchkey site list` shows them; a new site, a rule added to one, a site deleted.
 */
export function SitesPage(props: { csrf: string; sites: SiteView[]; groups: string[]; error?: Words; notice?: Words; typed?: Typed }) {
  const site = typedIn(props.typed, '/admin/sites')
  const rule = typedIn(props.typed, '/admin/sites/rule')
  const typedGroups = new Set(props.typed?.form === '/admin/sites' ? ([] as string[]).concat(props.typed.fields.allowed_groups ?? []) : [])
  return (
    <AdminLayout title={t('admin.sites.title')} error={props.error} notice={props.notice}>
      <table class="admin">
        <thead>
          <tr>
            <th>{th('admin.sites.host')}</th>
            <th>{th('admin.field.name')}</th>
            <th>{th('admin.sites.policy')}</th>
            <th>{th('admin.apps.allowedGroups')}</th>
            <th>{th('admin.sites.rules')}</th>
            <th>{th('admin.field.actions')}</th>
          </tr>
        </thead>
        <tbody>
          {props.sites.map((s) => (
            <tr>
              <td data-label={attr(t('admin.sites.host'))} class="long">
                <code safe>{s.host}</code>
              </td>
              <td data-label={attr(t('admin.field.name'))} safe>
                {s.name}
              </td>
              <td data-label={attr(t('admin.sites.policy'))} safe>
                {s.policy}
              </td>
              <td data-label={attr(t('admin.apps.allowedGroups'))} safe>
                {s.allowed_groups.join(', ') || t('admin.apps.everyone')}
              </td>
              <td data-label={attr(t('admin.sites.rules'))}>{String(s.rules.length)}</td>
              <td data-label="" class="row-actions">
                <ButtonForm action="/admin/sites/delete" csrf={props.csrf} label={t('admin.delete')} kind="danger" fields={{ host: s.host }} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {props.sites.length === 0 ? <p class="muted">{th('admin.sites.none')}</p> : ''}
      <h2>{th('admin.sites.add')}</h2>
      <form method="post" action="/admin/sites">
        <CsrfField token={props.csrf} />
        <label for="site_host">{th('admin.sites.hostField')}</label>
        <input id="site_host" name="host" type="text" required maxlength="253" value={attr(site('host'))} dir="ltr" />
        <label for="site_name">{th('admin.field.name')}</label>
        <input id="site_name" name="name" type="text" required maxlength="200" value={attr(site('name'))} />
        <label for="site_policy">{th('admin.sites.defaultPolicy')}</label>
        <PolicySelect id="site_policy" selected={site('policy') || 'one-factor'} />
        <fieldset>
          <legend>{th('admin.sites.groupsLegend')}</legend>
          {props.groups.length === 0 ? <span class="muted">{th('admin.groups.none')}</span> : ''}
          {props.groups.map((g) => (
            <label class="check">
              <input type="checkbox" name="allowed_groups" value={attr(g)} checked={typedGroups.has(g)} /> <span safe>{g}</span>
            </label>
          ))}
        </fieldset>
        <label class="check">
          <input type="checkbox" name="jwt" value="true" checked={site('jwt') === 'true'} /> {th('admin.sites.jwt')}
        </label>
        <div class="actions">
          <button type="submit">{th('admin.sites.addSubmit')}</button>
        </div>
      </form>
      {props.sites.length > 0 ? (
        <>
          <h2>{th('admin.sites.addRule')}</h2>
          <p class="muted">{th('admin.sites.rulesHint')}</p>
          <form method="post" action="/admin/sites/rule">
            <CsrfField token={props.csrf} />
            <label for="rule_host">{th('admin.sites.site')}</label>
            <select id="rule_host" name="host">
              {props.sites.map((s) => (
                <option value={attr(s.host)} selected={rule('host') === s.host} safe>
                  {s.host}
                </option>
              ))}
            </select>
            <label for="rule_paths">{th('admin.sites.paths')}</label>
            <textarea id="rule_paths" name="paths" rows="2" dir="ltr" safe>
              {rule('paths')}
            </textarea>
            <label for="rule_methods">{th('admin.sites.methods')}</label>
            <input id="rule_methods" name="methods" type="text" maxlength="400" value={attr(rule('methods'))} dir="ltr" />
            <label for="rule_networks">{th('admin.sites.networks')}</label>
            <input id="rule_networks" name="networks" type="text" maxlength="4000" value={attr(rule('networks'))} dir="ltr" />
            <label for="rule_clients">{th('admin.sites.clients')}</label>
            <input id="rule_clients" name="clients" type="text" maxlength="4000" value={attr(rule('clients'))} dir="ltr" />
            <label for="rule_policy">{th('admin.sites.rulePolicy')}</label>
            <PolicySelect id="rule_policy" selected={rule('policy') || 'bypass'} />
            <div class="actions">
              <button type="submit">{th('admin.sites.addRuleSubmit')}</button>
            </div>
          </form>
        </>
      ) : (
        ''
      )}
    </AdminLayout>
  )
}
