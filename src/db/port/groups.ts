/** Groups of users: the `groups` claim, and apps only their members may authorize. */

export interface GroupView {
  name: string
  members: Array<{ id: string; email: string }>
}

/** deleteGroup: done, or refused because these apps are restricted to the group (nothing deleted). */
export interface GroupDeletion {
  deleted: boolean
  /** The apps (and the sites, named "site NAME" with their host as id) that name it: the deletion was refused. */
  restricts: Array<{ id: string; name: string }>
}

export interface GroupStore {
  /** UniqueViolation when the name is taken. */
  createGroup(name: string, now: number): Promise<void>
  /**
   * With its memberships — unless an app is restricted to it (`--allowed-group`): then nothing is
   * deleted and those apps are named (an allow-list never silently becomes "everyone").
   */
  deleteGroup(name: string): Promise<GroupDeletion>
  /** false when the group or the user does not exist; adding a member twice is fine. */
  addMember(name: string, userId: string): Promise<boolean>
  /**
   * Also, in the same transaction, revokes the user's codes and tokens (refresh families and
   * access tokens) at every app the user may no longer authorize (restricted to groups the user is
   * now in none of). false when the user was not in the group.
   */
  removeMember(name: string, userId: string): Promise<boolean>
  /** Every group with its members, by name (byte order), members by email. */
  listGroups(): Promise<GroupView[]>
  /** The names of the user's groups, sorted. */
  groupsOf(userId: string): Promise<string[]>
  /**
   * Replaces the app's allowed groups (none: anyone may authorize it); the names must exist. In the
   * same transaction, the codes and tokens at the app of every user in none of them are revoked.
   */
  setAllowedGroups(clientId: string, names: readonly string[]): Promise<void>
  allowedGroups(clientId: string): Promise<string[]>
  /** Whether the user may authorize the app: it names no groups, or the user is in one of them. */
  mayAuthorize(clientId: string, userId: string): Promise<boolean>
}
