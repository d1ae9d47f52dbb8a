import type { Config } from '../config'
import type { Store } from '../db/store'
import type { User } from './users'

/** The seed promises `avatar_url` is a URL; users without a picture get a generated one. */
export function avatarUrlOf(config: Config, user: User): string {
  return user.avatarUrl ?? `${config.issuer}/avatars/${user.id}.svg`
}

const PALETTE = ['#2f5bd3', '#0e7c66', '#a34aa6', '#c2410c', '#4d7c0f', '#be123c']

function escapeXml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

/** An initials picture for `/avatars/<user id>.svg`. */
export async function avatarSvg(store: Store, file: string): Promise<string | undefined> {
  const match = /^([0-9a-f-]{36})\.svg$/.exec(file)
  const user = match && (await store.users.findUser(match[1]!))
  if (!user) return undefined
  const initials = user.fullName
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 2)
    .map((w) => [...w][0]!.toUpperCase())
    .join('')
  const color = PALETTE[user.id.charCodeAt(0) % PALETTE.length]
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" rx="32" fill="${color}"/><text x="32" y="41" font-family="sans-serif" font-size="26" fill="#fff" text-anchor="middle">${escapeXml(initials)}</text></svg>`
}
