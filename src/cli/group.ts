import { createGroup, checkGroupName, deleteGroup, removeMember } from '../accounts/groups'
import { escapeForTerminal } from '../lib/text'
import { command, type CommandGroup } from './command'
import { UsageError, cliAudit, inputError, namedUser, printJson, printTable, withStore } from './common'

const create = command({
  name: 'create',
  args: 'NAME',
  positionals: 1,
  summary: 'a new, empty group (1 to 64 of A-Z a-z 0-9 . _ -)',
  options: {},
  examples: ['group create family'],
  json: '{name, members: []}',
  async run({ positionals, json }) {
    const name = positionals[0]
    if (!name) throw new UsageError('group create needs a NAME; see latchkey group create --help')
    // `client update --allowed-group none` opens an app to every user: no group can be that name.
    if (name === 'none') throw new UsageError('a group cannot be named "none" (--allowed-group none means every user)')
    await withStore(async (store) => {
      await inputError(() => createGroup(store, name, Date.now()))
      await cliAudit(store, 'group.created', { detail: { group: name } })
    })
    if (json) return printJson({ name, members: [] })
    process.stdout.write(`created group ${name}\n`)
  },
})

const remove = command({
  name: 'delete',
  args: 'NAME',
  positionals: 1,
  summary: 'delete a group (refused while an app or a site still names it)',
  options: {},
  examples: ['group delete family'],
  json: '{name, deleted: true}',
  async run({ positionals, json }) {
    const name = positionals[0]
    if (!name) throw new UsageError('group delete needs a NAME; see latchkey group delete --help')
    // Refused (exit 2, naming them) while an app is restricted to it.
    if (!(await withStore(async (store) => (await inputError(() => deleteGroup(store, name))) && (await cliAudit(store, 'group.deleted', { detail: { group: name } }), true)))) throw new UsageError(`no group named "${escapeForTerminal(name)}"`)
    if (json) return printJson({ name, deleted: true })
    process.stdout.write(`deleted group ${escapeForTerminal(name)}\n`)
  },
})

/** `group add` and `group remove`: one member in or out; a change that changes nothing says so and records nothing. */
function membership(sub: 'add' | 'remove') {
  const adding = sub === 'add'
  return command({
    name: sub,
    args: 'NAME USER',
    positionals: 2,
    summary: adding ? 'put a user in a group' : 'take a user out of a group',
    detail: 'USER: an id or an email.' + (adding ? '' : ' Their tokens for apps they may no longer use end.'),
    options: {},
    examples: [`group ${sub} family ann@example.com`],
    json: '{group, user: {id, email}, member, changed}',
    async run({ positionals, json }) {
      const [name, ref] = positionals
      if (!name || !ref) throw new UsageError(`group ${sub} needs a group NAME and a USER (id or email); see latchkey group ${sub} --help`)
      const { email, id, changed } = await withStore(async (store) => {
        await inputError(async () => checkGroupName(name))
        const user = await namedUser(store, ref)
        const member = (await store.groups.groupsOf(user.id)).includes(name)
        if (member === adding) {
          if (!adding && !(await store.groups.listGroups()).some((g) => g.name === name)) throw new UsageError(`no group named "${name}"`)
          return { email: user.email, id: user.id, changed: false }
        }
        if (adding) {
          if (!(await store.groups.addMember(name, user.id))) throw new UsageError(`no group named "${name}"`)
        } else if (!(await removeMember({ store }, name, user.id))) return { email: user.email, id: user.id, changed: false }
        await cliAudit(store, adding ? 'group.member_added' : 'group.member_removed', { userId: user.id, detail: { group: name } })
        return { email: user.email, id: user.id, changed: true }
      })
      if (json) return printJson({ group: name, user: { id, email }, member: adding, changed })
      const who = escapeForTerminal(email)
      if (!changed) process.stdout.write(`nothing to change: ${who} ${adding ? 'is in' : 'is not in'} ${name}${adding ? ' already' : ''}\n`)
      else process.stdout.write(`${adding ? 'added' : 'removed'} ${who} ${adding ? 'to' : 'from'} ${name}\n`)
    },
  })
}

const list = command({
  name: 'list',
  summary: 'the groups with their members',
  options: {},
  examples: ['group list', 'group list --json'],
  json: '[{name, members: [{id, email}]}]',
  async run({ json }) {
    const groups = await withStore((store) => store.groups.listGroups())
    if (json) return printJson(groups)
    if (groups.length === 0) return void process.stdout.write('no groups\n')
    printTable(groups.map((g) => ({ name: g.name, members: g.members.map((m) => m.email).join(' ') })))
  },
})

/** `latchkey group …`: groups of users, for the `groups` claim and apps restricted with --allowed-group. */
export const groupCommands: CommandGroup = {
  name: 'group',
  summary: 'groups of users: the groups claim, and apps only their members may use',
  commands: [create, remove, membership('add'), membership('remove'), list],
}
