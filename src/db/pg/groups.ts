import type { GroupDeletion, GroupStore, GroupView } from '../store'
import { emitting, n, type PgContext, type Row } from './context'

/**
 * What a grant leaves behind at an app (what revokeAccess deletes, the consent aside: it is what
 * the user agreed to), in the order every grant write locks them: a refresh or an exchange that
 * holds a family or a code is waited for, and its new tokens are then seen and deleted too.
 */
const GRANT_TABLES = ['auth_codes', 'refresh_families', 'refresh_tokens'] as const

export class PgGroups implements GroupStore {
  constructor(private readonly ctx: PgContext) {}

  createGroup(name: string, now: number): Promise<void> {
    // A taken name is a UniqueViolation (the context maps 23505).
    return this.ctx.run(async (sql) => void (await sql`INSERT INTO groups (name, created_at) VALUES (${name}, ${now})`))
  }

  /**
   * The group's row is locked first: an app being restricted to it (its client_groups insert
   * takes FOR KEY SHARE on that row) either committed before and is seen, or waits and then
   * finds the group gone.
   */
  deleteGroup(name: string): Promise<GroupDeletion> {
    return this.ctx.tx(async (tx) => {
      if ((await tx`SELECT 1 FROM groups WHERE name = ${name} FOR UPDATE`).length === 0) return { deleted: false, restricts: [] }
      const restricts = (
        await tx`SELECT c.id, c.name FROM client_groups g JOIN clients c ON c.id = g.client_id WHERE g.group_name = ${name} ORDER BY c.name COLLATE "C", c.id`
      ).map((r: Row) => ({ id: r.id as string, name: r.name as string }))
      // Sites (forward-auth) name their groups in a JSON list.
      for (const r of await tx`SELECT host, name FROM sites WHERE allowed_groups @> ${JSON.stringify([name])}::text::jsonb ORDER BY name COLLATE "C", host`)
        restricts.push({ id: (r as Row).host as string, name: `site ${(r as Row).name as string}` })
      if (restricts.length) return { deleted: false, restricts }
      return { deleted: (await tx`DELETE FROM groups WHERE name = ${name}`).count > 0, restricts }
      // Its members' Remote-Groups change (forward-auth's cached site sessions; other instances: drizzle/pg/0021).
    }).then((done) => emitting(this.ctx, done, done.deleted ? { sessions: 'all' } : undefined))
  }

  /** INSERT … SELECT: the group and the user must exist at that moment (their rows' locks keep them). */
  addMember(name: string, userId: string): Promise<boolean> {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`WITH ok AS (SELECT g.name, u.id FROM groups g, users u WHERE g.name = ${name} AND u.id = ${userId} FOR KEY SHARE),
          ins AS (INSERT INTO group_members (group_name, user_id) SELECT name, id FROM ok ON CONFLICT DO NOTHING RETURNING 1)
        SELECT (SELECT count(*) FROM ok) AS n, (SELECT count(*) FROM ins) AS added`
      return emitting(this.ctx, Number(row!.n) > 0, Number(row!.added) > 0 ? { sessions: [userId] } : undefined)
    })
  }

  /**
   * The grants go before the membership, in the order deleting a user takes them (grants, then
   * the user's row and, by cascade, its memberships): the two wait for each other, never deadlock.
   * The access tokens' deletes notify every instance (drizzle/pg/0005): their caches drop them.
   */
  removeMember(name: string, userId: string): Promise<boolean> {
    let deleted: number[] = []
    return this.ctx.tx(async (tx) => {
      if ((await tx`SELECT 1 FROM group_members WHERE group_name = ${name} AND user_id = ${userId}`).length === 0) return false
      // The apps restricted to this group that no other group of the user's opens.
      const lost: string[] = (
        await tx`SELECT g.client_id FROM client_groups g WHERE g.group_name = ${name} AND NOT EXISTS
          (SELECT 1 FROM client_groups o JOIN group_members m ON m.group_name = o.group_name
            WHERE o.client_id = g.client_id AND m.user_id = ${userId} AND o.group_name <> ${name})`
      ).map((r: Row) => r.client_id as string)
      deleted = []
      if (lost.length) {
        const among = lost.map((_, i) => `$${i + 2}`).join(', ')
        for (const table of GRANT_TABLES) await tx.unsafe(`DELETE FROM ${table} WHERE user_id = $1 AND client_id IN (${among})`, [userId, ...lost])
        deleted = (await tx.unsafe(`DELETE FROM access_tokens WHERE user_id = $1 AND client_id IN (${among}) RETURNING id`, [userId, ...lost])).map((r: Row) => n(r.id))
      }
      return (await tx`DELETE FROM group_members WHERE group_name = ${name} AND user_id = ${userId}`).count > 0
    }).then((removed) => emitting(this.ctx, removed, removed ? { sessions: [userId], ...(deleted.length ? { tokens: deleted } : {}) } : undefined))
  }

  listGroups(): Promise<GroupView[]> {
    return this.ctx.run(async (sql) => {
      const rows = await sql`SELECT g.name, u.id, u.email FROM groups g LEFT JOIN group_members m ON m.group_name = g.name LEFT JOIN users u ON u.id = m.user_id
        ORDER BY g.name, u.email COLLATE "C"`
      const out: GroupView[] = []
      for (const r of rows as Row[]) {
        if (out.at(-1)?.name !== r.name) out.push({ name: r.name as string, members: [] })
        if (r.id !== null) out.at(-1)!.members.push({ id: r.id as string, email: r.email as string })
      }
      return out
    })
  }

  groupsOf(userId: string): Promise<string[]> {
    return this.ctx.run(async (sql) => (await sql`SELECT group_name FROM group_members WHERE user_id = ${userId} ORDER BY group_name`).map((r: Row) => r.group_name as string))
  }

  setAllowedGroups(clientId: string, names: readonly string[]): Promise<void> {
    let deleted: number[] = []
    return this.ctx.tx(async (tx) => {
      deleted = []
      // Whoever is in none of the groups loses what they hold at the app (a machine's tokens have
      // no user) — first, as deleting the app takes its grants before its row (no deadlock).
      if (names.length) {
        const members = `SELECT user_id FROM group_members WHERE group_name IN (${names.map((_, i) => `$${i + 2}`).join(', ')})`
        for (const table of GRANT_TABLES) await tx.unsafe(`DELETE FROM ${table} WHERE client_id = $1 AND user_id NOT IN (${members})`, [clientId, ...names])
        deleted = (await tx.unsafe(`DELETE FROM access_tokens WHERE client_id = $1 AND user_id NOT IN (${members}) RETURNING id`, [clientId, ...names])).map((r: Row) => n(r.id))
      }
      await tx`DELETE FROM client_groups WHERE client_id = ${clientId}`
      for (const name of names) await tx`INSERT INTO client_groups (client_id, group_name) VALUES (${clientId}, ${name})`
    }).then(() => void emitting(this.ctx, undefined, deleted.length ? { tokens: deleted } : undefined))
  }

  allowedGroups(clientId: string): Promise<string[]> {
    return this.ctx.run(async (sql) => (await sql`SELECT group_name FROM client_groups WHERE client_id = ${clientId} ORDER BY group_name`).map((r: Row) => r.group_name as string))
  }

  mayAuthorize(clientId: string, userId: string): Promise<boolean> {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`SELECT NOT EXISTS (SELECT 1 FROM client_groups WHERE client_id = ${clientId})
          OR EXISTS (SELECT 1 FROM client_groups c JOIN group_members m ON m.group_name = c.group_name WHERE c.client_id = ${clientId} AND m.user_id = ${userId}) AS ok`
      return row!.ok as boolean
    })
  }
}
