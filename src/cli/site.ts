import { addSiteRule, checkSiteHost, createSite, toSiteView } from '../authz/sites'
import { escapeForTerminal } from '../lib/text'
import { UsageError, cliAudit, inputError, parse, printJson, printTable, withStore } from './common'

const HELP = `latchkey site create --host HOST --name NAME [--policy one-factor|two-factor|bypass|deny] [--allowed-group G]... [--jwt]
latchkey site rule add HOST [--path REGEX]... [--method M]... [--network CIDR]... [--client ID]... --policy P
                         (a site's rules are tried in order before its own policy; the first that matches decides)
latchkey site list [--json]
latchkey site delete HOST
`

/** `latchkey site …`: the hosts reverse proxies ask about (forward-auth), their policies and rules. */
export async function siteCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args
  switch (sub) {
    case 'create': {
      const { values } = parse(rest, { host: { type: 'string' }, name: { type: 'string' }, policy: { type: 'string' }, 'allowed-group': { type: 'string', multiple: true }, jwt: { type: 'boolean' } })
      if (!values.host) throw new UsageError('--host is required')
      if (!values.name) throw new UsageError('--name is required')
      const site = await withStore((store) =>
        inputError(async () => {
          const made = await createSite(store, { host: values.host!, name: values.name!, policy: values.policy, allowedGroups: values['allowed-group'], jwt: values.jwt }, Date.now())
          await cliAudit(store, 'site.created', { detail: { site: made.host } })
          return made
        }),
      )
      return printJson(toSiteView(site))
    }
    case 'rule': {
      const [verb, ...more] = rest
      if (verb !== 'add') throw new UsageError('usage: latchkey site rule add HOST [--path REGEX]... [--method M]... [--network CIDR]... [--client ID]... --policy P')
      const { values, positionals } = parse(more, { path: { type: 'string', multiple: true }, method: { type: 'string', multiple: true }, network: { type: 'string', multiple: true }, client: { type: 'string', multiple: true }, policy: { type: 'string' } }, 1)
      const host = positionals[0]
      if (!host) throw new UsageError('usage: latchkey site rule add HOST ... --policy P')
      const rule = await withStore((store) =>
        inputError(async () => {
          const added = await addSiteRule(store, host, { paths: values.path, methods: values.method, networks: values.network, clients: values.client, policy: values.policy })
          await cliAudit(store, 'site.rule_added', { detail: { site: checkSiteHost(host) } })
          return added
        }),
      )
      return printJson(rule)
    }
    case 'list': {
      const { values } = parse(rest, { json: { type: 'boolean' } })
      const list = (await withStore((store) => store.sites.listSites())).map(toSiteView)
      if (values.json) return printJson(list)
      if (list.length === 0) return void process.stdout.write('no sites\n')
      printTable(list.map((s) => ({ host: s.host, name: s.name, policy: s.policy, allowed_groups: s.allowed_groups.join(' '), jwt: String(s.jwt), rules: String(s.rules.length) })))
      return
    }
    case 'delete': {
      const raw = parse(rest, {}, 1).positionals[0]
      if (!raw) throw new UsageError('usage: latchkey site delete HOST')
      const deleted = await withStore((store) =>
        inputError(async () => {
          const host = checkSiteHost(raw)
          return (await store.sites.deleteSite(host)) && (await cliAudit(store, 'site.deleted', { detail: { site: host } }), true)
        }),
      )
      if (!deleted) throw new UsageError(`no site for "${escapeForTerminal(raw)}"`)
      process.stdout.write(`deleted site ${escapeForTerminal(raw)}\n`)
      return
    }
    case '--help':
    case 'help':
      return void process.stdout.write(HELP)
    default:
      throw new UsageError(`unknown site command "${sub ?? ''}" (create, rule add, list, delete; latchkey site --help)`)
  }
}
