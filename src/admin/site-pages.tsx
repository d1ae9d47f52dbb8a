/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import { POLICIES, type SiteView } from '../authz/sites'
import { ButtonForm, CsrfField, attr } from '../views/layout'
import { AdminLayout, typedIn, type Typed } from './pages'

/** What each policy asks, in the words the page shows beside its value. */
const POLICY_WORDS: Record<string, string> = {
  'one-factor': 'one-factor (signed in)',
  'two-factor': 'two-factor (two-step sign-in)',
  bypass: 'bypass (anyone, no sign-in)',
  deny: 'deny (nobody)',
}

function PolicySelect(props: { id: string; selected: string }): JSX.Element {
  return (
    <select id={props.id} name="policy">
      {POLICIES.map((p) => (
        <option value={p} selected={props.selected === p}>
          {POLICY_WORDS[p]}
        </option>
      ))}
    </select>
  )
}

/**
 * /admin/sites (SPEC "Protecting apps that speak no OAuth"): the hosts reverse proxies ask about,
 * as `latchkey site list` shows them; a new site, a rule added to one, a site deleted.
 */
export function SitesPage(props: { csrf: string; sites: SiteView[]; groups: string[]; error?: string; notice?: string; typed?: Typed }) {
  const site = typedIn(props.typed, '/admin/sites')
  const rule = typedIn(props.typed, '/admin/sites/rule')
  const typedGroups = new Set(props.typed?.form === '/admin/sites' ? ([] as string[]).concat(props.typed.fields.allowed_groups ?? []) : [])
  return (
    <AdminLayout title="Sites" error={props.error} notice={props.notice}>
      <table class="admin">
        <thead>
          <tr>
            <th>Host</th>
            <th>Name</th>
            <th>Policy</th>
            <th>Allowed groups</th>
            <th>Rules</th>
            <th>Actions</th>
          </tr>
        </thead>
        <tbody>
          {props.sites.map((s) => (
            <tr>
              <td data-label="Host" class="long">
                <code safe>{s.host}</code>
              </td>
              <td data-label="Name" safe>
                {s.name}
              </td>
              <td data-label="Policy" safe>
                {s.policy}
              </td>
              <td data-label="Allowed groups" safe>
                {s.allowed_groups.join(', ') || 'everyone'}
              </td>
              <td data-label="Rules">{String(s.rules.length)}</td>
              <td data-label="" class="row-actions">
                <ButtonForm action="/admin/sites/delete" csrf={props.csrf} label="Delete" kind="danger" fields={{ host: s.host }} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {props.sites.length === 0 ? <p class="muted">No sites yet.</p> : ''}
      <h2>Add a site</h2>
      <form method="post" action="/admin/sites">
        <CsrfField token={props.csrf} />
        <label for="site_host">Host (photos.example.com, or *.example.com for its subdomains)</label>
        <input id="site_host" name="host" type="text" required maxlength="253" value={attr(site('host'))} />
        <label for="site_name">Name</label>
        <input id="site_name" name="name" type="text" required maxlength="200" value={attr(site('name'))} />
        <label for="site_policy">Policy when no rule matches</label>
        <PolicySelect id="site_policy" selected={site('policy') || 'one-factor'} />
        <fieldset>
          <legend>Only members of these groups pass (none: everyone signed in)</legend>
          {props.groups.length === 0 ? <span class="muted">No groups yet.</span> : ''}
          {props.groups.map((g) => (
            <label class="check">
              <input type="checkbox" name="allowed_groups" value={attr(g)} checked={typedGroups.has(g)} /> <span safe>{g}</span>
            </label>
          ))}
        </fieldset>
        <label class="check">
          <input type="checkbox" name="jwt" value="true" checked={site('jwt') === 'true'} /> Also send Remote-Jwt (60 s, for the site's origin)
        </label>
        <div class="actions">
          <button type="submit">Add site</button>
        </div>
      </form>
      {props.sites.length > 0 ? (
        <>
          <h2>Add a rule</h2>
          <p class="muted">A site's rules are tried in order before its policy; the first that matches decides. Empty fields match everything.</p>
          <form method="post" action="/admin/sites/rule">
            <CsrfField token={props.csrf} />
            <label for="rule_host">Site</label>
            <select id="rule_host" name="host">
              {props.sites.map((s) => (
                <option value={attr(s.host)} selected={rule('host') === s.host} safe>
                  {s.host}
                </option>
              ))}
            </select>
            <label for="rule_paths">Paths (regular expressions, one per line)</label>
            <textarea id="rule_paths" name="paths" rows="2" safe>
              {rule('paths')}
            </textarea>
            <label for="rule_methods">Methods (space-separated: GET HEAD)</label>
            <input id="rule_methods" name="methods" type="text" maxlength="400" value={attr(rule('methods'))} />
            <label for="rule_networks">Client networks (CIDR blocks, space-separated)</label>
            <input id="rule_networks" name="networks" type="text" maxlength="4000" value={attr(rule('networks'))} />
            <label for="rule_clients">Machine clients (client IDs, space-separated)</label>
            <input id="rule_clients" name="clients" type="text" maxlength="4000" value={attr(rule('clients'))} />
            <label for="rule_policy">Policy of a matching request</label>
            <PolicySelect id="rule_policy" selected={rule('policy') || 'bypass'} />
            <div class="actions">
              <button type="submit">Add rule</button>
            </div>
          </form>
        </>
      ) : (
        ''
      )}
    </AdminLayout>
  )
}
