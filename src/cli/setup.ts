import { newSetupLink } from '../admin/setup-link'
import { UsageError, linkConfig, parse, withStore } from './common'

/**
 * `latchkey setup-link`: a new link to create the first admin (SPEC "First run"), replacing the
 * one the server logged; refused once an enabled admin exists (/setup is gone by then).
 */
export async function setupLinkCommand(args: string[]): Promise<void> {
  parse(args, {}, 0)
  const url = await withStore(async (store, config) => {
    if (await store.users.adminExists()) return undefined
    return newSetupLink(store, (await linkConfig(store, config)).issuer, Date.now())
  })
  if (!url) throw new UsageError('this server already has an admin: sign in at /admin, or make one with `latchkey user create --admin` or `latchkey user update ID --admin true`')
  process.stdout.write(`${url}\n`)
}
