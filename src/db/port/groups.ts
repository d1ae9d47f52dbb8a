/** Groups of users: the `groups` claim, and apps only their members may authorize. */

export interface GroupView {
  name: string
  members: Array<{ id: string; email: string }>
}

export interface GroupStore {
  /** UniqueViolation when the name is taken. */
  createGroup(name: string, now: number): Promise<void>
  /** With its memberships and the restrictions naming it. */
  deleteGroup(name: string): Promise<boolean>
  /** false when the group or the user does not exist; adding a member twice is fine. */
  addMember(name: string, userId: string): Promise<boolean>
  removeMember(name: string, userId: string): Promise<boolean>
  /** Every group with its members, by name (byte order), members by email. */
  listGroups(): Promise<GroupView[]>
  /** The names of the user's groups, sorted. */
  groupsOf(userId: string): Promise<string[]>
  /** Replaces the app's allowed groups (none: anyone may authorize it); the names must exist. */
  setAllowedGroups(clientId: string, names: readonly string[]): Promise<void>
  allowedGroups(clientId: string): Promise<string[]>
  /** Whether the user may authorize the app: it names no groups, or the user is in one of them. */
  mayAuthorize(clientId: string, userId: string): Promise<boolean>
}
