/**
 * The BRAND_* variables (SPEC "Brand and language"), read and checked once at start: a file of
 * another type or past its size stops start-up naming its variable.
 */
import { readFileSync, statSync } from 'node:fs'
import { imageTypeOf, typeNames, type ImageType } from './image'

/** A file the server serves as it is, with its type found from its bytes and a version for its URL. */
export interface BrandFile {
  bytes: Uint8Array<ArrayBuffer>
  type: ImageType | 'text/css'
  /** A hash of the bytes: the `?v=` of its URL and its ETag. */
  etag: string
}

export interface BrandConfig {
  /** Page titles, mails, the TOTP issuer, MAIL_FROM's display name. */
  name: string
  logo: BrandFile | null
  logoDark: BrandFile | null
  favicon: BrandFile | null
  /** `#rrggbb`, lower case; null: Latchkey's own accent. */
  color: string | null
  css: BrandFile | null
}

export class BrandError extends Error {
  constructor(
    public readonly variable: string,
    detail: string,
  ) {
    super(detail)
  }
}

type Env = Record<string, string | undefined>

const KIB = 1024
export const LOGO_TYPES: readonly ImageType[] = ['image/png', 'image/webp', 'image/svg+xml']
const FAVICON_TYPES: readonly ImageType[] = ['image/png', 'image/x-icon', 'image/svg+xml']

export const etagOf = (bytes: Uint8Array) => new Bun.CryptoHasher('sha256').update(bytes).digest('base64url').slice(0, 16)

/** The file a variable names, at most `max` bytes (checked before it is read). */
function readLimited(variable: string, path: string, max: number): Uint8Array<ArrayBuffer> {
  let size: number
  try {
    const stat = statSync(path)
    if (!stat.isFile()) throw new BrandError(variable, `"${path}" is not a file`)
    size = stat.size
  } catch (error) {
    if (error instanceof BrandError) throw error
    throw new BrandError(variable, `cannot read "${path}"`)
  }
  if (size > max) throw new BrandError(variable, `"${path}" is ${size} bytes; at most ${max / KIB} KiB`)
  if (size === 0) throw new BrandError(variable, `"${path}" is empty`)
  return new Uint8Array(readFileSync(path))
}

function image(env: Env, variable: string, allowed: readonly ImageType[]): BrandFile | null {
  const path = env[variable]
  if (!path) return null
  const bytes = readLimited(variable, path, 512 * KIB)
  const type = imageTypeOf(bytes, allowed)
  if (!type) throw new BrandError(variable, `"${path}" is not a ${typeNames(allowed)} file`)
  return { bytes, type, etag: etagOf(bytes) }
}

function stylesheet(env: Env): BrandFile | null {
  const path = env.BRAND_CSS
  if (!path) return null
  const bytes = readLimited('BRAND_CSS', path, 512 * KIB)
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    throw new BrandError('BRAND_CSS', `"${path}" is not UTF-8 text`)
  }
  return { bytes, type: 'text/css', etag: etagOf(bytes) }
}

function nameFrom(env: Env): string {
  const raw = env.BRAND_NAME
  if (raw === undefined || raw === '') return 'Latchkey'
  const name = raw.trim()
  // One line (it becomes a mail header's display name and the TOTP issuer) of readable length.
  if (name === '' || /[\u0000-\u001f\u007f]/.test(name) || [...name].length > 64) throw new BrandError('BRAND_NAME', 'must be one line of at most 64 characters')
  // RFC 6238 apps split an otpauth label at ':' (issuer:account).
  if (name.includes(':')) throw new BrandError('BRAND_NAME', 'must not contain ":" (authenticator apps read it as the issuer separator)')
  return name
}

function colorFrom(env: Env): string | null {
  const raw = env.BRAND_COLOR
  if (raw === undefined || raw === '') return null
  if (!/^#[0-9a-fA-F]{6}$/.test(raw)) throw new BrandError('BRAND_COLOR', `must be a colour like #1f4fc2, got "${raw}"`)
  return raw.toLowerCase()
}

export function brandFrom(env: Env): BrandConfig {
  // The dark logo is the light one's variant: alone it would show in one theme and the name in the other.
  if (env.BRAND_LOGO_DARK && !env.BRAND_LOGO) throw new BrandError('BRAND_LOGO_DARK', 'needs BRAND_LOGO (the logo of the light theme)')
  return {
    name: nameFrom(env),
    logo: image(env, 'BRAND_LOGO', LOGO_TYPES),
    logoDark: image(env, 'BRAND_LOGO_DARK', LOGO_TYPES),
    favicon: image(env, 'BRAND_FAVICON', FAVICON_TYPES),
    color: colorFrom(env),
    css: stylesheet(env),
  }
}
