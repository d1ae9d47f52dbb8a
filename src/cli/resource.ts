import { canonicalResource, createResource, toResourceView } from '../oauth/resources'
import { escapeForTerminal } from '../lib/text'
import { command, type CommandGroup } from './command'
import { UsageError, cliAudit, inputError, printJson, printTable, withStore } from './common'

const create = command({
  name: 'create',
  summary: 'register an API (an MCP server …) tokens can be issued for (RFC 8707)',
  options: {
    uri: { type: 'string', arg: 'URI', help: 'the resource indicator apps ask for', required: true },
    name: { type: 'string', arg: 'NAME', help: 'the name users see on the consent page', required: true },
    scope: { type: 'string', multiple: true, arg: 'NAME=DESCRIPTION', help: 'a scope of it, with what the consent page says (repeatable)' },
    'token-format': { type: 'string', arg: 'opaque|jwt', help: 'its access tokens: opaque (introspected) or JWT (RFC 9068); opaque by default' },
    introspector: { type: 'string', multiple: true, arg: 'CLIENT_ID', help: 'a client that may introspect its tokens (repeatable)' },
  },
  examples: ['resource create --uri https://mcp.example.com --name "Home MCP" --scope "tools:read=Read your tools"'],
  json: '{uri, name, scopes, token_format, introspectors} (the default output too)',
  async run({ values }) {
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
  },
})

const list = command({
  name: 'list',
  summary: 'the registered resources with their scopes',
  options: {},
  examples: ['resource list', 'resource list --json'],
  json: '[{uri, name, scopes, token_format, introspectors}]',
  async run({ json }) {
    const list = (await withStore((store) => store.resources.listResources())).map(toResourceView)
    if (json) return printJson(list)
    if (list.length === 0) return void process.stdout.write('no resources\n')
    printTable(list.map((r) => ({ uri: r.uri, name: r.name, scopes: Object.keys(r.scopes).join(' '), token_format: r.token_format, introspectors: r.introspectors.join(' ') })))
  },
})

const remove = command({
  name: 'delete',
  args: 'URI',
  positionals: 1,
  summary: 'delete a resource with the tokens issued for it',
  options: {},
  examples: ['resource delete https://mcp.example.com'],
  json: '{uri, deleted: true}',
  async run({ positionals, json }) {
    const raw = positionals[0]
    if (!raw) throw new UsageError('resource delete needs a URI; see latchkey resource delete --help')
    const uri = canonicalResource(raw)
    if (!uri || !(await withStore(async (store) => (await store.resources.deleteResource(uri)) && (await cliAudit(store, 'resource.deleted', { detail: { resource: uri } }), true)))) throw new UsageError(`no resource with the URI "${escapeForTerminal(raw)}"`)
    if (json) return printJson({ uri, deleted: true })
    process.stdout.write(`deleted resource ${escapeForTerminal(uri)}\n`)
  },
})

/** `latchkey resource …`: APIs (MCP servers …) tokens are issued for (RFC 8707). */
export const resourceCommands: CommandGroup = {
  name: 'resource',
  summary: 'APIs (MCP servers …) tokens are issued for (RFC 8707)',
  commands: [create, list, remove],
}
