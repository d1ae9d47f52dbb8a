/**
 * An uploaded picture on /account (SPEC "Your account and your sessions", Profile; "Hostile
 * input": the one multipart page form): PNG, JPEG or WebP by its bytes, at most 1 MiB, served
 * same-origin with its own type, nosniff and `default-src 'none'`, cached by its ETag, and the
 * `picture` / `avatar_url` apps get. Anything else is refused and the picture stays.
 */
import { describe, expect, test } from 'bun:test'
import { CALLBACK, ORIGIN, PASSWORD, addClient, addUser, authorizeAndAllow, bearer, cookieHeader, createTestApp, mintToken, postForm, signIn, tokenRequest, type TestApp } from '../helpers'
import { insertUser, setUserDisabled } from '../../src/accounts/users'
import { uploadedAvatarPath } from '../../src/accounts/avatar'
import { openTestStorePair } from '../store'
import { get } from './mail-flows'
import { csrfOf, type Jar } from './mfa-flows'

/** A real 1×1 PNG. */
const PNG = Uint8Array.from(Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64'))
/** The start of a JPEG (SOI, APP0 JFIF) — its type is all the server reads. */
const JPEG = Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0xff, 0xd9])
/** A lossless WebP's header: RIFF, its size, WEBP, a VP8L chunk. */
const WEBP = Uint8Array.from([...Buffer.from('RIFF'), 0x1a, 0, 0, 0, ...Buffer.from('WEBPVP8L'), 0x0d, 0, 0, 0, 0x2f, 0, 0, 0, 0x10, 0x07, 0x10, 0x11, 0x11, 0x88, 0x88, 0xfe, 0x07, 0x00])
const SVG = new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(1)</script></svg>')
const GIF = new TextEncoder().encode('GIF89a\x01\x00\x01\x00\x00\x00\x00;')

const hashOf = (bytes: Uint8Array) => new Bun.CryptoHasher('sha256').update(bytes).digest('base64url').slice(0, 22)

async function signedIn() {
  const t = await createTestApp()
  const user = await addUser(t)
  return { t, user, jar: await signIn(t) }
}

/** The upload form as a browser sends it: multipart, the picture with the name and type the browser gives it. */
async function upload(t: TestApp, jar: Jar, bytes: Uint8Array, opts: { type?: string; name?: string; csrf?: string | null; extra?: (f: FormData) => void } = {}) {
  const form = new FormData()
  const csrf = opts.csrf === undefined ? await csrfOf(t, '/account', jar) : opts.csrf
  if (csrf !== null) form.append('csrf_token', csrf)
  form.append('picture', new File([bytes as Uint8Array<ArrayBuffer>], opts.name ?? 'me.png', { type: opts.type ?? 'image/png' }))
  opts.extra?.(form)
  return t.handle('/account/avatar', { method: 'POST', headers: { cookie: cookieHeader(jar) }, body: form })
}

const avatarRows = (t: TestApp) => t.rows('SELECT user_id, content_type, etag FROM user_avatars')

describe('uploading a picture', () => {
  test('a PNG is stored, shown on /account, served with its own type, nosniff, a CSP that runs nothing and its ETag; apps get its ISSUER URL', async () => {
    const { t, user, jar } = await signedIn()
    const res = await upload(t, jar, PNG)
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/account')
    const etag = hashOf(PNG)
    const path = `/avatars/${user.id}?v=${etag}`
    expect((await t.store.users.findUser(user.id))?.avatarUrl).toBe(path)
    expect(await avatarRows(t)).toEqual([{ user_id: user.id, content_type: 'image/png', etag }])
    const page = await (await get(t, '/account', jar)).text()
    expect(page).toContain(`<img src="${ORIGIN}${path}"`)
    // The address field stays empty (the upload is no address to edit) and says what an address would do.
    expect(page).toContain('id="profile-avatar" name="avatar_url" type="url" maxlength="2048" placeholder="https://" value=""')
    expect(page).toContain('You uploaded your picture. An address here replaces it.')
    expect(page).toContain('<form method="post" action="/account/avatar" enctype="multipart/form-data">')
    expect(page).toContain('>Remove picture</button>')

    const served = await get(t, path, jar)
    expect(served.status).toBe(200)
    expect(Object.fromEntries(['content-type', 'x-content-type-options', 'content-security-policy', 'etag', 'cache-control', 'vary'].map((h) => [h, served.headers.get(h)]))).toEqual({
      'content-type': 'image/png',
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'",
      etag: `"${etag}"`,
      'cache-control': 'private, max-age=31536000, immutable',
      vary: 'Authorization, Cookie',
    })
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(PNG)
    // Revalidated by its ETag: 304, no body.
    const again = await t.handle(path, { headers: { cookie: cookieHeader(jar), 'if-none-match': `W/"x", "${etag}"` } })
    expect([again.status, await again.text(), again.headers.get('etag')]).toEqual([304, '', `"${etag}"`])
    // An old URL (another `v`) gets the current picture, not cached for good.
    const stale = await get(t, `/avatars/${user.id}?v=old`, jar)
    expect([stale.status, stale.headers.get('cache-control')]).toEqual([200, 'private, no-cache'])
    // Like the initials: for a signed-in browser or a token with `profile`, nobody else.
    expect((await t.handle(path)).status).toBe(401)

    const app = await addClient(t)
    const token = await mintToken(t, app.client.id, user.id, 'profile')
    const info = (await (await t.handle('/api/oauth/userinfo', { headers: bearer(token) })).json()) as Record<string, string>
    expect(info.avatar_url).toBe(`${ORIGIN}${path}`)
    expect((await t.handle(path, { headers: bearer(token) })).status).toBe(200)
    // The id_token's `picture` too.
    const callback = await authorizeAndAllow(t, jar, { client_id: app.client.id, redirect_uri: CALLBACK, scope: 'openid profile', state: 's', nonce: 'n' })
    const tokens = await tokenRequest(t, { grant_type: 'authorization_code', code: callback.searchParams.get('code')!, client_id: app.client.id, client_secret: app.secret, redirect_uri: CALLBACK })
    const idToken = ((await tokens.json()) as { id_token: string }).id_token
    expect(JSON.parse(Buffer.from(idToken.split('.')[1]!, 'base64url').toString()).picture).toBe(`${ORIGIN}${path}`)
    // "Download all my data" names it by the same URL.
    const data = (await (await get(t, '/account/data', jar)).json()) as { profile: { avatar_url: string } }
    expect(data.profile.avatar_url).toBe(`${ORIGIN}${path}`)
    await t.ctx.audit.flush()
    expect(await t.rows("SELECT user_id FROM audit_events WHERE kind = 'user.updated'")).toEqual([{ user_id: user.id }])
  })

  test('the type comes from the bytes: a JPEG and a WebP are served as such whatever the browser declared; a new upload is a new URL', async () => {
    const { t, user, jar } = await signedIn()
    expect((await upload(t, jar, JPEG, { type: 'image/svg+xml', name: 'x.svg' })).status).toBe(303)
    expect((await get(t, `/avatars/${user.id}?v=${hashOf(JPEG)}`, jar)).headers.get('content-type')).toBe('image/jpeg')
    expect((await upload(t, jar, WEBP, { type: 'text/html', name: 'x.html' })).status).toBe(303)
    expect((await t.store.users.findUser(user.id))?.avatarUrl).toBe(`/avatars/${user.id}?v=${hashOf(WEBP)}`)
    const served = await get(t, `/avatars/${user.id}?v=${hashOf(WEBP)}`, jar)
    expect([served.headers.get('content-type'), new Uint8Array(await served.arrayBuffer())]).toEqual(['image/webp', WEBP])
    expect(await avatarRows(t)).toEqual([{ user_id: user.id, content_type: 'image/webp', etag: hashOf(WEBP) }])
  })

  test('an SVG, a GIF, text, an empty file, no file or two, and a picture over 1 MiB are refused with a clear message; the picture stays', async () => {
    const { t, user, jar } = await signedIn()
    expect((await upload(t, jar, PNG)).status).toBe(303)
    const before = `/avatars/${user.id}?v=${hashOf(PNG)}`
    const overMiB = new Uint8Array(1_048_577)
    overMiB.set(PNG)
    const notAPicture = 'That file is not a PNG, JPEG or WebP picture. Your picture was not changed.'
    const cases: Array<[string, () => Promise<Response>, number, string]> = [
      ['svg', () => upload(t, jar, SVG, { type: 'image/svg+xml', name: 'me.svg' }), 415, notAPicture],
      ['svg declared png', () => upload(t, jar, SVG, { type: 'image/png' }), 415, notAPicture],
      ['gif', () => upload(t, jar, GIF, { type: 'image/gif' }), 415, notAPicture],
      ['png signature only', () => upload(t, jar, PNG.slice(0, 8)), 415, notAPicture],
      ['text', () => upload(t, jar, new TextEncoder().encode('hello')), 415, notAPicture],
      ['empty', () => upload(t, jar, new Uint8Array(0)), 400, 'Choose a picture to upload: a PNG, JPEG or WebP file of at most 1 MiB.'],
      ['over 1 MiB', () => upload(t, jar, overMiB), 413, 'The picture is larger than 1 MiB. Your picture was not changed.'],
      ['two pictures', () => upload(t, jar, JPEG, { extra: (f) => f.append('picture', new File([JPEG], 'b.jpg')) }), 400, 'Choose a picture to upload'],
    ]
    for (const [name, send, status, message] of cases) {
      const res = await send()
      expect([name, res.status, (await res.text()).includes(message)]).toEqual([name, status, true])
    }
    const noFile = new FormData()
    noFile.append('csrf_token', await csrfOf(t, '/account', jar))
    expect((await t.handle('/account/avatar', { method: 'POST', headers: { cookie: cookieHeader(jar) }, body: noFile })).status).toBe(400)
    expect((await t.store.users.findUser(user.id))?.avatarUrl).toBe(before)
    expect(await avatarRows(t)).toEqual([{ user_id: user.id, content_type: 'image/png', etag: hashOf(PNG) }])
  })

  test('multipart only (415), the whole body at most 1 MiB and a little (413, declared or streamed), the CSRF token checked (403) — nothing changed', async () => {
    const { t, user, jar } = await signedIn()
    const csrf = await csrfOf(t, '/account', jar)
    const urlencoded = await postForm(t, '/account/avatar', { csrf_token: csrf, picture: 'iVBORw0KGgo' }, jar)
    expect(urlencoded.status).toBe(415)
    const declared = await t.handle('/account/avatar', { method: 'POST', headers: { cookie: cookieHeader(jar), 'content-type': 'multipart/form-data; boundary=x', 'content-length': String(2 * 1_048_576) }, body: 'x' })
    expect(declared.status).toBe(413)
    expect(await declared.text()).toContain('The picture is larger than 1 MiB. Your picture was not changed.')
    let sent = 0
    const streamed = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 8 * 1_048_576) return controller.close()
        sent += 65_536
        controller.enqueue(new Uint8Array(65_536))
      },
    })
    const chunked = await t.handle('/account/avatar', { method: 'POST', headers: { cookie: cookieHeader(jar), 'content-type': 'multipart/form-data; boundary=x' }, body: streamed })
    expect(chunked.status).toBe(413)
    expect(sent).toBeLessThan(3 * 1_048_576) // stopped soon after the limit, not read to the end
    // Another page keeps its 64 KiB.
    expect((await t.handle('/account/profile', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(70_000) }, body: 'x' })).status).toBe(413)
    const garbled = await t.handle('/account/avatar', { method: 'POST', headers: { cookie: cookieHeader(jar), 'content-type': 'multipart/form-data; boundary=x' }, body: '--x\r\nnonsense' })
    expect(garbled.status).toBe(400)
    expect((await upload(t, jar, PNG, { csrf: null })).status).toBe(403)
    expect((await upload(t, jar, PNG, { csrf: 'forged' })).status).toBe(403)
    expect((await upload(t, {}, PNG, { csrf: csrf })).status).toBe(403)
    expect((await t.store.users.findUser(user.id))?.avatarUrl).toBeNull()
    expect(await avatarRows(t)).toEqual([])
  })
})

describe('after an upload', () => {
  test('saving the profile with the address empty keeps it; an https:// address replaces it and deletes the upload', async () => {
    const { t, user, jar } = await signedIn()
    expect((await upload(t, jar, PNG)).status).toBe(303)
    const path = `/avatars/${user.id}?v=${hashOf(PNG)}`
    const csrf = await csrfOf(t, '/account', jar)
    expect((await postForm(t, '/account/profile', { csrf_token: csrf, full_name: 'Ann B', avatar_url: '' }, jar)).status).toBe(303)
    expect(await t.store.users.findUser(user.id)).toMatchObject({ fullName: 'Ann B', avatarUrl: path })
    expect((await avatarRows(t)).length).toBe(1)
    expect((await postForm(t, '/account/profile', { csrf_token: csrf, full_name: 'Ann B', avatar_url: 'https://img.example/ann.png' }, jar)).status).toBe(303)
    expect((await t.store.users.findUser(user.id))?.avatarUrl).toBe('https://img.example/ann.png')
    expect(await avatarRows(t)).toEqual([])
    expect((await get(t, path, jar)).status).toBe(404)
    // An upload replaces the address in turn.
    expect((await upload(t, jar, JPEG)).status).toBe(303)
    expect((await t.store.users.findUser(user.id))?.avatarUrl).toBe(`/avatars/${user.id}?v=${hashOf(JPEG)}`)
  })

  test('"Remove picture" goes back to the initials and deletes the upload; without the CSRF token it is 403', async () => {
    const { t, user, jar } = await signedIn()
    expect((await upload(t, jar, PNG)).status).toBe(303)
    expect((await postForm(t, '/account/avatar/remove', {}, jar)).status).toBe(403)
    expect((await avatarRows(t)).length).toBe(1)
    const res = await postForm(t, '/account/avatar/remove', { csrf_token: await csrfOf(t, '/account', jar) }, jar)
    expect([res.status, res.headers.get('location')]).toEqual([303, '/account'])
    expect((await t.store.users.findUser(user.id))?.avatarUrl).toBeNull()
    expect(await avatarRows(t)).toEqual([])
    const page = await (await get(t, '/account', jar)).text()
    expect(page).toContain(`<img src="${ORIGIN}/avatars/${user.id}.svg"`)
    expect(page).not.toContain('>Remove picture</button>')
  })

  test('deleting the account deletes the picture with it', async () => {
    const { t, user, jar } = await signedIn()
    expect((await upload(t, jar, PNG)).status).toBe(303)
    const res = await postForm(t, '/account/delete', { csrf_token: await csrfOf(t, '/account/delete', jar), password: PASSWORD }, jar)
    expect(res.status).toBe(200)
    expect(await t.store.users.findUser(user.id)).toBeUndefined()
    expect(await avatarRows(t)).toEqual([])
  })
})

describe('a disabled or deleted user', () => {
  /** What a picture that is not there answers: status, type and body (no oracle tells the two apart). */
  const answer = async (res: Response) => [res.status, res.headers.get('content-type'), await res.text()]

  test('their uploaded picture and their initials answer as missing ones (404, word for word), to a browser and to a token; enabled again, the picture is back', async () => {
    const { t, user: ann, jar: annJar } = await signedIn()
    expect((await upload(t, annJar, PNG)).status).toBe(303)
    const bob = await addUser(t, 'bob@example.com', 'Bob Roe')
    const jar = await signIn(t, 'bob@example.com')
    const app = await addClient(t)
    const token = await mintToken(t, app.client.id, bob.id, 'profile')
    const picture = `/avatars/${ann.id}?v=${hashOf(PNG)}`
    const initials = `/avatars/${ann.id}.svg`
    expect((await get(t, picture, jar)).status).toBe(200)
    expect((await get(t, initials, jar)).status).toBe(200)
    // The answers of a picture nobody uploaded and of initials nobody has.
    const none = await answer(await get(t, `/avatars/${bob.id}`, jar))
    const nobody = await answer(await get(t, `/avatars/${crypto.randomUUID()}.svg`, jar))
    expect(none[0]).toBe(404)
    expect(nobody[0]).toBe(404)

    expect(await setUserDisabled(t.ctx, ann.id, true)).toBe(true)
    expect(await answer(await get(t, picture, jar))).toEqual(none)
    expect(await answer(await t.handle(picture, { headers: { ...bearer(token), 'if-none-match': `"${hashOf(PNG)}"` } }))).toEqual(none)
    expect(await answer(await get(t, initials, jar))).toEqual(nobody)
    expect(await answer(await t.handle(initials, { headers: bearer(token) }))).toEqual(nobody)
    // Kept, not deleted: an admin who enables the account again brings it back.
    expect(await avatarRows(t)).toEqual([{ user_id: ann.id, content_type: 'image/png', etag: hashOf(PNG) }])
    expect(await setUserDisabled(t.ctx, ann.id, false)).toBe(true)
    expect((await get(t, picture, jar)).status).toBe(200)
    expect((await get(t, initials, jar)).status).toBe(200)

    expect(await t.store.users.deleteUser(ann.id)).toBe(true)
    expect(await answer(await get(t, picture, jar))).toEqual(none)
    expect(await answer(await get(t, initials, jar))).toEqual(nobody)
  })
})

describe('two instances on one database', () => {
  test('uploads, addresses and removals racing on two stores leave the picture and its row agreeing; each sees the other\'s upload', async () => {
    const pair = await openTestStorePair()
    try {
      const user = await insertUser(pair.store, { email: 'ann@example.com', fullName: 'Ann', avatarUrl: null, passwordHash: 'x' }, 0)
      const pictures = [PNG, JPEG, WEBP]
      for (let round = 0; round < 5; round++) {
        await Promise.all(
          Array.from({ length: 12 }, (_, i) => {
            const store = i % 2 ? pair.other : pair.store
            const bytes = pictures[(i + round) % 3]!
            if (i % 4 === 3) return store.users.setProfile(user.id, { fullName: 'Ann', avatarUrl: 'https://img.example/a.png' })
            if (i % 6 === 5) return store.users.setAvatar(user.id, { url: null }, i)
            const etag = hashOf(bytes)
            return store.users.setAvatar(user.id, { url: uploadedAvatarPath(user.id, etag), upload: { contentType: 'image/png', bytes, etag } }, i)
          }),
        )
        const url = (await pair.store.users.findUser(user.id))!.avatarUrl
        const rows = await pair.rows('SELECT etag FROM user_avatars WHERE user_id = ?', user.id)
        if (url?.startsWith('/')) expect(rows).toEqual([{ etag: url.slice(url.indexOf('?v=') + 3) }])
        else expect(rows).toEqual([])
      }
      const etag = hashOf(WEBP)
      await pair.store.users.setAvatar(user.id, { url: uploadedAvatarPath(user.id, etag), upload: { contentType: 'image/webp', bytes: WEBP, etag } }, 1)
      expect(await pair.other.users.findAvatar(user.id)).toEqual({ fullName: 'Ann', upload: { contentType: 'image/webp', bytes: WEBP, etag, updatedAt: 1 } })
    } finally {
      await pair.close()
    }
  })
})
