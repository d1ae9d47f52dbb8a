import { escapeForTerminal } from '../lib/text'
import { callbackUrl, createProvider, reachWords, readSecretFile, sealKeyOf, toProviderView, updateProvider } from '../providers/service'
import { command, type CommandGroup } from './command'
import { UsageError, cliAudit, inputError, linkConfig, printJson, printTable, trueOrFalse, withStore } from './common'

const KIND_HELP = 'oidc (any OpenID Connect provider, the default), google, or github'

const create = command({
  name: 'create',
  summary: 'a provider people may sign in with ("Continue with NAME")',
  detail:
    'Register ISSUER/login/provider/ID/callback at the provider first (ID: --id, or made from the name).\n' +
    'The issuer must be https:// on a public address (plain http or a private address only for hosts in CLIENT_ID_METADATA_ALLOW_HOSTS).\n' +
    'The secret is read from a file only its owner can read; it is stored sealed and never printed.',
  options: {
    name: { type: 'string', arg: 'NAME', required: true, help: 'the name on the button' },
    id: { type: 'string', arg: 'ID', help: 'the id in the callback URL (default: from the name)' },
    kind: { type: 'string', arg: 'oidc|google|github', help: KIND_HELP },
    issuer: { type: 'string', arg: 'URL', help: 'the OpenID Connect issuer (its /.well-known/openid-configuration is read); not for github' },
    'api-url': { type: 'string', arg: 'URL', help: 'github only: GitHub Enterprise, https://HOST/api/v3' },
    'client-id': { type: 'string', arg: 'ID', required: true, help: 'the client id the provider gave' },
    'client-secret-file': { type: 'string', arg: 'PATH', required: true, help: 'a file (mode 600) holding the client secret' },
    scope: { type: 'string', arg: 'SCOPES', help: 'default "openid email profile" (github: "read:user user:email")' },
    'allow-create': { type: 'boolean', help: 'a person without an account gets one' },
    'allowed-domain': { type: 'string', multiple: true, arg: 'DOMAIN', help: 'only addresses of these domains (google: the hd claim) (repeatable)' },
    'link-verified-email': { type: 'boolean', help: "link to the account with the same verified address, when the provider says it verified it" },
    'trust-mfa': { type: 'boolean', help: "trust the provider's two-step (its id_token amr has mfa) for apps that require it" },
  },
  examples: [
    'provider create --name Acme --issuer https://sso.acme.example --client-id latchkey --client-secret-file /etc/latchkey/acme.secret --link-verified-email',
    'provider create --kind google --name Google --client-id 123.apps.googleusercontent.com --client-secret-file google.secret --allow-create --allowed-domain example.com',
    'provider create --kind github --name GitHub --client-id Iv1.abc --client-secret-file github.secret',
  ],
  json: '{id, name, kind, issuer, client_id, scope, allow_create, allowed_domains, link_verified_email, trust_mfa, callback_url} (the default output too)',
  async run({ values }) {
    if (!values.name) throw new UsageError('--name is required')
    if (!values['client-id']) throw new UsageError('--client-id is required')
    if (!values['client-secret-file']) throw new UsageError('--client-secret-file is required')
    const made = await withStore((store, config) =>
      inputError(async () => {
        const now = Date.now()
        const input = {
          id: values.id,
          name: values.name,
          kind: values.kind,
          issuer: values.issuer,
          apiUrl: values['api-url'],
          clientId: values['client-id'],
          clientSecret: readSecretFile(values['client-secret-file']!),
          scope: values.scope,
          allowCreate: values['allow-create'],
          allowedDomains: values['allowed-domain'],
          linkVerifiedEmail: values['link-verified-email'],
          trustMfa: values['trust-mfa'],
        }
        const provider = await createProvider(store, await sealKeyOf(store, now), input, config.clientIdMetadataAllowHosts, now)
        await cliAudit(store, 'provider.created', { detail: { provider: provider.id } })
        // The callback names the ISSUER the server runs with (recorded at its start), not this shell's.
        return { ...toProviderView(provider), callback_url: callbackUrl((await linkConfig(store, config)).issuer, provider.id) }
      }),
    )
    printJson(made)
  },
})

const list = command({
  name: 'list',
  summary: 'the providers (never their secrets)',
  options: {},
  examples: ['provider list', 'provider list --json'],
  json: '[{id, name, kind, issuer, client_id, scope, allow_create, allowed_domains, link_verified_email, trust_mfa}]',
  async run({ json }) {
    const providers = (await withStore((store) => store.providers.listProviders())).map(toProviderView)
    if (json) return printJson(providers)
    if (providers.length === 0) return void process.stdout.write('no providers\n')
    printTable(providers.map((p) => ({ id: p.id, name: p.name, kind: p.kind, issuer: p.issuer, client_id: p.client_id, allow_create: String(p.allow_create), link_verified_email: String(p.link_verified_email) })))
  },
})

const update = command({
  name: 'update',
  args: 'ID',
  positionals: 1,
  summary: "change a provider's settings (what is not given stays)",
  options: {
    name: { type: 'string', arg: 'NAME', help: 'the name on the button' },
    issuer: { type: 'string', arg: 'URL', help: 'the OpenID Connect issuer' },
    'api-url': { type: 'string', arg: 'URL', help: 'github only: GitHub Enterprise, https://HOST/api/v3' },
    'client-id': { type: 'string', arg: 'ID', help: 'the client id the provider gave' },
    'client-secret-file': { type: 'string', arg: 'PATH', help: 'a file (mode 600) holding a new client secret' },
    scope: { type: 'string', arg: 'SCOPES', help: 'the scopes asked for' },
    'allow-create': { type: 'string', arg: 'true|false', help: 'a person without an account gets one' },
    'allowed-domain': { type: 'string', multiple: true, arg: 'DOMAIN', help: 'replaces the allowed domains (repeatable)' },
    'any-domain': { type: 'boolean', help: 'removes the allowed domains' },
    'link-verified-email': { type: 'string', arg: 'true|false', help: 'link by a verified address' },
    'trust-mfa': { type: 'string', arg: 'true|false', help: "trust the provider's two-step" },
  },
  examples: ['provider update acme --allow-create true --allowed-domain acme.example', 'provider update acme --client-secret-file /etc/latchkey/acme.secret'],
  json: 'the provider, as list shows it (the default output too)',
  async run({ values, positionals }) {
    const id = positionals[0]
    if (!id) throw new UsageError('provider update needs an ID; see latchkey provider update --help')
    if (values['any-domain'] && values['allowed-domain']) throw new UsageError('give --allowed-domain or --any-domain, not both')
    const input = {
      name: values.name,
      issuer: values.issuer,
      apiUrl: values['api-url'],
      clientId: values['client-id'],
      scope: values.scope,
      allowCreate: trueOrFalse('allow-create', values['allow-create']),
      allowedDomains: values['any-domain'] ? [] : values['allowed-domain'],
      linkVerifiedEmail: trueOrFalse('link-verified-email', values['link-verified-email']),
      trustMfa: trueOrFalse('trust-mfa', values['trust-mfa']),
    }
    const updated = await withStore((store, config) =>
      inputError(async () => {
        const now = Date.now()
        const secret = values['client-secret-file'] ? readSecretFile(values['client-secret-file']) : undefined
        const provider = await updateProvider(store, await sealKeyOf(store, now), id, { ...input, clientSecret: secret }, config.clientIdMetadataAllowHosts, now)
        if (provider) await cliAudit(store, 'provider.updated', { detail: { provider: id } })
        return provider
      }),
    )
    if (!updated) throw new UsageError(`no provider "${escapeForTerminal(id)}"`)
    printJson(toProviderView(updated))
  },
})

const remove = command({
  name: 'delete',
  args: 'ID',
  positionals: 1,
  summary: 'delete a provider; the identities linked to it go too (their accounts stay)',
  detail:
    'Prints how many people are connected through it and how many of them have no password or passkey:\n' +
    'those can sign in again only after a password reset by email. While there are any, it is refused without --force.',
  options: {
    force: { type: 'boolean', help: 'delete it even when people would have no way to sign in but a password reset' },
  },
  examples: ['provider delete acme', 'provider delete acme --force'],
  json: '{id, deleted: true, connected, no_other_way_in}',
  async run({ values, positionals, json }) {
    const id = positionals[0]
    if (!id) throw new UsageError('provider delete needs an ID; see latchkey provider delete --help')
    // Counted and deleted in one transaction (ProviderStore.deleteProvider): a password removed at once cannot slip past the refusal.
    const outcome = await withStore(async (store) => {
      const done = await store.providers.deleteProvider(id, { refuseStranding: !values.force })
      if (done?.deleted) await cliAudit(store, 'provider.deleted', { detail: { provider: id, connected: done.connected, no_other_way_in: done.stranded } })
      return done
    })
    if (!outcome) throw new UsageError(`no provider "${escapeForTerminal(id)}"`)
    if (!outcome.deleted) throw new UsageError(`provider ${escapeForTerminal(id)}: ${reachWords(outcome)}; nothing deleted (give --force to delete it anyway)`)
    if (json) return printJson({ id, deleted: true, connected: outcome.connected, no_other_way_in: outcome.stranded })
    process.stdout.write(`deleted provider ${escapeForTerminal(id)}: ${reachWords(outcome)}\n`)
  },
})

/** `latchkey provider …`: upstream providers people sign in with (SPEC "Sign in with another account"). */
export const providerCommands: CommandGroup = {
  name: 'provider',
  summary: 'sign in with another account: OpenID Connect providers, Google, GitHub',
  commands: [create, list, update, remove],
}
