import { escapeForTerminal } from '../lib/text'
import { UsageError, parse, printJson, printTable, withStore } from './common'

/** `latchkey audit [--user ID] [--client ID] [--since ISO] [--json]`: the audit log, newest first (at most 1,000). */
export async function auditCommand(args: string[]): Promise<void> {
  const { values } = parse(args, { user: { type: 'string' }, client: { type: 'string' }, since: { type: 'string' }, json: { type: 'boolean' } })
  const since = values.since === undefined ? undefined : Date.parse(values.since)
  if (since !== undefined && Number.isNaN(since)) throw new UsageError(`--since must be a date and time (ISO 8601), got "${escapeForTerminal(values.since!)}"`)
  const events = await withStore((store) => store.audit.list({ userId: values.user, clientId: values.client, since, limit: 1000 }))
  const rows = events.map((e) => ({
    at: new Date(e.at).toISOString(),
    kind: e.kind,
    user_id: e.userId,
    client_id: e.clientId,
    address: e.address,
    user_agent: e.userAgent,
    detail: e.detail === null ? null : (JSON.parse(e.detail) as Record<string, unknown>),
  }))
  if (values.json) return printJson(rows)
  if (rows.length === 0) return void process.stdout.write('no events\n')
  printTable(rows.map((r) => ({ at: r.at, kind: r.kind, user_id: r.user_id ?? '', client_id: r.client_id ?? '', address: r.address ?? '', detail: r.detail ? JSON.stringify(r.detail) : '' })))
}
