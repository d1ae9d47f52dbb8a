import type { AppContext } from '../context'
import type { AuditEvent } from '../db/store'
import { findClient } from '../oauth/clients'
import type { AuditNames } from './pages'

/** The emails and app names the audit page shows beside the ids (SPEC "/admin"): users named as subject or actor, and apps. */
export async function auditNames(ctx: AppContext, events: AuditEvent[]): Promise<AuditNames> {
  const userIds = new Set<string>()
  const clientIds = new Set<string>()
  for (const e of events) {
    if (e.userId) userIds.add(e.userId)
    if (e.clientId) clientIds.add(e.clientId)
    const actor = e.detail?.match(/"actor":"([^"]{1,100})"/)?.[1]
    if (actor) userIds.add(actor)
  }
  const lookup = async <T>(ids: Set<string>, find: (id: string) => Promise<T | undefined>, name: (found: T) => string) =>
    new Map((await Promise.all([...ids].map(async (id) => [id, await find(id)] as const))).flatMap(([id, found]) => (found ? [[id, name(found)] as [string, string]] : [])))
  const [users, clients] = await Promise.all([
    lookup(userIds, (id) => ctx.store.users.findUser(id), (u) => u.email),
    lookup(clientIds, (id) => findClient(ctx.store, id), (c) => c.name),
  ])
  return { users, clients }
}
