import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp, createContext } from '../../src/app'
import { insertUser } from '../../src/accounts/users'
import { loadConfig } from '../../src/config'
import { openDb, type Db } from '../../src/db/client'
import { migrate } from '../../src/db/migrate'
import { manualClock } from '../../src/lib/clock'
import { createClient, deleteClient } from '../../src/oauth/clients'
import { deleteUser } from '../../src/accounts/users'
import { revokeAccess } from '../../src/oauth/consents'
import { nextTurn } from '../helpers'

/** The validated-token cache against a real file, with a second connection standing in for the CLI. */
let dir: string
let db: Db
let cli: Db
let ctx: ReturnType<typeof createContext>
let app: ReturnType<typeof createApp>
const clock = manualClock()

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'latchkey-tokens-'))
  const path = join(dir, 'db.sqlite')
  db = openDb(path)
  migrate(db.sqlite)
  cli = openDb(path)
  ctx = createContext({ db, config: loadConfig({ DATABASE_URL: path }), clock })
  app = createApp(ctx)
})

afterEach(() => {
  db.sqlite.close()
  cli.sqlite.close()
  rmSync(dir, { recursive: true, force: true })
})

async function setup() {
  const { client } = createClient(db, { name: 'A', redirectUris: ['https://a.example/cb'], public: false, skipConsent: false }, clock.now())
  const user = insertUser(db, { email: 'a@example.com', fullName: 'A', avatarUrl: null, passwordHash: 'x' }, clock.now())
  const { token } = await ctx.writer.write(() => ctx.tokens.issue({ clientId: client.id, userId: user.id, scope: 'email' }))
  return { client, user, token }
}

const userinfo = (token: string) =>
  app.handle(new Request('http://localhost/api/oauth/userinfo', { headers: { authorization: `Bearer ${token}` } }))

describe('the validated-token cache', () => {
  test('a valid token is served from the cache after the first check', async () => {
    const { token } = await setup()
    expect((await userinfo(token)).status).toBe(200)
    expect(ctx.tokens.cachedCount).toBe(1)
    expect((await userinfo(token)).status).toBe(200)
  })

  test('a user deleted by another process (the CLI) is rejected on the very next request', async () => {
    const { user, token } = await setup()
    expect((await userinfo(token)).status).toBe(200)
    deleteUser(cli, user.id)
    await nextTurn()
    expect((await userinfo(token)).status).toBe(401)
  })

  test('a client deleted by another process is rejected on the very next request', async () => {
    const { client, token } = await setup()
    expect((await userinfo(token)).status).toBe(200)
    deleteClient(cli, client.id)
    await nextTurn()
    expect((await userinfo(token)).status).toBe(401)
  })

  test('revoking access in this process is effective on the very next request', async () => {
    const { client, user, token } = await setup()
    expect((await userinfo(token)).status).toBe(200)
    await ctx.writer.write(() => revokeAccess(db, ctx.tokens, user.id, client.id))
    expect((await userinfo(token)).status).toBe(401)
  })

  test('a cached token expires with the token', async () => {
    const { token } = await setup()
    expect((await userinfo(token)).status).toBe(200)
    clock.advance(3600_000)
    expect((await userinfo(token)).status).toBe(401)
  })

  test('the cache is bounded', async () => {
    const { client, user } = await setup()
    const small = new (ctx.tokens.constructor as typeof import('../../src/oauth/tokens').AccessTokens)(db, clock, 3600, ctx.external, 3)
    const tokens = await ctx.writer.write(() =>
      Array.from({ length: 5 }, () => small.issue({ clientId: client.id, userId: user.id, scope: 'email' }).token),
    )
    for (const token of tokens) expect(small.validate(token)?.user.id).toBe(user.id)
    expect(small.cachedCount).toBe(3)
  })
})
