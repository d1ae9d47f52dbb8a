import type { GroupStore, GroupView } from '../store'
import type { PgContext, Row } from './context'

export class PgGroups implements GroupStore {
  constructor(private readonly ctx: PgContext) {}

  createGroup(name: string, now: number): Promise<void> {
    // A taken name is a UniqueViolation (the context maps 23505).
    return this.ctx.run(async (sql) => void (await sql`INSERT INTO groups (name, created_at) VALUES (${name}, ${now})`))
  }

  deleteGroup(name: string): Promise<boolean> {
    return this.ctx.run(async (sql) => (await sql`DELETE FROM groups WHERE name = ${name}`).count > 0)
  }

  /** INSERT … SELECT: the group and the user must exist at that moment (their rows' locks keep them). */
  addMember(name: string, userId: string): Promise<boolean> {
    return this.ctx.run(async (sql) => {
      const [row] = await sql`WITH ok AS (SELECT g.name, u.id FROM groups g, users u WHERE g.name = ${name} AND u.id = ${userId} FOR KEY SHARE),
          ins AS (INSERT INTO group_members (group_name, user_id) SELECT name, id FROM ok ON CONFLICT DO NOTHING)
        SELECT count(*) AS n FROM ok`
      return Number(row!.n) > 0
    })
  }

  removeMember(name: string, userId: string): Promise<boolean> {
    return this.ctx.run(async (sql) => (await sql`DELETE FROM group_members WHERE group_name = ${name} AND user_id = ${userId}`).count > 0)
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
    return this.ctx.tx(async (tx) => {
      await tx`DELETE FROM client_groups WHERE client_id = ${clientId}`
      for (const name of names) await tx`INSERT INTO client_groups (client_id, group_name) VALUES (${clientId}, ${name})`
    })
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
