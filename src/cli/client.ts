import { readFileSync, statSync } from 'node:fs'
import { issueRegistrationToken } from '../oauth/dynamic-clients'
import { checkBackchannelLogoutUri, checkClientOptions, checkGrants, checkIdTokenAlg, checkKeys, checkIntrospects, createClient, deleteClient, findClient, insecureRedirectUris, listClients, rotateSecret, setBackchannelLogout, setIntrospects, toView, updateClient } from '../oauth/clients'
import { existingGroups, setAllowedGroups } from '../accounts/groups'
import type { Store } from '../db/store'
import type { Client } from '../oauth/clients'
import { escapeForTerminal } from '../lib/text'
import { checkLaunchUrl, checkLogo, MAX_LOGO_BYTES, setClientLogo, setLaunchUrl } from '../oauth/client-logo'
import { etagOf } from '../brand/config'
import { command, type CommandGroup } from './command'
import { UsageError, cliAudit, inputError, printJson, printTable, trueOrFalse, withStore } from './common'

/** A client as the CLI prints it (the shape `latchkey apply` takes): its options and allowed groups. */
async function viewWithGroups(store: Store, client: Client) {
  const { introspects, grant_types, allowed_scopes, require_pushed_authorization_requests, token_endpoint_auth_method, jwks_uri, ...view } = toView(client)
  return { ...view, allowed_groups: await store.groups.allowedGroups(client.id), introspects, grant_types, allowed_scopes, require_pushed_authorization_requests, token_endpoint_auth_method, jwks_uri }
}

/**
 * The options `client create` and `client update` share, one table: an option added here is on
 * both (its handling goes in each `run`).
 */
const appOptions = {
  name: { type: 'string', arg: 'NAME', help: 'the name users see when they sign in and consent' },
  'redirect-uri': { type: 'string', multiple: true, arg: 'URL', help: 'where the app receives the code (repeatable)' },
  'post-logout-redirect-uri': { type: 'string', multiple: true, arg: 'URL', help: 'where signing out may return to (repeatable)' },
  'allowed-group': { type: 'string', multiple: true, arg: 'NAME', help: 'only members of these groups may authorize it (repeatable; none: every user)' },
  'id-token-alg': { type: 'string', arg: 'RS256|ES256|EdDSA', help: 'how its ID tokens are signed (RS256 by default)' },
  'backchannel-logout-uri': { type: 'string', arg: 'URL', help: "OpenID Connect back-channel logout: where a logout_token is posted when a session ends (https, or loopback; '' on update: none)" },
  'backchannel-logout-session-required': { type: 'boolean', help: 'the logout_token always names the session (sid)' },
  introspect: { type: 'string', multiple: true, arg: "CLIENT_ID|'*'", help: "a resource server: may introspect these clients' access tokens, or every client's with '*' (repeatable; '' on update: none)" },
  grant: { type: 'string', multiple: true, arg: 'GRANT', help: 'a grant it may use: authorization_code (default), client_credentials, urn:ietf:params:oauth:grant-type:device_code (repeatable; on update: replaces them)' },
  'auth-method': { type: 'string', arg: 'client_secret|private_key_jwt', help: 'how it authenticates: its secret (default) or assertions signed with its keys (RFC 7523)' },
  'jwks-file': { type: 'string', arg: 'FILE', help: 'with --auth-method private_key_jwt: a file holding its public keys (a JWKS)' },
  'jwks-uri': { type: 'string', arg: 'URL', help: 'with --auth-method private_key_jwt: where it publishes its public keys' },
  'allowed-scope': { type: 'string', multiple: true, arg: 'SCOPE', help: "with --grant client_credentials: a resource's scope its own tokens may carry (repeatable; '' on update: none)" },
  'logo-file': { type: 'string', arg: 'PATH', help: "its logo, shown on the consent page and in /account's Your apps: PNG, WebP or SVG, at most 256 KiB ('' on update: none)" },
  'launch-url': { type: 'string', arg: 'URL', help: "where /account's Your apps opens it: https, or http on localhost ('' on update: none)" },
} as const

/** `--logo-file PATH`: its bytes, checked (type by its bytes, size before reading); '' removes the logo. */
function logoFile(path: string | undefined): Uint8Array<ArrayBuffer> | null | undefined {
  if (path === undefined || path === '') return path === '' ? null : undefined
  let bytes: Uint8Array<ArrayBuffer>
  try {
    const size = statSync(path).size
    if (size > MAX_LOGO_BYTES) throw new UsageError(`--logo-file ${escapeForTerminal(path)} is ${size} bytes; at most 256 KiB`)
    bytes = new Uint8Array(readFileSync(path))
  } catch (error) {
    if (error instanceof UsageError) throw error
    throw new UsageError(`--logo-file ${escapeForTerminal(path)}: ${(error as NodeJS.ErrnoException).code ?? 'cannot be read'}`)
  }
  checkLogoOrRefuse(bytes, path)
  return bytes
}

function checkLogoOrRefuse(bytes: Uint8Array<ArrayBuffer>, path: string): void {
  try {
    checkLogo(bytes, `--logo-file ${escapeForTerminal(path)}`)
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
}

/** `--launch-url URL`, checked; '' removes it. */
function launchUrl(raw: string | undefined): string | null | undefined {
  if (raw === undefined || raw === '') return raw === '' ? null : undefined
  try {
    return checkLaunchUrl(raw)
  } catch (error) {
    throw new UsageError(`--launch-url: ${escapeForTerminal((error as Error).message)}`)
  }
}

/** `--allowed-group NAME…`: existing groups; `none` (or '') alone opens the app to every user again. */
async function allowedGroups(store: Store, names: readonly string[]): Promise<string[]> {
  if (names.includes('none') || names.includes('')) {
    if (names.length > 1) throw new UsageError('--allowed-group none opens the app to every user; give it alone')
    return []
  }
  return inputError(() => existingGroups(store, names))
}

/** `--jwks-file FILE`: its text (checked by checkKeys); a file that cannot be read is one line. */
function jwksFile(path: string | undefined): string | undefined {
  if (path === undefined) return undefined
  try {
    return readFileSync(path, 'utf8')
  } catch (error) {
    throw new UsageError(`--jwks-file ${escapeForTerminal(path)}: ${(error as NodeJS.ErrnoException).code ?? 'cannot be read'}`)
  }
}

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i])

const create = command({
  name: 'create',
  summary: 'register an app; prints its secret, this once',
  options: {
    name: { ...appOptions.name, required: true },
    'redirect-uri': { ...appOptions['redirect-uri'], help: 'where the app receives the code (repeatable; needed with --grant authorization_code)' },
    'post-logout-redirect-uri': appOptions['post-logout-redirect-uri'],
    grant: appOptions.grant,
    'allowed-scope': appOptions['allowed-scope'],
    'auth-method': appOptions['auth-method'],
    'jwks-file': appOptions['jwks-file'],
    'jwks-uri': appOptions['jwks-uri'],
    'require-par': { type: 'boolean', help: 'authorization requests only through PAR (RFC 9126)' },
    public: { type: 'boolean', help: 'a public client (single-page or mobile app): no secret, PKCE' },
    'skip-consent': { type: 'boolean', help: 'no consent page (your own first-party apps)' },
    'require-mfa': { type: 'boolean', help: 'authorizing needs two factors' },
    'allowed-group': appOptions['allowed-group'],
    'id-token-alg': appOptions['id-token-alg'],
    introspect: appOptions.introspect,
    'backchannel-logout-uri': appOptions['backchannel-logout-uri'],
    'backchannel-logout-session-required': appOptions['backchannel-logout-session-required'],
    'logo-file': { ...appOptions['logo-file'], help: "its logo, shown on the consent page and in /account's Your apps: PNG, WebP or SVG, at most 256 KiB" },
    'launch-url': { ...appOptions['launch-url'], help: "where /account's Your apps opens it: https, or http on localhost" },
  },
  examples: [
    'client create --name "My App" --redirect-uri https://app.example.com/callback',
    'client create --name Wiki --redirect-uri https://wiki.example.com/cb --logo-file wiki.svg --launch-url https://wiki.example.com/',
    'client create --name Photos --redirect-uri https://photos.example.com/cb --allowed-group family --require-mfa',
    'client create --name "Nightly job" --grant client_credentials --allowed-scope reports:read',
  ],
  json: 'the app with its secret (the default output too)',
  async run({ values }) {
    if (!values.name) throw new UsageError('--name is required')
    const grantTypes = values.grant ?? ['authorization_code']
    if (!values['redirect-uri']?.length && grantTypes.includes('authorization_code')) throw new UsageError('at least one --redirect-uri is required (for --grant authorization_code, the default)')
    if (values['backchannel-logout-session-required'] && !values['backchannel-logout-uri']) throw new UsageError('--backchannel-logout-session-required needs --backchannel-logout-uri')
    const isPublic = values.public ?? false
    // Checked before anything is written: a bad file or URL creates nothing.
    if (values['logo-file'] === '' || values['launch-url'] === '') throw new UsageError("--logo-file and --launch-url need a value on create ('' removes one on update)")
    const logo = logoFile(values['logo-file'])
    const launch = launchUrl(values['launch-url'])
    const { client, secret, allowedGroups: groups } = await withStore((store) =>
      inputError(async () => {
        const groups = await allowedGroups(store, values['allowed-group'] ?? [])
        const introspects = await checkIntrospects(store, values.introspect ?? [], isPublic)
        const made = await createClient(
          store,
          {
            name: values.name!,
            redirectUris: values['redirect-uri'] ?? [],
            postLogoutRedirectUris: values['post-logout-redirect-uri'] ?? [],
            grantTypes,
            allowedScopes: values['allowed-scope'] ?? [],
            requirePar: values['require-par'] ?? false,
            authMethod: values['auth-method'],
            jwks: jwksFile(values['jwks-file']),
            jwksUri: values['jwks-uri'],
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
        if (logo) await setClientLogo(store, made.client.id, logo, Date.now())
        if (launch) await setLaunchUrl(store, made.client.id, launch)
        await cliAudit(store, 'client.created', { clientId: made.client.id })
        return { ...made, client: (await findClient(store, made.client.id))!, allowedGroups: groups }
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
      allowed_groups: groups,
      introspects: view.introspects,
      ...(view.backchannel_logout_uri === undefined ? {} : { backchannel_logout_uri: view.backchannel_logout_uri, backchannel_logout_session_required: view.backchannel_logout_session_required }),
      grant_types: view.grant_types,
      allowed_scopes: view.allowed_scopes,
      require_pushed_authorization_requests: view.require_pushed_authorization_requests,
      token_endpoint_auth_method: view.token_endpoint_auth_method,
      jwks_uri: view.jwks_uri,
      ...(view.launch_url === undefined ? {} : { launch_url: view.launch_url }),
      ...(view.logo_url === undefined ? {} : { logo_url: view.logo_url }),
    })
  },
})

const update = command({
  name: 'update',
  args: 'ID',
  positionals: 1,
  summary: "change an app's name, redirect URIs and options",
  detail: 'Every option of client create but --public (delete and create the app to change that); what is not given stays.',
  options: {
    name: appOptions.name,
    'redirect-uri': { ...appOptions['redirect-uri'], help: 'replaces the redirect URIs (repeatable)' },
    'add-redirect-uri': { type: 'string', multiple: true, arg: 'URL', help: 'adds a redirect URI (repeatable)' },
    'remove-redirect-uri': { type: 'string', multiple: true, arg: 'URL', help: 'removes a redirect URI (repeatable; one must stay)' },
    'post-logout-redirect-uri': { ...appOptions['post-logout-redirect-uri'], help: 'replaces the post-logout redirect URIs (repeatable; none: no URI)' },
    'skip-consent': { type: 'string', arg: 'true|false', help: 'no consent page (your own first-party apps)' },
    'require-mfa': { type: 'string', arg: 'true|false', help: 'authorizing needs two factors' },
    'allowed-group': { ...appOptions['allowed-group'], help: 'replaces the groups whose members may authorize it (repeatable; none: every user)' },
    'id-token-alg': appOptions['id-token-alg'],
    introspect: appOptions.introspect,
    'backchannel-logout-uri': appOptions['backchannel-logout-uri'],
    'backchannel-logout-session-required': { ...appOptions['backchannel-logout-session-required'], help: 'the logout_token always names the session (sid); given with or without the URI, else it goes back to false when the URI changes' },
    grant: appOptions.grant,
    'allowed-scope': appOptions['allowed-scope'],
    'auth-method': appOptions['auth-method'],
    'jwks-file': appOptions['jwks-file'],
    'jwks-uri': appOptions['jwks-uri'],
    'require-par': { type: 'string', arg: 'true|false', help: 'authorization requests only through PAR (RFC 9126)' },
    'logo-file': appOptions['logo-file'],
    'launch-url': appOptions['launch-url'],
  },
  examples: [
    'client update d2844b790e7041724ccbcbfa --add-redirect-uri https://app.example.com/callback2',
    'client update d2844b790e7041724ccbcbfa --allowed-group none --require-mfa false',
    "client update d2844b790e7041724ccbcbfa --logo-file photos.png --launch-url https://photos.example.com/",
  ],
  json: 'the app as client list --json shows it',
  async run({ values, positionals, json }) {
    const id = positionals[0]
    if (!id) throw new UsageError('client update needs the app\'s ID; see latchkey client update --help')
    if (Object.values(values).every((v) => v === undefined)) throw new UsageError('client update needs an option to change; see latchkey client update --help')
    const skipConsent = trueOrFalse('skip-consent', values['skip-consent'])
    const requireMfa = trueOrFalse('require-mfa', values['require-mfa'])
    const requirePar = trueOrFalse('require-par', values['require-par'])
    if (values['id-token-alg'] !== undefined) await inputError(() => checkIdTokenAlg(values['id-token-alg']))
    const logoutUri = values['backchannel-logout-uri']
    const logoutSid = values['backchannel-logout-session-required']
    if (logoutUri) await inputError(async () => checkBackchannelLogoutUri(logoutUri, 'operator'))
    const logout = values['post-logout-redirect-uri']
    if (logout?.includes('none') && logout.length > 1) throw new UsageError('--post-logout-redirect-uri none removes them all; give it alone')
    const logo = logoFile(values['logo-file'])
    const launch = launchUrl(values['launch-url'])
    // One transaction: every check first, then the changes; a bad value (an unknown group) changes nothing.
    const { view, changed } = await withStore((store) =>
      store.transaction(async () => {
        // Read under the row's lock: two updates at once (two shells, two instances) each see the other's change.
        const client = (await store.clients.lockClient(id)) ? await findClient(store, id) : undefined
        if (!client) throw new UsageError(`no client with id "${escapeForTerminal(id)}"`)
        let redirectUris = values['redirect-uri'] ?? client.redirectUris
        for (const uri of values['remove-redirect-uri'] ?? []) {
          if (!redirectUris.includes(uri)) throw new UsageError(`${escapeForTerminal(uri)} is not a redirect URI of client ${escapeForTerminal(id)}`)
          redirectUris = redirectUris.filter((u) => u !== uri)
        }
        redirectUris = [...redirectUris, ...(values['add-redirect-uri'] ?? [])]
        const next = {
          name: values.name ?? client.name,
          redirectUris,
          postLogoutRedirectUris: logout === undefined ? client.postLogoutRedirectUris : logout[0] === 'none' ? [] : logout,
          skipConsent: skipConsent ?? client.skipConsent,
          requireMfa: requireMfa ?? client.requireMfa,
          idTokenAlg: values['id-token-alg'] ?? client.idTokenAlg,
          public: client.public,
          grantTypes: values.grant ?? client.grantTypes,
          // New grants without client_credentials drop the allowed scopes with it.
          allowedScopes: values['allowed-scope'] ?? (values.grant && !values.grant.includes('client_credentials') ? [] : client.allowedScopes),
          requirePar: requirePar ?? client.requirePar,
          authMethod: values['auth-method'] === 'client_secret' ? null : (values['auth-method'] ?? client.authMethod),
          // New keys replace the old: a file, or a URL, never both.
          jwks: values['jwks-file'] !== undefined ? jwksFile(values['jwks-file'])! : values['jwks-uri'] !== undefined || values['auth-method'] === 'client_secret' ? null : client.jwks,
          jwksUri: values['jwks-uri'] ?? (values['jwks-file'] !== undefined || values['auth-method'] === 'client_secret' ? null : client.jwksUri),
        }
        // It has no secret to go back to (a public client is made another way): refused, not turned public.
        if (client.authMethod === 'private_key_jwt' && values['auth-method'] === 'client_secret') throw new UsageError('a private_key_jwt app has no secret to go back to; delete it and create it again')
        const keys = await inputError(() => checkKeys(next))
        const grants = await inputError(() => checkGrants(store, next))
        const checked = await inputError(() => checkClientOptions({ ...next, ...grants }))
        const groupsNow = await store.groups.allowedGroups(id)
        const groups = values['allowed-group'] === undefined ? groupsNow : await allowedGroups(store, values['allowed-group'])
        // --backchannel-logout-uri '' removes it; the flag alone keeps the URI and requires sid.
        const backchannel = logoutUri !== undefined ? logoutUri || null : client.backchannelLogoutUri
        if (logoutSid && backchannel === null) throw new UsageError('--backchannel-logout-session-required needs a --backchannel-logout-uri')
        const sidRequired = logoutUri !== undefined || logoutSid !== undefined ? (logoutSid ?? false) : client.backchannelLogoutSessionRequired
        const introspects = values.introspect === undefined ? client.introspects : await inputError(() => checkIntrospects(store, values.introspect!, client.public))
        const changed = [
          checked.name !== client.name && 'name',
          !sameList(checked.redirectUris, client.redirectUris) && 'redirect_uris',
          !sameList(checked.postLogoutRedirectUris, client.postLogoutRedirectUris) && 'post_logout_redirect_uris',
          next.skipConsent !== client.skipConsent && 'skip_consent',
          next.requireMfa !== client.requireMfa && 'require_mfa',
          next.idTokenAlg !== client.idTokenAlg && 'id_token_signed_response_alg',
          !sameList([...groups].sort(), [...groupsNow].sort()) && 'allowed_groups',
          !sameList([...introspects].sort(), [...client.introspects].sort()) && 'introspects',
          backchannel !== client.backchannelLogoutUri && 'backchannel_logout_uri',
          sidRequired !== client.backchannelLogoutSessionRequired && 'backchannel_logout_session_required',
          !sameList(grants.grantTypes, client.grantTypes) && 'grant_types',
          !sameList(grants.allowedScopes, client.allowedScopes) && 'allowed_scopes',
          next.requirePar !== client.requirePar && 'require_pushed_authorization_requests',
          logo !== undefined && (logo === null ? client.logoEtag !== null : etagOf(logo) !== client.logoEtag) && 'logo',
          launch !== undefined && launch !== client.launchUrl && 'launch_url',
          (keys.authMethod !== client.authMethod || keys.jwks !== client.jwks || keys.jwksUri !== client.jwksUri) && 'keys',
        ].filter((x): x is string => x !== false)
        // SPEC: a change that changes nothing is said so, and records nothing.
        if (changed.length === 0) return { view: await viewWithGroups(store, client), changed }
        await inputError(() => updateClient(store, id, next))
        if (changed.includes('allowed_groups')) await setAllowedGroups({ store }, id, groups)
        if (changed.includes('backchannel_logout_uri') || changed.includes('backchannel_logout_session_required'))
          await inputError(() => setBackchannelLogout(store, id, { uri: backchannel, sessionRequired: sidRequired }))
        if (changed.includes('introspects')) await inputError(() => setIntrospects(store, client, introspects))
        if (changed.includes('logo')) await setClientLogo(store, id, logo!, Date.now())
        if (changed.includes('launch_url')) await setLaunchUrl(store, id, launch!)
        await cliAudit(store, 'client.updated', { clientId: id, detail: { changed: changed.join(' ') } })
        return { view: await viewWithGroups(store, (await findClient(store, id))!), changed }
      }),
    )
    if (changed.length === 0) {
      const note = `nothing to change: client ${escapeForTerminal(id)} already has these options\n`
      if (!json) return void process.stdout.write(note)
      process.stderr.write(`latchkey: ${note}`)
    }
    for (const uri of insecureRedirectUris([...view.redirect_uris, ...view.post_logout_redirect_uris]))
      if (changed.length) process.stderr.write(`latchkey: warning: ${escapeForTerminal(uri)} is plain http on a non-loopback host; use https outside development\n`)
    printJson(view)
  },
})

const list = command({
  name: 'list',
  summary: 'the registered apps with their options and allowed groups',
  options: {},
  examples: ['client list', 'client list --json'],
  json: 'an array of the apps, without secrets',
  async run({ json }) {
    const clients = await withStore(async (store) => Promise.all((await listClients(store)).map((c) => viewWithGroups(store, c))))
    if (json) return printJson(clients)
    if (clients.length === 0) return void process.stdout.write('no clients\n')
    printTable(
      clients.map((c) => ({
        client_id: c.client_id,
        name: c.name,
        public: String(c.public),
        skip_consent: String(c.skip_consent),
        require_mfa: String(c.require_mfa),
        allowed_groups: c.allowed_groups.length ? c.allowed_groups.join(' ') : '(every user)',
        redirect_uris: c.redirect_uris.join(' '),
      })),
    )
  },
})

const remove = command({
  name: 'delete',
  args: 'ID',
  positionals: 1,
  summary: 'delete an app with its grants, tokens and settings',
  options: {},
  examples: ['client delete d2844b790e7041724ccbcbfa'],
  json: '{client_id, deleted: true}',
  async run({ positionals, json }) {
    const id = positionals[0]
    if (!id) throw new UsageError('client delete needs the app\'s ID; see latchkey client delete --help')
    if (!(await withStore(async (store) => (await deleteClient(store, id)) && (await cliAudit(store, 'client.deleted', { clientId: id }), true)))) throw new UsageError(`no client with id "${escapeForTerminal(id)}"`)
    if (json) return printJson({ client_id: id, deleted: true })
    process.stdout.write(`deleted client ${escapeForTerminal(id)}\n`)
  },
})

const rotate = command({
  name: 'rotate-secret',
  args: 'ID',
  positionals: 1,
  summary: 'a new secret (shown this once); the old one stops working at once',
  options: {},
  examples: ['client rotate-secret d2844b790e7041724ccbcbfa'],
  json: '{client_id, client_secret} (the default output too)',
  async run({ positionals }) {
    const id = positionals[0]
    if (!id) throw new UsageError('client rotate-secret needs the app\'s ID; see latchkey client rotate-secret --help')
    const secret = await withStore(async (store) => {
      const made = await rotateSecret(store, id)
      if (made) await cliAudit(store, 'client.secret_rotated', { clientId: id })
      return made
    })
    if (!secret) throw new UsageError(`no confidential client with id "${escapeForTerminal(id)}"`)
    printJson({ client_id: id, client_secret: secret })
  },
})

const registrationToken = command({
  name: 'registration-token',
  summary: 'a 7-day token for DYNAMIC_REGISTRATION=token (RFC 7591)',
  options: {},
  examples: ['client registration-token'],
  json: '{initial_access_token, expires_at} (the default output too)',
  async run() {
    // RFC 7591 §3's initial access token, for DYNAMIC_REGISTRATION=token: shown once, kept hashed.
    const { token, expiresAt } = await withStore(async (store) => {
      const issued = await issueRegistrationToken({ store }, Date.now())
      await cliAudit(store, 'registration_token.issued', { detail: { expires_at: new Date(issued.expiresAt).toISOString() } })
      return issued
    })
    printJson({ initial_access_token: token, expires_at: new Date(expiresAt).toISOString() })
  },
})

/** `latchkey client …`: the apps (OAuth clients). */
export const clientCommands: CommandGroup = {
  name: 'client',
  summary: 'apps (OAuth clients): register, change, list, delete, rotate secrets',
  commands: [create, update, list, remove, rotate, registrationToken],
}
