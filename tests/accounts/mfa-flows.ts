/** Browser steps for the passkey and two-step tests: each one what a page's form (and script) would send. */
import { TOTP } from 'otpauth'
import { ORIGIN, cookieHeader, cookiesFrom, csrfFrom, postForm, type TestApp } from '../helpers'
import type { Ceremony, SoftAuthenticator } from '../soft-authenticator'

export const LOCAL: Ceremony = { origin: ORIGIN, rpId: 'localhost' }

export type Jar = Record<string, string>

/** A page's CSRF token, for the browser with this jar. */
export async function csrfOf(t: TestApp, path: string, jar: Jar): Promise<string> {
  const page = await t.handle(path, { headers: { cookie: cookieHeader(jar) } })
  cookiesFrom(page, jar)
  return csrfFrom(await page.text())
}

/** "Add a passkey" on /account: options, the authenticator's answer, the form POST. */
export async function addPasskey(t: TestApp, jar: Jar, authenticator: SoftAuthenticator, opts: { name?: string; ceremony?: Ceremony } = {}) {
  const csrf = await csrfOf(t, '/account', jar)
  const options = await (await postForm(t, '/account/passkeys/options', { csrf_token: csrf }, jar)).json()
  const credential = await authenticator.register(options, opts.ceremony ?? LOCAL)
  return postForm(t, '/account/passkeys', { csrf_token: csrf, name: opts.name ?? 'Laptop', credential: JSON.stringify(credential) }, jar)
}

/** "Confirm with a passkey" on `page` (/account or /account/delete): the CSRF token and the fresh assertion the script puts in the form. */
export async function passkeyConfirmation(t: TestApp, jar: Jar, authenticator: SoftAuthenticator, opts: { page?: string; ceremony?: Ceremony } = {}) {
  const csrf = await csrfOf(t, opts.page ?? '/account', jar)
  const res = await postForm(t, '/account/passkeys/confirm-options', { csrf_token: csrf }, jar)
  if (res.status !== 200) throw new Error(`confirm options: ${res.status}`)
  const options = (await res.json()) as { challenge: string; allowCredentials?: Array<{ id: string }> }
  return { csrf, options, credential: JSON.stringify(await authenticator.assert(options, opts.ceremony ?? LOCAL)) }
}

/** "Sign in with a passkey" on /login (a fresh browser unless a jar is given). */
export async function passkeySignIn(
  t: TestApp,
  authenticator: SoftAuthenticator,
  opts: { jar?: Jar; ceremony?: Ceremony & { counter?: number }; returnTo?: string; page?: string } = {},
) {
  const jar = opts.jar ?? {}
  const csrf = await csrfOf(t, opts.page ?? '/login', jar)
  const options = await (await postForm(t, '/login/passkey/options', { csrf_token: csrf }, jar)).json()
  const credential = await authenticator.assert(options, opts.ceremony ?? LOCAL)
  const res = await postForm(t, '/login/passkey', { csrf_token: csrf, credential: JSON.stringify(credential), return_to: opts.returnTo }, jar)
  cookiesFrom(res, jar)
  return { res, jar, options, credential, csrf }
}

/** Turns TOTP on for the signed-in browser; returns the authenticator app's view of it and the recovery codes. */
export async function turnOnTotp(t: TestApp, jar: Jar): Promise<{ totp: TOTP; codes: string[] }> {
  const csrf = await csrfOf(t, '/account', jar)
  const setup = await postForm(t, '/account/two-step/setup', { csrf_token: csrf }, jar)
  if (setup.status !== 303) throw new Error(`set-up: ${setup.status}`)
  const page = await (await t.handle('/account/two-step', { headers: { cookie: cookieHeader(jar) } })).text()
  const secret = /<code class="secret">([A-Z2-7 ]+)<\/code>/.exec(page)![1]!.replace(/ /g, '')
  const totp = new TOTP({ secret, algorithm: 'SHA1', digits: 6, period: 30 })
  const confirmed = await postForm(t, '/account/two-step/confirm', { csrf_token: csrfFrom(page), code: totp.generate({ timestamp: t.clock.now() }) }, jar)
  if (confirmed.status !== 200) throw new Error(`confirm: ${confirmed.status}`)
  const codes = [...(await confirmed.text()).matchAll(/<code>([a-z2-7-]{19})<\/code>/g)].map((m) => m[1]!)
  return { totp, codes }
}

/** Email and password on /login; the jar then holds a pending or a full session. */
export async function passwordStep(t: TestApp, email: string, password: string, returnTo?: string) {
  const jar: Jar = {}
  const csrf = await csrfOf(t, '/login', jar)
  const res = await postForm(t, '/login', { email, password, csrf_token: csrf, return_to: returnTo }, jar)
  cookiesFrom(res, jar)
  return { res, jar }
}

/** A code (or recovery code) on /login/two-step. */
export async function twoStep(t: TestApp, jar: Jar, fields: { code?: string; recovery_code?: string; return_to?: string }) {
  const csrf = await csrfOf(t, '/login/two-step', jar)
  const res = await postForm(t, '/login/two-step', { csrf_token: csrf, ...fields }, jar)
  cookiesFrom(res, jar)
  return res
}
