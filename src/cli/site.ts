import { addSiteRule, checkSiteHost, createSite, toSiteView } from '../authz/sites'
import { escapeForTerminal } from '../lib/text'
import { command, type CommandGroup } from './command'
import { UsageError, cliAudit, inputError, printJson, printTable, withStore } from './common'

const create = command({
  name: 'create',
  summary: 'a host reverse proxies ask about (forward-auth), with its policy',
  detail: 'HOST is exact (photos.example.com) or *.example.com for its subdomains (not example.com itself).',
  options: {
    host: { type: 'string', arg: 'HOST', required: true, help: 'the host the proxy forwards (no port)' },
    name: { type: 'string', arg: 'NAME', required: true, help: 'the name people see' },
    policy: { type: 'string', arg: 'one-factor|two-factor|bypass|deny', help: 'what a request needs when no rule matches (one-factor)' },
    'allowed-group': { type: 'string', multiple: true, arg: 'NAME', help: 'only members of these groups pass (repeatable)' },
    jwt: { type: 'boolean', help: 'also send Remote-Jwt (60 s, aud = the site origin)' },
  },
  examples: ['site create --host photos.example.com --name Photos --allowed-group family', "site create --host '*.lab.example.com' --name Lab --policy two-factor"],
  json: 'the site (the default output too)',
  async run({ values }) {
    if (!values.host) throw new UsageError('--host is required')
    if (!values.name) throw new UsageError('--name is required')
    const site = await withStore((store) =>
      inputError(async () => {
        const made = await createSite(store, { host: values.host!, name: values.name!, policy: values.policy, allowedGroups: values['allowed-group'], jwt: values.jwt }, Date.now())
        await cliAudit(store, 'site.created', { detail: { site: made.host } })
        return made
      }),
    )
    printJson(toSiteView(site))
  },
})

const rule = command({
  name: 'rule',
  args: 'add HOST',
  positionals: 2,
  summary: "add a rule to a site: its rules are tried in order before the site's policy; the first that matches decides",
  options: {
    path: { type: 'string', multiple: true, arg: 'REGEX', help: 'paths it matches (RE2 syntax, matched in linear time), after percent-decoding and removing dot-segments (repeatable)' },
    method: { type: 'string', multiple: true, arg: 'METHOD', help: 'methods it matches (repeatable)' },
    network: { type: 'string', multiple: true, arg: 'CIDR', help: 'client networks it matches (repeatable)' },
    client: { type: 'string', multiple: true, arg: 'CLIENT_ID', help: 'machine clients it names (repeatable)' },
    policy: { type: 'string', arg: 'one-factor|two-factor|bypass|deny', help: 'what a matching request needs (required)' },
  },
  examples: ["site rule add photos.example.com --path '^/public/' --policy bypass"],
  json: 'the rule (the default output too)',
  async run({ values, positionals }) {
    const [verb, host] = positionals
    if (!values.policy) throw new UsageError('--policy is required; see latchkey site rule --help')
    if (verb !== 'add' || !host) throw new UsageError('usage: latchkey site rule add HOST [--path REGEX]... [--method M]... [--network CIDR]... [--client ID]... --policy P; see latchkey site rule --help')
    const added = await withStore((store) =>
      inputError(async () => {
        const made = await addSiteRule(store, host, { paths: values.path, methods: values.method, networks: values.network, clients: values.client, policy: values.policy })
        await cliAudit(store, 'site.rule_added', { detail: { site: checkSiteHost(host) } })
        return made
      }),
    )
    printJson(added)
  },
})

const list = command({
  name: 'list',
  summary: 'the sites with their policies and rules',
  options: {},
  examples: ['site list', 'site list --json'],
  json: '[{host, name, policy, allowed_groups, jwt, rules}]',
  async run({ json }) {
    const sites = (await withStore((store) => store.sites.listSites())).map(toSiteView)
    if (json) return printJson(sites)
    if (sites.length === 0) return void process.stdout.write('no sites\n')
    printTable(sites.map((s) => ({ host: s.host, name: s.name, policy: s.policy, allowed_groups: s.allowed_groups.join(' '), jwt: String(s.jwt), rules: String(s.rules.length) })))
  },
})

const remove = command({
  name: 'delete',
  args: 'HOST',
  positionals: 1,
  summary: 'delete a site; its sessions end',
  options: {},
  examples: ['site delete photos.example.com'],
  json: '{host, deleted: true}',
  async run({ positionals, json }) {
    const raw = positionals[0]
    if (!raw) throw new UsageError('site delete needs a HOST; see latchkey site delete --help')
    const deleted = await withStore((store) =>
      inputError(async () => {
        const host = checkSiteHost(raw)
        return (await store.sites.deleteSite(host)) && (await cliAudit(store, 'site.deleted', { detail: { site: host } }), true)
      }),
    )
    if (!deleted) throw new UsageError(`no site for "${escapeForTerminal(raw)}"`)
    if (json) return printJson({ host: raw, deleted: true })
    process.stdout.write(`deleted site ${escapeForTerminal(raw)}\n`)
  },
})

/** `latchkey site …`: the hosts reverse proxies ask about (forward-auth), their policies and rules. */
export const siteCommands: CommandGroup = {
  name: 'site',
  summary: 'apps behind a reverse proxy (forward-auth): hosts, policies, rules',
  commands: [create, rule, list, remove],
}
