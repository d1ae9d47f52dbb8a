import { issueRegistrationToken } from '../oauth/dynamic-clients'
import {
  checkBackchannelLogoutUri,
  checkIdTokenAlg,
  checkIntrospects,
  createClient,
  deleteClient,
  findClient,
  insecureRedirectUris,
  listClients,
  rotateSecret,
  setBackchannelLogout,
  setIntrospects,
  toView,
  updateClient,
} from '../oauth/clients'
import { existingGroups, setAllowedGroups } from '../accounts/groups'
import type { Store } from '../db/store'
import type { Client } from '../oauth/clients'
import { UsageError, cliAudit, inputError, parse, printJson, printTable, withStore } from './common'

/** A client as the CLI prints it (the shape `latchkey apply` takes): its options and allowed groups. */
async function viewWithGroups(store: Store, client: Client) {
  const { introspects, ...view } = toView(client)
  return { ...view, allowed_groups: await store.groups.allowedGroups(client.id), introspects }
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
        introspect: { type: 'string', multiple: true },
        'backchannel-logout-uri': { type: 'string' },
        'backchannel-logout-session-required': { type: 'boolean' },
      })
      if (!values.name) throw new UsageError('--name is required')
      if (values['backchannel-logout-session-required'] && !values['backchannel-logout-uri']) throw new UsageError('--backchannel-logout-session-required needs --backchannel-logout-uri')
      if (!values['redirect-uri']?.length) throw new UsageError('at least one --redirect-uri is required')
      const isPublic = values.public ?? false
      const { client, secret, allowedGroups } = await withStore((store) =>
        inputError(async () => {
          const groups = await existingGroups(store, values['allowed-group'] ?? [])
          const introspects = await checkIntrospects(store, values.introspect ?? [], isPublic)
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
              introspects,
              backchannelLogoutUri: values['backchannel-logout-uri'],
              backchannelLogoutSessionRequired: values['backchannel-logout-session-required'],
            },
            Date.now(),
          )
          if (groups.length) await setAllowedGroups({ store }, made.client.id, groups)
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
        introspects: view.introspects,
        ...(view.backchannel_logout_uri === undefined ? {} : { backchannel_logout_uri: view.backchannel_logout_uri, backchannel_logout_session_required: view.backchannel_logout_session_required }),
      })
      return
    }
    case 'update': {
      const { values, positionals } = parse(
        rest,
        {
          'require-mfa': { type: 'string' },
          'allowed-group': { type: 'string', multiple: true },
          'id-token-alg': { type: 'string' },
          introspect: { type: 'string', multiple: true },
          'backchannel-logout-uri': { type: 'string' },
          'backchannel-logout-session-required': { type: 'boolean' },
        },
        1,
      )
      const id = positionals[0]
      const flag = values['require-mfa']
      const groups = values['allowed-group']
      const alg = values['id-token-alg']
      const introspect = values.introspect
      const logoutUri = values['backchannel-logout-uri']
      const logoutSid = values['backchannel-logout-session-required']
      if (!id || (flag === undefined && groups === undefined && alg === undefined && introspect === undefined && logoutUri === undefined && logoutSid === undefined))
        throw new UsageError(
          "usage: latchkey client update ID [--require-mfa true|false] [--allowed-group NAME]... [--id-token-alg RS256|ES256|EdDSA] [--introspect CLIENT_ID... | --introspect '*'] [--backchannel-logout-uri URL|'' [--backchannel-logout-session-required]]",
        )
      if (flag !== undefined && flag !== 'true' && flag !== 'false') throw new UsageError('--require-mfa must be true or false')
      if (alg !== undefined) await inputError(() => checkIdTokenAlg(alg))
      if (logoutUri) await inputError(() => checkBackchannelLogoutUri(logoutUri, 'operator'))
      const view = await withStore(async (store) => {
        const client = await findClient(store, id)
        if (!client) throw new UsageError(`no client with id "${escapeForTerminal(id)}"`)
        // Every check first: a bad group name changes nothing.
        // `--allowed-group ''` (alone) opens the app to everyone again.
        const allowed = groups === undefined ? undefined : await inputError(() => existingGroups(store, groups.filter((g) => g !== '')))
        const introspects = introspect === undefined ? undefined : await inputError(() => checkIntrospects(store, introspect, client.public))
        const backchannel = logoutUri !== undefined ? logoutUri || null : client.backchannelLogoutUri
        if (logoutSid && backchannel === null) throw new UsageError('--backchannel-logout-session-required needs a --backchannel-logout-uri')
        if (introspects !== undefined) await setIntrospects(store, client, introspects)
        // --backchannel-logout-uri '' removes it; the flag alone keeps the URI and requires sid.
        if (logoutUri !== undefined || logoutSid !== undefined) await inputError(() => setBackchannelLogout(store, id, { uri: backchannel, sessionRequired: logoutSid ?? false }))
        if (flag !== undefined) await store.clients.setRequireMfa(id, flag === 'true')
        if (allowed !== undefined) await setAllowedGroups({ store }, id, allowed)
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
      const { token, expiresAt } = await withStore((store) => issueRegistrationToken({ store }, Date.now()))
      printJson({ initial_access_token: token, expires_at: new Date(expiresAt).toISOString() })
      return
    }
    default:
      throw new UsageError(`unknown client command "${sub ?? ''}" (create, list, update, delete, rotate-secret, registration-token)`)
  }
}
