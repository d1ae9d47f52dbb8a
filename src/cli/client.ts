import { issueRegistrationToken } from '../oauth/dynamic-clients'
import { checkIdTokenAlg, createClient, deleteClient, findClient, insecureRedirectUris, listClients, rotateSecret, toView, updateClient } from '../oauth/clients'
import { existingGroups } from '../accounts/groups'
import type { Store } from '../db/store'
import type { Client } from '../oauth/clients'
import { UsageError, cliAudit, inputError, parse, printJson, printTable, withStore } from './common'

/** A client as the CLI prints it (the shape `latchkey apply` takes): its options and allowed groups. */
async function viewWithGroups(store: Store, client: Client) {
  return { ...toView(client), allowed_groups: await store.groups.allowedGroups(client.id) }
}
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
        'allowed-group': { type: 'string', multiple: true },
        'id-token-alg': { type: 'string' },
      })
      if (!values.name) throw new UsageError('--name is required')
      if (!values['redirect-uri']?.length) throw new UsageError('at least one --redirect-uri is required')
      const isPublic = values.public ?? false
      const { client, secret, allowedGroups } = await withStore((store) =>
        inputError(async () => {
          const groups = await existingGroups(store, values['allowed-group'] ?? [])
          const made = await createClient(
            store,
            {
              name: values.name!,
              redirectUris: values['redirect-uri']!,
              postLogoutRedirectUris: values['post-logout-redirect-uri'] ?? [],
              public: isPublic,
              skipConsent: values['skip-consent'] ?? false,
              requireMfa: values['require-mfa'] ?? false,
              idTokenAlg: values['id-token-alg'],
            },
            Date.now(),
          )
          if (groups.length) await store.groups.setAllowedGroups(made.client.id, groups)
          await cliAudit(store, 'client.created', { clientId: made.client.id })
          return { ...made, allowedGroups: groups }
        }),
      )
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
        id_token_signed_response_alg: view.id_token_signed_response_alg,
        allowed_groups: allowedGroups,
      })
      return
    }
    case 'update': {
      const { values, positionals } = parse(rest, { 'require-mfa': { type: 'string' }, 'allowed-group': { type: 'string', multiple: true }, 'id-token-alg': { type: 'string' } }, 1)
      const id = positionals[0]
      const flag = values['require-mfa']
      const groups = values['allowed-group']
      const alg = values['id-token-alg']
      if (!id || (flag === undefined && groups === undefined && alg === undefined))
        throw new UsageError('usage: latchkey client update ID [--require-mfa true|false] [--allowed-group NAME]... [--id-token-alg RS256|ES256|EdDSA]')
      if (flag !== undefined && flag !== 'true' && flag !== 'false') throw new UsageError('--require-mfa must be true or false')
      if (alg !== undefined) await inputError(() => checkIdTokenAlg(alg))
      const view = await withStore(async (store) => {
        const client = await findClient(store, id)
        if (!client) throw new UsageError(`no client with id "${escapeForTerminal(id)}"`)
        // Every check first: a bad group name changes nothing.
        const allowed = groups === undefined ? undefined : await inputError(() => existingGroups(store, groups))
        if (flag !== undefined) await store.clients.setRequireMfa(id, flag === 'true')
        if (allowed !== undefined) await store.groups.setAllowedGroups(id, allowed)
        if (alg !== undefined) await updateClient(store, id, { ...client, idTokenAlg: alg, requireMfa: flag === undefined ? client.requireMfa : flag === 'true' })
        await cliAudit(store, 'client.updated', { clientId: id })
        return viewWithGroups(store, (await findClient(store, id))!)
      })
      printJson(view)
      return
    }
    case 'list': {
      const { values } = parse(rest, { json: { type: 'boolean' } })
      const clients = await withStore(async (store) => Promise.all((await listClients(store)).map((c) => viewWithGroups(store, c))))
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
      if (!(await withStore(async (store) => (await deleteClient(store, id)) && (await cliAudit(store, 'client.deleted', { clientId: id }), true)))) throw new UsageError(`no client with id "${id}"`)
      process.stdout.write(`deleted client ${escapeForTerminal(id)}\n`)
      return
    }
    case 'rotate-secret': {
      const { positionals } = parse(rest, {}, 1)
      const id = positionals[0]
      if (!id) throw new UsageError('usage: latchkey client rotate-secret ID')
      const secret = await withStore(async (store) => {
        const made = await rotateSecret(store, id)
        if (made) await cliAudit(store, 'client.secret_rotated', { clientId: id })
        return made
      })
      if (!secret) throw new UsageError(`no confidential client with id "${id}"`)
      printJson({ client_id: id, client_secret: secret })
      return
    }
    case 'registration-token': {
      parse(rest, {}, 0)
      // RFC 7591 §3's initial access token, for DYNAMIC_REGISTRATION=token: shown once, kept hashed.
      const { token, expiresAt } = await withStore(async (store) => {
        const issued = await issueRegistrationToken({ store }, Date.now())
        await cliAudit(store, 'registration_token.issued', { detail: { expires_at: new Date(issued.expiresAt).toISOString() } })
        return issued
      })
      printJson({ initial_access_token: token, expires_at: new Date(expiresAt).toISOString() })
      return
    }
    default:
      throw new UsageError(`unknown client command "${sub ?? ''}" (create, list, update, delete, rotate-secret, registration-token)`)
  }
}
