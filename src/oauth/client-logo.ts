/**
 * An app's logo and launch URL (SPEC "Brand and language": `--logo-file`, `--launch-url`). The logo
 * is the operator's file, kept in the database and served same-origin; a logo_uri from dynamic
 * registration is never fetched or shown (a remote image would tell its host who signs in, and
 * when).
 */
import { Elysia } from 'elysia'
import type { AppContext } from '../context'
import type { ClientLogo, Store } from '../db/store'
import { etagOf, LOGO_TYPES } from '../brand/config'
import { imageHeaders, imageTypeOf, typeNames, type ImageType } from '../brand/image'
import { hasInvisible } from '../lib/text'
import { NOSNIFF } from '../lib/http'
import { ClientInputError, isClientId } from './clients'

export const MAX_LOGO_BYTES = 256 * 1024
const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost'])

/** A logo file's bytes, checked: PNG, WebP or SVG by its bytes (never its name), at most 256 KiB. */
export function checkLogo(bytes: Uint8Array<ArrayBuffer>, what = 'the logo'): ClientLogo {
  if (bytes.length > MAX_LOGO_BYTES) throw new ClientInputError(`${what} is ${bytes.length} bytes; at most 256 KiB`)
  const type = imageTypeOf(bytes, LOGO_TYPES)
  if (!type) throw new ClientInputError(`${what} is not a ${typeNames(LOGO_TYPES)} file`)
  return { contentType: type, bytes, etag: etagOf(bytes) }
}

/** A launch URL: absolute https (http only on loopback, for development), no credentials, one line. */
export function checkLaunchUrl(raw: string): string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new ClientInputError(`launch URL "${raw}" is not an absolute URL`)
  }
  if (hasInvisible(raw) || raw.length > 2000) throw new ClientInputError('launch URL must be at most 2000 characters, without control characters')
  if (!(url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname)))) throw new ClientInputError(`launch URL "${raw}" must be https (or http on localhost)`)
  if (url.username || url.password) throw new ClientInputError('launch URL must not carry a user name or password')
  return raw
}

/** Sets or removes (null) an app's logo; false for an unknown app. */
export async function setClientLogo(store: Store, id: string, bytes: Uint8Array<ArrayBuffer> | null, now: number): Promise<boolean> {
  return store.clients.setClientLogo(id, bytes && checkLogo(bytes), now)
}

/** Sets or removes (null) an app's launch URL; false for an unknown app. */
export async function setLaunchUrl(store: Store, id: string, url: string | null): Promise<boolean> {
  return store.clients.setLaunchUrl(id, url && checkLaunchUrl(url))
}

const notFound = () => new Response('Not found', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8', ...NOSNIFF } })

/**
 * GET /assets/apps/:id/logo: the app's own bytes and type, nosniff, and — an SVG being a document
 * that may carry script — a CSP that lets nothing run. With the current `?v=` a browser keeps it;
 * without, it asks again.
 */
export function clientLogoRoutes(ctx: AppContext) {
  return new Elysia({ name: 'client-logos' }).get('/assets/apps/:id/logo', async ({ params, query }) => {
    if (!isClientId(params.id)) return notFound()
    const logo = await ctx.store.clients.findClientLogo(params.id)
    if (!logo) return notFound()
    const cache = query.v === logo.etag ? 'public, max-age=86400' : 'no-cache'
    return new Response(logo.bytes, { headers: imageHeaders(logo.contentType as ImageType, logo.etag, cache) })
  })
}
