import type { TestApp } from '../helpers'
import { addClient, addUser, bearer, mintToken } from '../helpers'

export { mintToken }

export async function settingsWorld(t: TestApp) {
  const appA = (await addClient(t, { name: 'App A' })).client
  const appB = (await addClient(t, { name: 'App B' })).client
  const ann = await addUser(t, 'ann@example.com', 'Ann')
  const bob = await addUser(t, 'bob@example.com', 'Bob')
  return {
    appA,
    appB,
    ann,
    bob,
    annA: await mintToken(t, appA.id, ann.id),
    annB: await mintToken(t, appB.id, ann.id),
    bobA: await mintToken(t, appA.id, bob.id),
  }
}

export function api(t: TestApp, token: string | undefined) {
  const auth = token ? bearer(token) : {}
  return {
    list: (query = '') => t.handle(`/api/settings${query}`, { headers: auth }),
    get: (key: string, query = '', headers: Record<string, string> = {}) =>
      t.handle(`/api/settings/${key}${query}`, { headers: { ...auth, ...headers } }),
    post: (body: unknown, headers: Record<string, string> = {}) =>
      t.handle('/api/settings', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth, ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
    del: (key: string, query: string, headers: Record<string, string> = {}) =>
      t.handle(`/api/settings/${key}${query}`, { method: 'DELETE', headers: { ...auth, ...headers } }),
  }
}

export function dump(t: TestApp) {
  return t.rows('SELECT user_id, client_id, key, value, updated_at FROM settings ORDER BY user_id, client_id, key')
}
