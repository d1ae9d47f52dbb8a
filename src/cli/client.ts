import { issueRegistrationToken } from '../oauth/registration'
import { ClientInputError, createClient, deleteClient, findClient, insecureRedirectUris, listClients, rotateSecret, toView } from '../oauth/clients'
import { UsageError, parse, printJson, printTable, withStore } from './common'
import { escapeForTerminal } from '../lib/text'

export async function clientCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args
  switch (sub) {
    case 'create': {
      const { values } = parse(rest, {
        name: { type: 'string' },
        'redirect-uri': { type: 'string', multiple: true },
        'post-logout-redirect-uri': { type: 'string', multiple: true },
        public: { type: 'boolean' },
        'skip-consent': { type: 'boolean' },
        'require-mfa': { type: 'boolean' },
      })
      if (!values.name) throw new UsageError('--name is required')
      if (!values['redirect-uri']?.length) throw new UsageError('at least one --redirect-uri is required')
      const isPublic = values.public ?? false
      const { client, secret } = await withStore(async (store) => {
        try {
          return await createClient(
            store,
            {
              name: values.name!,
              redirectUris: values['redirect-uri']!,
              postLogoutRedirectUris: values['post-logout-redirect-uri'] ?? [],
              public: isPublic,
              skipConsent: values['skip-consent'] ?? false,
              requireMfa: values['require-mfa'] ?? false,
            },
            Date.now(),
          )
        } catch (error) {
          if (error instanceof ClientInputError) throw new UsageError(error.message)
          throw error
        }
      })
      for (const uri of insecureRedirectUris([...client.redirectUris, ...client.postLogoutRedirectUris]))
        process.stderr.write(`latchkey: warning: ${escapeForTerminal(uri)} is plain http on a non-loopback host; use https outside development\n`)
      const view = toView(client)
      printJson({
        client_id: view.client_id,
        client_secret: secret,
        name: view.name,
        redirect_uris: view.redirect_uris,
        post_logout_redirect_uris: view.post_logout_redirect_uris,
        public: view.public,
        skip_consent: view.skip_consent,
        require_mfa: view.require_mfa,
      })
      return
    }
    case 'update': {
      const { values, positionals } = parse(rest, { 'require-mfa': { type: 'string' } }, 1)
      const id = positionals[0]
      const flag = values['require-mfa']
      if (!id || flag === undefined) throw new UsageError('usage: latchkey client update ID --require-mfa true|false')
      if (flag !== 'true' && flag !== 'false') throw new UsageError('--require-mfa must be true or false')
      const client = await withStore(async (store) => ((await store.clients.setRequireMfa(id, flag === 'true')) ? findClient(store, id) : undefined))
      if (!client) throw new UsageError(`no client with id "${escapeForTerminal(id)}"`)
      printJson(toView(client))
      return
    }
    case 'list': {
      const { values } = parse(rest, { json: { type: 'boolean' } })
      const clients = (await withStore((store) => listClients(store))).map(toView)
      if (values.json) return printJson(clients)
      if (clients.length === 0) return void process.stdout.write('no clients\n')
      printTable(
        clients.map((c) => ({
          client_id: c.client_id,
          name: c.name,
          public: String(c.public),
          skip_consent: String(c.skip_consent),
          require_mfa: String(c.require_mfa),
          redirect_uris: c.redirect_uris.join(' '),
        })),
      )
      return
    }
    case 'delete': {
      const { positionals } = parse(rest, {}, 1)
      const id = positionals[0]
      if (!id) throw new UsageError('usage: latchkey client delete ID')
      if (!(await withStore((store) => deleteClient(store, id)))) throw new UsageError(`no client with id "${id}"`)
      process.stdout.write(`deleted client ${escapeForTerminal(id)}\n`)
      return
    }
    case 'rotate-secret': {
      const { positionals } = parse(rest, {}, 1)
      const id = positionals[0]
      if (!id) throw new UsageError('usage: latchkey client rotate-secret ID')
      const secret = await withStore((store) => rotateSecret(store, id))
      if (!secret) throw new UsageError(`no confidential client with id "${id}"`)
      printJson({ client_id: id, client_secret: secret })
      return
    }
    case 'registration-token': {
      parse(rest, {}, 0)
      // RFC 7591 §3's initial access token, for DYNAMIC_REGISTRATION=token: shown once, kept hashed.
      const { token, expiresAt } = await withStore((store) => issueRegistrationToken({ store }, Date.now()))
      printJson({ initial_access_token: token, expires_at: new Date(expiresAt).toISOString() })
      return
    }
    default:
      throw new UsageError(`unknown client command "${sub ?? ''}" (create, list, update, delete, rotate-secret, registration-token)`)
  }
}
