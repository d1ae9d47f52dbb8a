import { newSetupLink } from '../admin/setup-link'
import { command } from './command'
import { UsageError, linkConfig, printJson, withStore } from './common'

/**
 * `latchkey setup-link`: a new link to create the first admin (SPEC "First run"), replacing the
 * one the server logged; refused once an enabled admin exists (/setup is gone by then).
 */
export const setupLinkCommand = command({
  name: 'setup-link',
  summary: 'a new one-hour link to create the first admin (while there is none); the previous link stops working',
  options: {},
  examples: ['setup-link'],
  json: '{url}',
  async run({ json }) {
    const url = await withStore(async (store, config) => {
      if (await store.users.adminExists()) return undefined
      return newSetupLink(store, (await linkConfig(store, config)).issuer, Date.now())
    })
    if (!url) throw new UsageError('this server already has an admin: sign in at /admin, or make one with `latchkey user create --admin` or `latchkey user update USER --admin true`')
    if (json) return printJson({ url })
    process.stdout.write(`${url}\n`)
  },
})
