import { beforeEach, describe, expect, test } from 'bun:test'
import { checkIntrospects, createClient, findClient, setIntrospects } from '../../src/oauth/clients'
import { addClient, addUser, mintTokenPair, type TestApp, createTestApp, CALLBACK } from '../helpers'

/**
 * Issue 33 finding 6 (SPEC, Introspection): a resource server — a mail server such as Dovecot, an
 * Apache module — validates the users' tokens of other apps with credentials of its own, when it
 * was given `--introspect APP…` or `--introspect '*'`.
 */
let t: TestApp
let mail: Awaited<ReturnType<typeof addClient>>
let webmail: Awaited<ReturnType<typeof addClient>>
let other: Awaited<ReturnType<typeof addClient>>
let bystander: Awaited<ReturnType<typeof addClient>>
let userId: string

beforeEach(async () => {
  t = await createTestApp()
  webmail = await addClient(t, { name: 'Webmail' })
  other = await addClient(t, { name: 'Photos' })
  mail = await addClient(t, { name: 'Dovecot' })
  bystander = await addClient(t, { name: 'Grafana' })
  userId = (await addUser(t)).id
})

const basic = (c: Awaited<ReturnType<typeof addClient>>) => `Basic ${btoa(`${c.client.id}:${c.secret}`)}`
async function introspect(as: Awaited<ReturnType<typeof addClient>>, token: string) {
  const res = await t.handle('/api/oauth/introspect', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(as) },
    body: new URLSearchParams({ token }),
  })
  expect(res.status).toBe(200)
  expect(res.headers.get('cache-control')).toBe('no-store')
  return (await res.json()) as Record<string, unknown>
}
const give = async (to: Awaited<ReturnType<typeof addClient>>, ids: string[]) =>
  expect(await setIntrospects(t.store, (await findClient(t.store, to.client.id))!, await checkIntrospects(t.store, ids))).toBe(true)

describe('--introspect: a resource server reads the tokens of the apps it was given', () => {
  test('refused before; allowed after for the named app only; a client not named still gets {active: false}', async () => {
    const token = (await mintTokenPair(t, webmail.client.id, userId, 'openid email')).access_token
    const photos = (await mintTokenPair(t, other.client.id, userId, 'openid')).access_token
    expect(await introspect(mail, token)).toEqual({ active: false })
    await give(mail, [webmail.client.id])
    expect((await t.store.clients.findClient(mail.client.id))!.introspects).toEqual([webmail.client.id])
    expect(await introspect(mail, token)).toMatchObject({ active: true, client_id: webmail.client.id, sub: userId, scope: 'openid email', token_type: 'Bearer' })
    // Another app's token, and any client not given the right, learn nothing.
    expect(await introspect(mail, photos)).toEqual({ active: false })
    expect(await introspect(bystander, token)).toEqual({ active: false })
    // The app itself still reads its own.
    expect(await introspect(webmail, token)).toMatchObject({ active: true })
  })

  test("'*': every client's tokens; a revoked token is still {active: false}", async () => {
    const pair = await mintTokenPair(t, webmail.client.id, userId, 'openid')
    const photos = (await mintTokenPair(t, other.client.id, userId, 'openid')).access_token
    await give(mail, ['*'])
    expect(await introspect(mail, pair.access_token)).toMatchObject({ active: true, client_id: webmail.client.id })
    expect(await introspect(mail, photos)).toMatchObject({ active: true, client_id: other.client.id })
    const revoked = await t.handle('/api/oauth/revoke', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(webmail) },
      body: new URLSearchParams({ token: pair.refresh_token! }),
    })
    expect(revoked.status).toBe(200)
    expect(await introspect(mail, pair.access_token)).toEqual({ active: false })
    // A refresh token is described to its own client only.
    expect(await introspect(mail, (await mintTokenPair(t, webmail.client.id, userId, 'openid')).refresh_token!)).toEqual({ active: false })
  })

  test('unknown ids, "*" beside ids and a public introspector are refused; deleting a named app drops it from the list', async () => {
    await expect(checkIntrospects(t.store, ['nope'])).rejects.toThrow('--introspect: no client with id "nope"')
    await expect(checkIntrospects(t.store, ['*', webmail.client.id])).rejects.toThrow("--introspect '*' (every client's tokens) stands alone")
    await expect(checkIntrospects(t.store, [webmail.client.id], true)).rejects.toThrow('a public client cannot introspect tokens')
    expect(await checkIntrospects(t.store, [webmail.client.id, webmail.client.id, ''])).toEqual([webmail.client.id])
    expect(await checkIntrospects(t.store, [''])).toEqual([])
    await expect(
      createClient(t.store, { name: 'Public', redirectUris: [CALLBACK], public: true, skipConsent: false, introspects: [webmail.client.id] }, t.clock.now()),
    ).rejects.toThrow('a public client cannot introspect tokens')
    await give(mail, [webmail.client.id, other.client.id])
    expect(await t.store.clients.deleteClient(webmail.client.id)).toBe(true)
    expect((await t.store.clients.findClient(mail.client.id))!.introspects).toEqual([other.client.id])
    expect((await t.store.clients.listClients()).find((c) => c.id === other.client.id)!.introspects).toEqual([])
  })
})
