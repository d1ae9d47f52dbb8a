import { SigningKeys } from '../oidc/keys'
import { systemClock } from '../lib/clock'
import type { SigningKeyRecord } from '../db/store'
import { UsageError, parse, printJson, printTable, withStore } from './common'

/** What `keys list` shows of a key: never its private half. */
function view(key: SigningKeyRecord) {
  return { kid: key.kid, alg: key.alg, created_at: new Date(key.createdAt).toISOString(), current: key.retiredAt === null }
}

export async function keysCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args
  switch (sub) {
    case 'list': {
      const { values } = parse(rest, { json: { type: 'boolean' } })
      const keys = await withStore(async (store, config) => {
        // The server makes the first key at start; a fresh database has one after any command.
        await new SigningKeys(store, systemClock, config.accessTokenTtl * 1000).ensure()
        return (await store.keys.listSigningKeys()).map(view)
      })
      if (values.json) return printJson(keys)
      printTable(keys.map((k) => ({ kid: k.kid, alg: k.alg, created_at: k.created_at, current: String(k.current) })))
      return
    }
    case 'rotate': {
      parse(rest, {})
      const key = await withStore(async (store, config) => {
        const keys = new SigningKeys(store, systemClock, config.accessTokenTtl * 1000)
        await keys.ensure()
        return keys.rotate()
      })
      printJson(view(key))
      return
    }
    default:
      throw new UsageError(`unknown keys command "${sub ?? ''}" (list, rotate)`)
  }
}
