import { createGroup, checkGroupName, deleteGroup, removeMember, userByRef } from '../accounts/groups'
import { escapeForTerminal } from '../lib/text'
import { UsageError, cliAudit, inputError, parse, printJson, printTable, withStore } from './common'

const USAGE = 'group create|delete NAME, group add|remove NAME USER (id or email), group list [--json]'

/** `latchkey group …`: groups of users, for the `groups` claim and apps restricted with --allowed-group. */
export async function groupCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args
  switch (sub) {
    case 'create': {
      const name = parse(rest, {}, 1).positionals[0]
      if (!name) throw new UsageError('usage: latchkey group create NAME')
      await withStore(async (store) => {
        await inputError(() => createGroup(store, name, Date.now()))
        await cliAudit(store, 'group.created', { detail: { group: name } })
      })
      process.stdout.write(`created group ${name}\n`)
      return
    }
    case 'delete': {
      const name = parse(rest, {}, 1).positionals[0]
      if (!name) throw new UsageError('usage: latchkey group delete NAME')
      // Refused (exit 2, naming them) while an app is restricted to it.
      const deleted = await withStore(async (store) => (await inputError(() => deleteGroup(store, name))) && (await cliAudit(store, 'group.deleted', { detail: { group: name } }), true))
      if (!deleted) throw new UsageError(`no group named "${escapeForTerminal(name)}"`)
      process.stdout.write(`deleted group ${escapeForTerminal(name)}\n`)
      return
    }
    case 'add':
    case 'remove': {
      const [name, ref] = parse(rest, {}, 2).positionals
      if (!name || !ref) throw new UsageError(`usage: latchkey group ${sub} NAME USER`)
      await withStore(async (store) => {
        await inputError(async () => checkGroupName(name))
        const user = await userByRef(store, ref)
        if (!user) throw new UsageError(`no user "${escapeForTerminal(ref)}"`)
        if (sub === 'add') {
          if (!(await store.groups.addMember(name, user.id))) throw new UsageError(`no group named "${name}"`)
        } else if (!(await removeMember({ store }, name, user.id))) throw new UsageError(`${escapeForTerminal(user.email)} is not in group "${name}"`)
        await cliAudit(store, sub === 'add' ? 'group.member_added' : 'group.member_removed', { userId: user.id, detail: { group: name } })
        process.stdout.write(`${sub === 'add' ? 'added' : 'removed'} ${escapeForTerminal(user.email)} ${sub === 'add' ? 'to' : 'from'} ${name}\n`)
      })
      return
    }
    case 'list': {
      const { values } = parse(rest, { json: { type: 'boolean' } })
      const groups = await withStore((store) => store.groups.listGroups())
      if (values.json) return printJson(groups)
      if (groups.length === 0) return void process.stdout.write('no groups\n')
      printTable(groups.map((g) => ({ name: g.name, members: g.members.map((m) => m.email).join(' ') })))
      return
    }
    default:
      throw new UsageError(`unknown group command "${sub ?? ''}" (${USAGE})`)
  }
}
