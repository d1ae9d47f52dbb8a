import type { Config } from '../config'
import { PageError } from '../lib/errors'
import type { User } from './users'

/** Where /account uploads a picture: a multipart form, the one page POST that is not urlencoded (SPEC "Hostile input"). */
export const AVATAR_UPLOAD_PATH = '/account/avatar'
/** SPEC: an uploaded picture is at most 1 MiB. */
export const AVATAR_MAX_BYTES = 1_048_576
/** The upload's whole body: the picture, the CSRF token and multipart's framing. */
export const AVATAR_FORM_MAX_BYTES = AVATAR_MAX_BYTES + 16_384

export const avatarTooLarge = () => new PageError(413, 'error.avatarTooLarge')

/**
 * An uploaded picture's path, kept in `users.avatar_url`: a hash of its bytes in the query, so a
 * new picture is a new URL (each cached for good). Nothing typed in can start with `/`: the
 * profile form takes absolute https:// URLs only.
 */
export const uploadedAvatarPath = (userId: string, etag: string) => `/avatars/${userId}?v=${etag}`
export const isUploadedAvatar = (avatarUrl: string | null) => avatarUrl?.startsWith('/') === true

/**
 * The seed promises `avatar_url` is a URL; users without a picture get a generated one. An
 * uploaded one is served by Latchkey: its absolute URL comes from ISSUER (never from Host).
 */
export function avatarUrlOf(config: Config, user: User): string {
  if (user.avatarUrl === null) return `${config.issuer}/avatars/${user.id}.svg`
  return isUploadedAvatar(user.avatarUrl) ? config.issuer + user.avatarUrl : user.avatarUrl
}

const startsWith = (bytes: Uint8Array, at: number, expected: number[] | string) =>
  (typeof expected === 'string' ? [...expected].map((c) => c.charCodeAt(0)) : expected).every((b, i) => bytes[at + i] === b)

/**
 * The type of a picture by its bytes, never by its name or declared Content-Type (SPEC): a PNG
 * (signature, then the IHDR chunk — PNG §5.2, §11.2.2), a JPEG (SOI, then a marker — ITU T.81
 * B.1.1.2) or a WebP (a RIFF container of WEBP with a VP8, VP8L or VP8X chunk — RFC 9649 §2.5).
 * Anything else, SVG included, is undefined.
 */
export function pictureType(bytes: Uint8Array): 'image/png' | 'image/jpeg' | 'image/webp' | undefined {
  if (startsWith(bytes, 0, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) && startsWith(bytes, 12, 'IHDR')) return 'image/png'
  if (startsWith(bytes, 0, [0xff, 0xd8, 0xff]) && bytes.length > 3) return 'image/jpeg'
  if (startsWith(bytes, 0, 'RIFF') && startsWith(bytes, 8, 'WEBPVP8') && [0x20, 0x4c, 0x58].includes(bytes[15]!)) return 'image/webp'
  return undefined
}

const PALETTE = ['#2f5bd3', '#0e7c66', '#a34aa6', '#c2410c', '#4d7c0f', '#be123c']

function escapeXml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

/** An initials picture for `/avatars/<user id>.svg`. */
export function avatarSvg(userId: string, fullName: string): string {
  const initials = fullName
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 2)
    .map((w) => [...w][0]!.toUpperCase())
    .join('')
  const color = PALETTE[userId.charCodeAt(0) % PALETTE.length]
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" rx="32" fill="${color}"/><text x="32" y="41" font-family="sans-serif" font-size="26" fill="#fff" text-anchor="middle">${escapeXml(initials)}</text></svg>`
}
