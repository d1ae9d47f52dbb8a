import type { Store, UserRecord } from '../db/store'
import { UniqueViolation } from '../db/store'
import { normalizeEmail } from './users'
import { InputError } from '../lib/errors'

/** A group's name: what the `groups` claim carries, so plain and bounded. */
const GROUP_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
const USER_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

export class GroupInputError extends InputError {}
/** A group an app is still restricted to: deleting it is refused. */
export class GroupInUse extends GroupInputError {}

export function checkGroupName(raw: string): string {
  if (!GROUP_NAME.test(raw)) throw new GroupInputError(`group name "${raw}" must be 1 to 64 of A-Z a-z 0-9 . _ - (starting with a letter or digit)`, { key: 'admin.input.groupName', params: { name: raw } })
  return raw
}

export async function createGroup(store: Store, raw: string, now: number): Promise<string> {
  const name = checkGroupName(raw)
  try {
    await store.groups.createGroup(name, now)
  } catch (error) {
    if (error instanceof UniqueViolation) throw new GroupInputError(`a group named "${name}" exists already`, { key: 'admin.input.groupExists', params: { name } })
    throw error
  }
  return name
}

/** A user named by id or by email (as the CLI and the declarative file name them). */
export async function userByRef(store: Store, ref: string): Promise<UserRecord | undefined> {
  if (USER_ID.test(ref)) return store.users.findUser(ref)
  let email: string
  try {
    email = normalizeEmail(ref)
  } catch {
    return undefined
  }
  return store.users.findUserByEmail(email)
}

/** Checks that every name is an existing group; the list without repeats. */
export async function existingGroups(store: Store, names: readonly string[]): Promise<string[]> {
  const wanted = [...new Set(names.map(checkGroupName))]
  const known = new Set((await store.groups.listGroups()).map((g) => g.name))
  const missing = wanted.filter((n) => !known.has(n))
  if (missing.length) throw new GroupInputError(`no group named "${missing[0]}" (create it first: latchkey group create ${missing[0]})`, { key: 'admin.input.noGroup', params: { name: missing[0]! } })
  return wanted
}

/** The store: its writes tell every cache of the tokens they revoke (the change feed). */
interface Deps {
  store: Store
}

/**
 * Who may use an app holds for as long as a grant lives (SPEC, Groups): taking a user out of a
 * group revokes, in the same transaction, their codes and tokens at every app restricted to
 * groups they are now in none of. The CLI, /admin and `apply` all go through here.
 */
export async function removeMember(deps: Deps, name: string, userId: string): Promise<boolean> {
  return deps.store.groups.removeMember(name, userId)
}

/** Restricts an app to groups (none: everyone); whoever is in none of them loses their tokens at it at once. */
export async function setAllowedGroups(deps: Deps, clientId: string, names: readonly string[]): Promise<void> {
  await deps.store.groups.setAllowedGroups(clientId, names)
}

/**
 * Deletes a group — refused while an app is restricted to it, naming them: deleting it would
 * silently open the app to everyone. false for an unknown group.
 */
export async function deleteGroup(store: Store, name: string): Promise<boolean> {
  const { deleted, restricts } = await store.groups.deleteGroup(name)
  if (restricts.length) {
    const apps = restricts.map((c) => (c.name === c.id ? c.id : `${c.name} (${c.id})`)).join(', ')
    throw new GroupInUse(`group "${name}" is the allowed group of ${apps}: change their allowed groups first (deleting it would open them to everyone)`, { key: 'admin.input.groupInUse', params: { name, apps } })
  }
  return deleted
}
