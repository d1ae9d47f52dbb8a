import { SigningKeys } from '../oidc/keys'
import { systemClock } from '../lib/clock'
import { signerOf, type SigningKeyRecord } from '../db/store'
import { escapeForTerminal } from '../lib/text'
import { command, type CommandGroup } from './command'
import { UsageError, cliAudit, printJson, printTable, withStore } from './common'

/** What `keys list` shows of a key: never its private half. `current`: it is the key that signs now. */
function view(key: SigningKeyRecord, signer: string | undefined) {
  return { kid: key.kid, alg: key.alg, created_at: new Date(key.createdAt).toISOString(), current: key.kid === signer }
}

const list = command({
  name: 'list',
  summary: 'the ID-token signing keys',
  options: {},
  examples: ['keys list', 'keys list --json'],
  json: '[{kid, alg, created_at, current}]',
  async run({ json }) {
    const keys = await withStore(async (store, config) => {
      // The server makes the first key (and the next) at start; a fresh database has them after any command.
      await new SigningKeys(store, systemClock, config.accessTokenTtl * 1000).ensure()
      const all = await store.keys.listSigningKeys()
      // One key signs for each algorithm (RS256, and ES256 or EdDSA once a client uses them).
      const signers = new Set(all.map((k) => signerOf(all.filter((o) => o.alg === k.alg), systemClock.now())?.kid))
      return all.map((k) => view(k, signers.has(k.kid) ? k.kid : undefined))
    })
    if (json) return printJson(keys)
    printTable(keys.map((k) => ({ kid: k.kid, alg: k.alg, created_at: k.created_at, current: String(k.current) })))
  },
})

const rotate = command({
  name: 'rotate',
  summary: 'the published next key signs; older ones stay published',
  options: {},
  examples: ['keys rotate'],
  json: 'the new signing key {kid, alg, created_at, current} (the default output too)',
  async run() {
    const key = await withStore(async (store, config) => {
      const keys = new SigningKeys(store, systemClock, config.accessTokenTtl * 1000)
      await keys.ensure()
      const made = await keys.rotate()
      for (const key of made) await cliAudit(store, 'key.rotated', { detail: { kid: key.kid, alg: key.alg } })
      // RS256's is printed; the other algorithms' keys rotate with it.
      return made[0]!
    })
    const now = systemClock.now()
    printJson(view(key, key.signsFrom !== null && key.signsFrom <= now ? key.kid : undefined))
    if (key.signsFrom !== null && key.signsFrom > now)
      process.stderr.write(`latchkey: ${key.kid} signs from ${new Date(key.signsFrom).toISOString()}, once relying parties can have fetched it; the current key signs until then\n`)
  },
})

const remove = command({
  name: 'remove',
  args: 'KID',
  positionals: 1,
  summary: 'delete a key at once (a compromised one; never the signing key)',
  options: {},
  examples: ['keys remove NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs'],
  json: '{kid, removed: true} (the default output too)',
  async run({ positionals }) {
    const kid = positionals[0]
    if (!kid) throw new UsageError('keys remove needs a KID (see latchkey keys list)')
    const outcome = await withStore(async (store, config) => {
      const removal = await new SigningKeys(store, systemClock, config.accessTokenTtl * 1000).remove(kid)
      if (removal === 'removed') await cliAudit(store, 'key.removed', { detail: { kid } })
      return removal
    })
    if (outcome === 'unknown') throw new UsageError(`no signing key "${escapeForTerminal(kid)}"`)
    if (outcome === 'signing') throw new UsageError(`"${kid}" is the key that signs now; run latchkey keys rotate first, then remove it`)
    printJson({ kid, removed: true })
  },
})

/** `latchkey keys …`: the ID-token signing keys. */
export const keysCommands: CommandGroup = {
  name: 'keys',
  summary: 'ID-token signing keys: list, rotate, remove',
  commands: [list, rotate, remove],
}
