import { Elysia } from 'elysia'
import type { AppContext } from '../context'
import type { AvatarUpload } from '../db/store'
import { PageError } from '../lib/errors'
import { NOSNIFF, mediaType, readBodyBytes } from '../lib/http'
import { seeOther } from '../views/page'
import { parsePageForm } from '../web/forms'
import { AVATAR_FORM_MAX_BYTES, AVATAR_MAX_BYTES, AVATAR_UPLOAD_PATH, avatarTooLarge, pictureType, uploadedAvatarPath } from './avatar'
import { CsrfForm } from './model'
import { accountPage } from './security'
import type { Session } from './sessions'
import { forbidden } from './sign-in'
import { csrfAccepted, readSession } from './web'

// The words of the upload's refusals, in one place.
const NO_FILE = 'Choose a picture to upload: a PNG, JPEG or WebP file of at most 1 MiB.'
const NOT_A_PICTURE = 'That file is not a PNG, JPEG or WebP picture. Your picture was not changed.'
const TOO_LARGE = 'The picture is larger than 1 MiB. Your picture was not changed.'

interface AvatarForm {
  csrf_token?: string
  picture?: File
}

/**
 * The upload's body (SPEC "Hostile input": the one page POST that is `multipart/form-data`, 415
 * otherwise): at most the picture's 1 MiB and a few fields, read — and refused past that —
 * before any session or CSRF check, like every page form. A field sent twice is no field.
 */
async function parseAvatarForm({ request }: { request: Request }): Promise<AvatarForm> {
  if (mediaType(request) !== 'multipart/form-data') throw new PageError(415, 'error.avatarForm')
  const bytes = await readBodyBytes(request, { bytes: AVATAR_FORM_MAX_BYTES, tooLarge: avatarTooLarge })
  let form: FormData
  try {
    form = await new Response(bytes as Uint8Array<ArrayBuffer>, { headers: { 'content-type': request.headers.get('content-type')! } }).formData()
  } catch {
    throw new PageError(400, 'error.formUnreadable')
  }
  const one = (name: string) => {
    const values = form.getAll(name)
    return values.length === 1 ? values[0] : undefined
  }
  const csrf = one('csrf_token')
  const picture = one('picture')
  return { csrf_token: typeof csrf === 'string' ? csrf : undefined, picture: picture instanceof File ? picture : undefined }
}

/** The hash that names a picture's bytes: its ETag and its URL's `v`. */
const etagOf = (bytes: Uint8Array) => new Bun.CryptoHasher('sha256').update(bytes).digest('base64url').slice(0, 22)

/**
 * /account's picture: an upload (PNG, JPEG or WebP by its bytes, at most 1 MiB, stored in the
 * database and served by /avatars/<user id>), or "Remove picture" (the generated initials again).
 * An https:// address saved in the profile form replaces an upload (users.ts updateProfile).
 */
export function avatarRoutes(ctx: AppContext) {
  async function signedIn(request: Request, csrfToken: string | undefined): Promise<Session> {
    const session = await readSession(ctx, request)
    if (!session || !csrfAccepted(ctx, request, session, csrfToken)) throw forbidden()
    return session
  }

  return new Elysia({ name: 'account-avatar' })
    .post(
      AVATAR_UPLOAD_PATH,
      async function uploadAvatar({ request, body }) {
        const form = body as AvatarForm
        const session = await signedIn(request, form.csrf_token)
        const refuse = (status: number, error: string) => accountPage(ctx, request, session, { status, error: () => error })
        const { picture } = form
        if (!picture || picture.size === 0) return refuse(400, NO_FILE)
        if (picture.size > AVATAR_MAX_BYTES) return refuse(413, TOO_LARGE)
        const bytes = new Uint8Array(await picture.arrayBuffer())
        const contentType = pictureType(bytes)
        if (!contentType) return refuse(415, NOT_A_PICTURE)
        const etag = etagOf(bytes)
        const userId = session.user.id
        await ctx.store.users.setAvatar(userId, { url: uploadedAvatarPath(userId, etag), upload: { contentType, bytes, etag } }, ctx.clock.now())
        await ctx.audit.record('user.updated', { userId, request, detail: { actor: userId, profile: true, picture: 'uploaded' } })
        return seeOther('/account')
      },
      { parse: parseAvatarForm, detail: { hide: true } },
    )
    .post(
      '/account/avatar/remove',
      async function removeAvatar({ request, body }) {
        const session = await signedIn(request, body.csrf_token)
        await ctx.store.users.setAvatar(session.user.id, { url: null }, ctx.clock.now())
        await ctx.audit.record('user.updated', { userId: session.user.id, request, detail: { actor: session.user.id, profile: true, picture: 'removed' } })
        return seeOther('/account')
      },
      { parse: parsePageForm, body: CsrfForm, detail: { hide: true } },
    )
}

/**
 * An uploaded picture, as /avatars/<user id> serves it: its own type, `nosniff` and a CSP that
 * lets nothing run (SPEC), an ETag (its hash) and, asked for by its current URL (`v` = the
 * hash), cached for good; by another `v`, revalidated.
 */
export function uploadedAvatar(avatar: AvatarUpload, request: Request): Response {
  const current = new URL(request.url).searchParams.get('v') === avatar.etag
  const headers = {
    'content-type': avatar.contentType,
    'content-security-policy': "default-src 'none'",
    'cache-control': current ? 'private, max-age=31536000, immutable' : 'private, no-cache',
    etag: `"${avatar.etag}"`,
    vary: 'Authorization, Cookie',
    ...NOSNIFF,
  }
  const known = request.headers.get('if-none-match')
  if (known !== null && known.split(',').some((tag) => tag.trim().replace(/^W\//, '') === headers.etag)) return new Response(null, { status: 304, headers })
  return new Response(avatar.bytes as Uint8Array<ArrayBuffer>, { headers })
}
