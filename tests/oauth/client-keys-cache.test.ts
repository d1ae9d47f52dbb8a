import { expect, test } from 'bun:test'
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose'
import { createClient, findClient, updateClient } from '../../src/oauth/clients'
import { createResource } from '../../src/oauth/resources'
import { createTestApp, ORIGIN, type TestApp } from '../helpers'

/**
 * Issue 38 "Speed": a `--jwks-file` client's key set is made once (jose keeps a set's imported
 * keys in it) and used for its next assertions; a JWKS changed by `client update` is a new set
 * at once — the old key is refused from the next request on.
 */
const TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'

async function key(kid: string) {
  const pair = await generateKeyPair('ES256', { extractable: true })
  return { kid, privateKey: pair.privateKey, jwk: { ...(await exportJWK(pair.publicKey)), kid, alg: 'ES256' } }
}
function assertion(t: TestApp, clientId: string, k: { kid: string; privateKey: CryptoKey }) {
  const now = Math.floor(t.clock.now() / 1000)
  return new SignJWT({ jti: crypto.randomUUID() }).setProtectedHeader({ alg: 'ES256', kid: k.kid }).setIssuer(clientId).setSubject(clientId).setAudience(ORIGIN).setIssuedAt(now).setExpirationTime(now + 60).sign(k.privateKey)
}

test('one key set per JWKS, reused; a changed JWKS takes effect on the next request', async () => {
  const t = await createTestApp()
  await createResource(t.store, { uri: 'https://reports.example', name: 'Reports', scopes: ['reports:read=Read reports'] }, t.clock.now())
  const [first, second] = [await key('first'), await key('second')]
  const input = { name: 'Job', redirectUris: [], public: false, skipConsent: false, grantTypes: ['client_credentials'], allowedScopes: ['reports:read'], authMethod: 'private_key_jwt' }
  const { client } = await createClient(t.store, { ...input, jwks: JSON.stringify({ keys: [first.jwk] }) }, t.clock.now())
  const set = await t.ctx.clientKeys.keysOf(client)
  expect(set).toBeDefined()
  expect(await t.ctx.clientKeys.keysOf((await findClient(t.store, client.id))!)).toBe(set!)

  const token = async (k: typeof first) =>
    (await t.handle('/api/oauth/token', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'reports:read', client_assertion_type: TYPE, client_assertion: await assertion(t, client.id, k) }) })).status
  expect(await token(first)).toBe(200)
  expect(await updateClient(t.store, client.id, { ...client, ...input, requireMfa: false, requirePar: false, postLogoutRedirectUris: [], jwks: JSON.stringify({ keys: [second.jwk] }), jwksUri: null })).toBe(true)
  expect(await token(first)).toBe(401)
  expect(await token(second)).toBe(200)
  expect(await t.ctx.clientKeys.keysOf((await findClient(t.store, client.id))!)).not.toBe(set!)
})
