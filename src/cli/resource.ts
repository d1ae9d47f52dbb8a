import { canonicalResource, createResource, toResourceView } from '../oauth/resources'
import { escapeForTerminal } from '../lib/text'
import { UsageError, cliAudit, inputError, parse, printJson, printTable, withStore } from './common'

export async function resourceCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args
  switch (sub) {
    case 'create': {
      const { values } = parse(rest, {
        uri: { type: 'string' },
        name: { type: 'string' },
        scope: { type: 'string', multiple: true },
        'token-format': { type: 'string' },
        introspector: { type: 'string', multiple: true },
      })
      if (!values.uri) throw new UsageError('--uri is required')
      if (!values.name) throw new UsageError('--name is required')
      const resource = await withStore((store) =>
        inputError(async () => {
          const made = await createResource(
            store,
            { uri: values.uri!, name: values.name!, scopes: values.scope ?? [], tokenFormat: values['token-format'], introspectors: values.introspector },
            Date.now(),
          )
          await cliAudit(store, 'resource.created', { detail: { resource: made.uri } })
          return made
        }),
      )
      printJson(toResourceView(resource))
      return
    }
    case 'list': {
      const { values } = parse(rest, { json: { type: 'boolean' } })
      const list = (await withStore((store) => store.resources.listResources())).map(toResourceView)
      if (values.json) return printJson(list)
      if (list.length === 0) return void process.stdout.write('no resources\n')
      printTable(list.map((r) => ({ uri: r.uri, name: r.name, scopes: Object.keys(r.scopes).join(' '), token_format: r.token_format, introspectors: r.introspectors.join(' ') })))
      return
    }
    case 'delete': {
      const { positionals } = parse(rest, {}, 1)
      const raw = positionals[0]
      if (!raw) throw new UsageError('usage: latchkey resource delete URI')
      const uri = canonicalResource(raw)
      if (!uri || !(await withStore(async (store) => (await store.resources.deleteResource(uri)) && (await cliAudit(store, 'resource.deleted', { detail: { resource: uri } }), true)))) throw new UsageError(`no resource with the URI "${escapeForTerminal(raw)}"`)
      process.stdout.write(`deleted resource ${escapeForTerminal(uri)}\n`)
      return
    }
    default:
      throw new UsageError(`unknown resource command "${sub ?? ''}" (create, list, delete)`)
  }
}
