import type { GroupDeletion, GroupStore, GroupView } from '../store'
import { unique, type SqliteContext } from './context'

/** What a grant leaves behind at an app (what revokeAccess deletes, the consent aside: it is what the user agreed to); access tokens apart, for the caches. */
const GRANT_TABLES = ['auth_codes', 'refresh_families', 'refresh_tokens'] as const

export class SqliteGroups implements GroupStore {
  constructor(private readonly ctx: SqliteContext) {}

  private get sqlite() {
    return this.ctx.db.sqlite
  }

  createGroup(name: string, now: number): Promise<void> {
    return this.ctx.write(() => void unique(() => this.sqlite.prepare('INSERT INTO groups (name, created_at) VALUES (?, ?)').run(name, now)))
  }

  deleteGroup(name: string): Promise<GroupDeletion> {
    return this.ctx.write(() => {
      const restricts = this.sqlite
        .prepare('SELECT c.id, c.name FROM client_groups g JOIN clients c ON c.id = g.client_id WHERE g.group_name = ? ORDER BY c.name, c.id')
        .all(name) as GroupDeletion['restricts']
      // Sites (forward-auth) name their groups in a JSON list.
      const sites = this.sqlite
        .prepare("SELECT host AS id, 'site ' || name AS name FROM sites WHERE EXISTS (SELECT 1 FROM json_each(sites.allowed_groups) WHERE value = ?) ORDER BY name, host")
        .all(name) as GroupDeletion['restricts']
      restricts.push(...sites)
      if (restricts.length) return { deleted: false, restricts }
      const deleted = this.sqlite.prepare('DELETE FROM groups WHERE name = ?').run(name).changes > 0
      // Its members' Remote-Groups change (forward-auth's cached site sessions).
      if (deleted) this.ctx.emit({ sessions: 'all' })
      return { deleted, restricts }
    })
  }

  addMember(name: string, userId: string): Promise<boolean> {
    return this.ctx.write(() => {
      const exists = this.sqlite.prepare('SELECT (SELECT 1 FROM groups WHERE name = ?1) AND (SELECT 1 FROM users WHERE id = ?2) AS ok').get(name, userId) as { ok: number | null }
      if (!exists.ok) return false
      if (this.sqlite.prepare('INSERT INTO group_members (group_name, user_id) VALUES (?, ?) ON CONFLICT DO NOTHING').run(name, userId).changes > 0) this.ctx.emit({ sessions: [userId] })
      return true
    })
  }

  removeMember(name: string, userId: string): Promise<boolean> {
    return this.ctx.write(() => {
      if (this.sqlite.prepare('DELETE FROM group_members WHERE group_name = ? AND user_id = ?').run(name, userId).changes === 0) return false
      this.ctx.emit({ sessions: [userId] })
      // The apps restricted to this group that no other group of the user's opens (one writer: the order is free).
      const lost = `SELECT g.client_id FROM client_groups g WHERE g.group_name = ?1 AND NOT EXISTS
        (SELECT 1 FROM client_groups o JOIN group_members m ON m.group_name = o.group_name WHERE o.client_id = g.client_id AND m.user_id = ?2)`
      for (const table of GRANT_TABLES) this.sqlite.prepare(`DELETE FROM ${table} WHERE user_id = ?2 AND client_id IN (${lost})`).run(name, userId)
      this.tokensGone(this.sqlite.prepare(`DELETE FROM access_tokens WHERE user_id = ?2 AND client_id IN (${lost}) RETURNING id`).all(name, userId))
      return true
    })
  }

  async listGroups(): Promise<GroupView[]> {
    const rows = this.sqlite
      .prepare(
        `SELECT g.name, u.id, u.email FROM groups g LEFT JOIN group_members m ON m.group_name = g.name LEFT JOIN users u ON u.id = m.user_id
          ORDER BY g.name, u.email`,
      )
      .all() as Array<{ name: string; id: string | null; email: string | null }>
    const out: GroupView[] = []
    for (const r of rows) {
      if (out.at(-1)?.name !== r.name) out.push({ name: r.name, members: [] })
      if (r.id !== null) out.at(-1)!.members.push({ id: r.id, email: r.email! })
    }
    return out
  }

  async groupsOf(userId: string): Promise<string[]> {
    return (this.sqlite.prepare('SELECT group_name AS name FROM group_members WHERE user_id = ? ORDER BY group_name').all(userId) as Array<{ name: string }>).map((r) => r.name)
  }

  setAllowedGroups(clientId: string, names: readonly string[]): Promise<void> {
    return this.ctx.write(() => {
      this.sqlite.prepare('DELETE FROM client_groups WHERE client_id = ?').run(clientId)
      const insert = this.sqlite.prepare('INSERT INTO client_groups (client_id, group_name) VALUES (?, ?)')
      for (const name of names) insert.run(clientId, name)
      if (names.length === 0) return
      // Whoever is in none of the groups now loses what they hold at the app (a machine's tokens have no user).
      const members = 'SELECT m.user_id FROM client_groups g JOIN group_members m ON m.group_name = g.group_name WHERE g.client_id = ?1'
      for (const table of GRANT_TABLES) this.sqlite.prepare(`DELETE FROM ${table} WHERE client_id = ?1 AND user_id NOT IN (${members})`).run(clientId)
      this.tokensGone(this.sqlite.prepare(`DELETE FROM access_tokens WHERE client_id = ?1 AND user_id NOT IN (${members}) RETURNING id`).all(clientId))
    })
  }

  /** The caches drop the access tokens a write deleted (told once it committed). */
  private tokensGone(rows: unknown[]): void {
    if (rows.length) this.ctx.emit({ tokens: (rows as Array<{ id: number }>).map((r) => r.id) })
  }

  async allowedGroups(clientId: string): Promise<string[]> {
    return (this.sqlite.prepare('SELECT group_name AS name FROM client_groups WHERE client_id = ? ORDER BY group_name').all(clientId) as Array<{ name: string }>).map((r) => r.name)
  }

  async mayAuthorize(clientId: string, userId: string): Promise<boolean> {
    // On every refresh: a cached statement (query), not one compiled per call (prepare).
    const row = this.sqlite
      .query(
        `SELECT NOT EXISTS (SELECT 1 FROM client_groups WHERE client_id = ?1)
          OR EXISTS (SELECT 1 FROM client_groups c JOIN group_members m ON m.group_name = c.group_name WHERE c.client_id = ?1 AND m.user_id = ?2) AS ok`,
      )
      .get(clientId, userId) as { ok: number }
    return row.ok === 1
  }
}
