/**
 * The OAuth 2.0 and OpenID Connect endpoints as the API reference shows them: what each takes
 * and answers, with examples. Merged over what the routes' own schemas say (openapi.ts).
 */
import { bool, errorAnswer, formBody, int, jsonAnswer, jsonBody, object, page, query, redirect, str, strings, type Operation, type Schema } from './schema'

const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'

/** How a client proves who it is at the token, revocation, introspection, PAR and device endpoints. */
export const CLIENT_AUTH =
  'Client authentication, one of: client_secret_basic (HTTP Basic, client_id:client_secret, RFC 6749 §2.3.1); client_secret_post (client_id and client_secret in the body); ' +
  `private_key_jwt (client_assertion_type=${ASSERTION_TYPE} and client_assertion, a JWT signed with a key of the client's registered JWKS, chosen by kid: iss = sub = client_id, aud = this endpoint's URL or the issuer, exp at most 5 minutes ahead, a jti used once; RS256, PS256, ES256 or EdDSA — RFC 7523); ` +
  'none (a public client sends client_id alone).'

const clientAuthFields: Record<string, Schema> = {
  'client_id?': str('client_secret_post, private_key_jwt and public clients'),
  'client_secret?': str('client_secret_post'),
  'client_assertion_type?': str(`private_key_jwt: ${ASSERTION_TYPE}`),
  'client_assertion?': str('private_key_jwt: the signed JWT'),
}
const CLIENT_SECURITY: Array<Record<string, string[]>> = [{ clientBasic: [] }, {}]
const ASSERTED = { client_id: 'inventory-sync', client_assertion_type: ASSERTION_TYPE, client_assertion: 'eyJhbGciOiJFUzI1NiIsImtpZCI6ImsxIn0.eyJpc3Mi…' }
const POSTED = { client_id: '3f1c9e0b7a2d4e6f8a1b2c3d', client_secret: 'lk_cs_Qm9vb2tzaGVsZi1zZWNyZXQ' }

const tokenAnswer = object({
  access_token: str('opaque (lk_at_…), or a signed JWT (RFC 9068) for a resource that asks for JWTs'),
  token_type: str('Bearer', { const: 'Bearer' }),
  expires_in: int('seconds'),
  'refresh_token?': str('with authorization_code, refresh_token and the device grant; it rotates on every refresh'),
  scope: str('the granted scopes, space-separated'),
  'id_token?': str('with scope openid: an OpenID Connect ID token (RS256 unless the client chose ES256 or EdDSA)'),
})

const pollErrors =
  'Device grant polling (RFC 8628 §3.5): authorization_pending while the user has not answered, slow_down for a poll sooner than interval (the interval grows by 5 s), access_denied, expired_token.'

const token: Operation = {
  tags: ['OAuth'],
  summary: 'Tokens: exchange a code, refresh, a client’s own token, or a device’s poll',
  description:
    'grant_type=authorization_code (code, redirect_uri, code_verifier for PKCE — RFC 6749 §4.1.3, RFC 7636); refresh_token (refresh_token; scope may only narrow; the refresh token rotates, and a rotated one used again revokes the whole grant — RFC 6749 §6); ' +
    `client_credentials (scope among the client's allowed scopes, resource; no refresh token — RFC 6749 §4.4); ${DEVICE_GRANT} (device_code — RFC 8628 §3.4). ` +
    'resource (RFC 8707) chooses the audience. ' +
    CLIENT_AUTH,
  security: CLIENT_SECURITY,
  requestBody: formBody(
    object(
      {
        grant_type: str('authorization_code, refresh_token, client_credentials or ' + DEVICE_GRANT),
        'code?': str('authorization_code'),
        'redirect_uri?': str('authorization_code: the one the code was asked with'),
        'code_verifier?': str('authorization_code with PKCE (S256)'),
        'refresh_token?': str('refresh_token'),
        'device_code?': str('the device grant'),
        'scope?': str('space-separated'),
        'resource?': str('RFC 8707: the resource the token is for'),
        ...clientAuthFields,
      },
      undefined,
      true,
    ),
    {
      authorization_code: {
        summary: 'A code, client_secret_basic (the secret in the Authorization header)',
        value: { grant_type: 'authorization_code', code: 'lk_ac_x1XkTzKq6b0', redirect_uri: 'https://photos.example/callback', code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk' },
      },
      public_client: {
        summary: 'A code, a public client (none)',
        value: { grant_type: 'authorization_code', code: 'lk_ac_x1XkTzKq6b0', redirect_uri: 'http://127.0.0.1/callback', code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk', client_id: 'desktop-notes' },
      },
      refresh_token: { summary: 'A refresh, client_secret_post', value: { grant_type: 'refresh_token', refresh_token: 'lk_rt_4.Vb2Jx0…', ...POSTED } },
      client_credentials: { summary: 'A client’s own token, private_key_jwt', value: { grant_type: 'client_credentials', scope: 'inventory:read', resource: 'https://inventory.example', ...ASSERTED } },
      device_code: { summary: 'A device’s poll, a public client', value: { grant_type: DEVICE_GRANT, device_code: 'lk_dc_Gm2fQ…', client_id: 'living-room-tv' } },
    },
    true,
  ),
  responses: {
    '200': jsonAnswer('The tokens (Cache-Control: no-store)', tokenAnswer, {
      access_token: 'lk_at_3d9Kf2…',
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: 'lk_rt_4.Vb2Jx0…',
      scope: 'openid email settings:read',
      id_token: 'eyJhbGciOiJSUzI1NiIsImtpZCI6Ij…',
    }),
    '400': errorAnswer('400', 'invalid_request, invalid_grant, invalid_scope, invalid_target, unauthorized_client, unsupported_grant_type. ' + pollErrors, {
      error: 'invalid_grant',
      error_description: 'refresh token was already used; every token of its grant is revoked',
    }),
    '401': errorAnswer('401', 'invalid_client: the client authentication failed (with WWW-Authenticate for Basic)', { error: 'invalid_client', error_description: 'client authentication failed' }),
    '429': errorAnswer('429', 'A grant refreshed more than 60 times a minute (Retry-After)', { error: 'invalid_grant', error_description: 'this grant was refreshed too often; try again in a minute' }),
  },
}

const revocation: Operation = {
  tags: ['OAuth'],
  summary: 'Revoke a token (RFC 7009): an access token, or a refresh token and its whole grant',
  description: 'Answers 200 whether the token was valid or not. ' + CLIENT_AUTH,
  security: CLIENT_SECURITY,
  requestBody: formBody(object({ token: str('the access or refresh token'), 'token_type_hint?': str('access_token or refresh_token (a hint; the token says which it is)'), ...clientAuthFields }, undefined, true), {
    refresh_token: { summary: 'A refresh token, client_secret_basic', value: { token: 'lk_rt_4.Vb2Jx0…', token_type_hint: 'refresh_token' } },
    public_client: { summary: 'An access token, a public client', value: { token: 'lk_at_3d9Kf2…', client_id: 'desktop-notes' } },
  }, true),
  responses: {
    '200': jsonAnswer('Revoked, or nothing to revoke', object({}), {}),
    '400': errorAnswer('400', 'invalid_request (no token, or a token of another client)', { error: 'invalid_request', error_description: 'the token was not issued to this client' }),
    '401': errorAnswer('401', 'invalid_client'),
  },
}

const introspection: Operation = {
  tags: ['OAuth'],
  summary: 'Token introspection (RFC 7662), for resource servers',
  description:
    'Confidential clients only: the token’s own client, a resource’s introspector clients, or a client allowed to read another’s tokens. An unknown, expired, revoked or foreign token is exactly {"active": false}. ' + CLIENT_AUTH,
  security: CLIENT_SECURITY,
  requestBody: formBody(object({ token: str('the access or refresh token'), 'token_type_hint?': str('access_token or refresh_token'), ...clientAuthFields }, undefined, true), {
    basic: { summary: 'client_secret_basic', value: { token: 'lk_at_3d9Kf2…' } },
    private_key_jwt: { summary: 'private_key_jwt', value: { token: 'lk_at_3d9Kf2…', ...ASSERTED } },
  }, true),
  responses: {
    '200': jsonAnswer(
      'What the token is',
      object({
        active: bool(),
        'scope?': str(),
        'client_id?': str(),
        'sub?': str('the user; for a client’s own token, the client id'),
        'exp?': int(),
        'iat?': int(),
        'token_type?': str(),
        'iss?': str(),
        'aud?': str('the resource the token is for (RFC 8707)'),
        'groups?': strings('with scope groups'),
        'auth_time?': int('when the user signed in'),
        'amr?': strings('how the user signed in (RFC 8176)'),
      }),
      { active: true, scope: 'openid email', client_id: '3f1c9e0b7a2d4e6f8a1b2c3d', sub: '0b6f7d3e-5a1c-4f9e-8d2b-7c6a5e4f3d2c', exp: 1795000000, iat: 1794996400, token_type: 'Bearer', iss: 'https://id.example.com', auth_time: 1794990000, amr: ['pwd', 'otp'] },
    ),
    '400': errorAnswer('400', 'invalid_request'),
    '401': errorAnswer('401', 'invalid_client: not authenticated, or a public client', { error: 'invalid_client', error_description: 'introspection is for confidential clients (authenticate with the client secret)' }),
  },
}

const authorizationParameters: Record<string, Schema> = {
  response_type: str('code'),
  client_id: str('a registered client id, or an https:// URL of a client ID metadata document'),
  redirect_uri: str('exactly one of the client’s redirect URIs'),
  'scope?': str('space-separated: openid profile email groups settings:read settings:write, and resources’ scopes'),
  'state?': str('returned unchanged'),
  'code_challenge?': str('PKCE (RFC 7636): required for public clients'),
  'code_challenge_method?': str('S256'),
  'nonce?': str('OpenID Connect: copied into the id_token'),
  'prompt?': str('none, login or consent'),
  'max_age?': int('seconds since sign-in before asking again'),
  'resource?': str('RFC 8707: the resource the token is for'),
}

const par: Operation = {
  tags: ['OAuth'],
  summary: 'Pushed authorization request (RFC 9126)',
  description: 'Every authorization parameter in the body, checked as /oauth/authorize would; then /oauth/authorize?client_id=…&request_uri=… uses it once, within a minute. ' + CLIENT_AUTH,
  security: CLIENT_SECURITY,
  requestBody: formBody(object({ ...authorizationParameters, ...clientAuthFields }, undefined, true), {
    confidential: {
      summary: 'client_secret_basic',
      value: { response_type: 'code', client_id: '3f1c9e0b7a2d4e6f8a1b2c3d', redirect_uri: 'https://photos.example/callback', scope: 'openid email', state: 'af0ifjsldkj', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' },
    },
  }, true),
  responses: {
    '201': jsonAnswer('The request_uri to send to /oauth/authorize', object({ request_uri: str('urn:ietf:params:oauth:request_uri:…'), expires_in: int('60') }), { request_uri: 'urn:ietf:params:oauth:request_uri:Xq2b9LxRk0', expires_in: 60 }),
    '400': errorAnswer('400', 'invalid_request, invalid_scope, invalid_target, unauthorized_client', { error: 'invalid_request', error_description: 'The link you followed asks to return to an address this application did not register (redirect_uri).' }),
    '401': errorAnswer('401', 'invalid_client'),
  },
}

const deviceAuthorization: Operation = {
  tags: ['OAuth'],
  summary: 'Device authorization (RFC 8628): a code for the user to enter at /device',
  description: 'For clients allowed the device grant, public or confidential. Then poll the token endpoint with grant_type=' + DEVICE_GRANT + ' every interval seconds. ' + CLIENT_AUTH,
  security: CLIENT_SECURITY,
  requestBody: formBody(object({ 'scope?': str('space-separated'), 'resource?': str('RFC 8707'), ...clientAuthFields }, undefined, true), {
    public_client: { summary: 'A public client', value: { client_id: 'living-room-tv', scope: 'openid settings:read' } },
  }, true),
  responses: {
    '200': jsonAnswer(
      'The codes',
      object({ device_code: str('for polling'), user_code: str('8 letters, shown XXXX-XXXX'), verification_uri: str(), verification_uri_complete: str(), expires_in: int('600'), interval: int('5') }),
      { device_code: 'lk_dc_Gm2fQ…', user_code: 'BDWP-HQMT', verification_uri: 'https://id.example.com/device', verification_uri_complete: 'https://id.example.com/device?user_code=BDWP-HQMT', expires_in: 600, interval: 5 },
    ),
    '400': errorAnswer('400', 'invalid_request, invalid_scope, unauthorized_client (not allowed the device grant)', { error: 'unauthorized_client', error_description: `this client may not use the grant ${DEVICE_GRANT}` }),
    '401': errorAnswer('401', 'invalid_client'),
  },
}

const clientMetadata = object(
  {
    redirect_uris: strings('https://, or http:// on a loopback address'),
    'client_name?': str(),
    'token_endpoint_auth_method?': str('none, client_secret_basic (default) or client_secret_post'),
    'grant_types?': strings('authorization_code, refresh_token'),
    'response_types?': strings('code'),
    'id_token_signed_response_alg?': str('RS256 (default), ES256 or EdDSA'),
    'backchannel_logout_uri?': str('where a logout token is POSTed when a session ends (see the webhook backchannelLogout)'),
    'backchannel_logout_session_required?': bool(),
  },
  'RFC 7591 §2 client metadata; other members are accepted and ignored',
  true,
)
const registered = {
  client_id: '9a7c2e4b6d8f0a1c3e5b7d9f',
  client_name: 'Notes for Mac',
  redirect_uris: ['http://127.0.0.1/callback'],
  token_endpoint_auth_method: 'client_secret_basic',
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  id_token_signed_response_alg: 'RS256',
  registration_client_uri: 'https://id.example.com/api/oauth/register/9a7c2e4b6d8f0a1c3e5b7d9f',
}
const clientAnswer = object(
  {
    client_id: str(),
    client_name: str(),
    redirect_uris: strings(),
    token_endpoint_auth_method: str(),
    grant_types: strings(),
    response_types: strings(),
    id_token_signed_response_alg: str(),
    'backchannel_logout_uri?': str(),
    'backchannel_logout_session_required?': bool(),
    registration_client_uri: str('RFC 7592: read (GET) or delete (DELETE) with the registration access token'),
  },
  undefined,
  true,
)
const REGISTRATION_BEARER = { name: 'client_id', in: 'path' as const, required: true, schema: str(), example: registered.client_id }

const registration: Record<string, Operation> = {
  'post /api/oauth/register': {
    tags: ['OAuth'],
    summary: 'Dynamic client registration (RFC 7591)',
    description:
      'When the server allows it: open to anyone (throttled per client address), or with an initial access token from the administrator (Authorization: Bearer). Such apps are labelled “not verified by your administrator” on the consent page and are deleted after 30 days unused.',
    security: [{}, { bearer: [] }],
    requestBody: jsonBody(clientMetadata, { client_name: 'Notes for Mac', redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'client_secret_basic' }),
    responses: {
      '201': jsonAnswer(
        'Registered. client_secret only for a confidential client (a public one has no such member)',
        { ...clientAnswer, properties: { ...(clientAnswer.properties as object), client_id_issued_at: int(), 'client_secret': str(), client_secret_expires_at: int('0: never'), registration_access_token: str('for RFC 7592') } },
        { ...registered, client_id_issued_at: 1794996400, client_secret: 'lk_cs_Qm9vb2tzaGVsZi1zZWNyZXQ', client_secret_expires_at: 0, registration_access_token: 'lk_ra_u7Yh3Kd0…' },
      ),
      '400': errorAnswer('400', 'invalid_redirect_uri or invalid_client_metadata', { error: 'invalid_redirect_uri', error_description: 'redirect URI "http://photos.example/cb" must be https:// or http:// on a loopback address' }),
      '401': errorAnswer('401', 'invalid_token: an initial access token is required, or is invalid or expired', { error: 'invalid_token', error_description: 'the initial access token is invalid or expired' }),
      '429': errorAnswer('429', 'Too many registrations from this address (Retry-After)', { error: 'too_many_requests', error_description: 'too many registrations from this address; try again later' }),
    },
  },
  'get /api/oauth/register/{client_id}': {
    tags: ['OAuth'],
    summary: 'Read a dynamically registered client (RFC 7592), with its registration access token',
    security: [{ bearer: [] }],
    parameters: [REGISTRATION_BEARER],
    responses: {
      '200': jsonAnswer('The registration', clientAnswer, registered),
      '401': errorAnswer('401', 'invalid_token', { error: 'invalid_token', error_description: 'the registration access token is invalid' }),
    },
  },
  'delete /api/oauth/register/{client_id}': {
    tags: ['OAuth'],
    summary: 'Delete a dynamically registered client and all it was granted (RFC 7592)',
    security: [{ bearer: [] }],
    parameters: [REGISTRATION_BEARER],
    responses: {
      '204': { description: 'Deleted' },
      '401': errorAnswer('401', 'invalid_token', { error: 'invalid_token', error_description: 'the registration access token is invalid' }),
    },
  },
}

const authorize: Operation = {
  tags: ['OAuth'],
  summary: 'Authorization endpoint: the user signs in and consents, then returns to the app',
  description:
    'A browser is sent here (RFC 6749 §4.1.1). Unless the client and redirect_uri are verified, it shows an error page and never redirects. Then it redirects to redirect_uri with code (or error), state and iss (RFC 9207). With request_uri (from the PAR endpoint) the other parameters come from the pushed request.',
  parameters: [
    ...Object.entries(authorizationParameters).map(([name, schema]) => query(name.replace('?', ''), schema, !name.endsWith('?'))),
    query('request_uri', str('from the PAR endpoint (RFC 9126)')),
  ],
  responses: {
    '200': page('The sign-in or consent page'),
    '303': redirect('Back to the app: code, state and iss — or error (access_denied, login_required, consent_required, invalid_scope…), state and iss', 'https://photos.example/callback?code=lk_ac_x1XkTzKq6b0&state=af0ifjsldkj&iss=https%3A%2F%2Fid.example.com'),
    '400': page('An unknown client or a redirect_uri not registered: an error page, never a redirect'),
  },
}

const endSession: Operation = {
  tags: ['OpenID Connect'],
  summary: 'Sign out (OpenID Connect RP-Initiated Logout 1.0)',
  description:
    'A browser is sent here. A signed-in user is asked to confirm; then the session ends (every app that got an id_token in it receives a back-channel logout) and the browser returns to post_logout_redirect_uri with state — only when that URI is registered for the client named by client_id or id_token_hint.',
  parameters: [
    query('id_token_hint', str('an id_token the app got: names the client')),
    query('client_id', str()),
    query('post_logout_redirect_uri', str('one the client registered')),
    query('state', str('returned unchanged')),
  ],
  responses: {
    '200': page('“Sign out?” for a signed-in user; “You are signed out” otherwise'),
    '303': redirect('Nobody signed in and a registered return: straight back', 'https://photos.example/signed-out?state=af0ifjsldkj'),
  },
}

const userinfo: Operation = {
  tags: ['OpenID Connect'],
  summary: 'The user the access token is for (OpenID Connect Core §5.3)',
  description: 'id always; email with scope email; full_name and avatar_url with profile; with openid also sub, email_verified, name, picture; groups with groups. A client’s own token (client_credentials) is refused.',
  security: [{ bearer: [] }],
  responses: {
    '200': {
      description: 'The user',
      content: {
        'application/json': {
          example: { id: '0b6f7d3e-5a1c-4f9e-8d2b-7c6a5e4f3d2c', email: 'ann@example.com', full_name: 'Ann Lee', sub: '0b6f7d3e-5a1c-4f9e-8d2b-7c6a5e4f3d2c', email_verified: true, name: 'Ann Lee', groups: ['family'] },
        },
      },
    },
    '401': errorAnswer('401', 'invalid_token (WWW-Authenticate names the resource metadata)'),
  },
}

/** Every OAuth and OpenID Connect operation this file describes, by "method path". */
export const OAUTH_OPERATIONS: Record<string, Operation> = {
  'get /oauth/authorize': authorize,
  'post /api/oauth/token': token,
  'post /api/oauth/revoke': revocation,
  'post /api/oauth/introspect': introspection,
  'post /api/oauth/par': par,
  'post /api/oauth/device_authorization': deviceAuthorization,
  ...registration,
  'get /oauth/logout': endSession,
  'get /api/oauth/userinfo': userinfo,
}
