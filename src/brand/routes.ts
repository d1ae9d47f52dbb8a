/** The brand's files, same-origin (SPEC "Brand and language"): each with its own type, never sniffed. */
import { Elysia } from 'elysia'
import { NOSNIFF } from '../lib/http'
import type { Brand } from '.'
import type { BrandFile } from './config'
import { imageHeaders, type ImageType } from './image'

// The URLs carry the file's version (?v=), so a browser may keep them; a new file is a new URL.
const CACHE = 'public, max-age=86400'

function serve(file: BrandFile | null): Response {
  if (!file) return new Response('Not found', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8', ...NOSNIFF } })
  const headers = file.type === 'text/css' ? { 'content-type': 'text/css; charset=utf-8', 'cache-control': CACHE, etag: `"${file.etag}"`, ...NOSNIFF } : imageHeaders(file.type as ImageType, file.etag, CACHE)
  return new Response(file.bytes, { headers })
}

export function brandRoutes(brand: Brand) {
  const { logo, logoDark, favicon, css } = brand.files
  return new Elysia({ name: 'brand-assets' })
    .get('/assets/app.css', () => new Response(brand.appCss, { headers: { 'content-type': 'text/css; charset=utf-8', 'cache-control': 'public, max-age=3600', ...NOSNIFF } }))
    .get('/assets/brand/logo', () => serve(logo))
    .get('/assets/brand/logo-dark', () => serve(logoDark))
    .get('/assets/brand/favicon', () => serve(favicon))
    .get('/assets/brand.css', () => serve(css))
}

/** What /favicon.ico (asked for unprompted by browsers) answers when BRAND_FAVICON is set. */
export const brandFavicon = (brand: Brand): Response | null => (brand.files.favicon ? serve(brand.files.favicon) : null)
