import { userByRef } from '../accounts/groups'
import { escapeForTerminal } from '../lib/text'
import { command } from './command'
import { UsageError, printJson, printTable, withStore } from './common'

const USER_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** `latchkey audit`: the audit log, newest first (at most 1,000). */
export const auditCommand = command({
  name: 'audit',
  summary: 'the audit log, newest first (at most 1,000 events)',
  options: {
    user: { type: 'string', arg: 'USER', help: "only this user's events (an id or an email)" },
    client: { type: 'string', arg: 'ID', help: "only this app's events" },
    since: { type: 'string', arg: 'ISO', help: 'only events since this date and time (ISO 8601)' },
  },
  examples: ['audit --user ann@example.com --since 2026-11-01T00:00:00Z'],
  json: '[{at, kind, user_id, client_id, address, user_agent, detail}]',
  async run({ values, json }) {
    const since = values.since === undefined ? undefined : Date.parse(values.since)
    if (since !== undefined && Number.isNaN(since)) throw new UsageError(`--since must be a date and time (ISO 8601), got "${escapeForTerminal(values.since!)}"`)
    const events = await withStore(async (store) => {
      // An id is taken as it is (a deleted user's events keep it); an email names a user who exists.
      const ref = values.user
      let userId = ref
      if (ref !== undefined && !USER_ID.test(ref)) {
        const user = await userByRef(store, ref)
        if (!user) throw new UsageError(`no user "${escapeForTerminal(ref)}" (a deleted user's events: --user ID)`)
        userId = user.id
      }
      return store.audit.list({ userId, clientId: values.client, since, limit: 1000 })
    })
    const rows = events.map((e) => ({
      at: new Date(e.at).toISOString(),
      kind: e.kind,
      user_id: e.userId,
      client_id: e.clientId,
      address: e.address,
      user_agent: e.userAgent,
      detail: e.detail === null ? null : (JSON.parse(e.detail) as Record<string, unknown>),
    }))
    if (json) return printJson(rows)
    if (rows.length === 0) return void process.stdout.write('no events\n')
    printTable(rows.map((r) => ({ at: r.at, kind: r.kind, user_id: r.user_id ?? '', client_id: r.client_id ?? '', address: r.address ?? '', detail: r.detail ? JSON.stringify(r.detail) : '' })))
  },
})
