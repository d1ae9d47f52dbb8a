import { speaking, type Speech } from '../i18n'

/** Security headers every HTML page carries (SPEC "Pages"). */
export function pageHeaders(formAction: readonly string[] = []): Record<string, string> {
  // form-action also governs the redirect that follows a form POST in Chromium, so the consent
  // page adds the verified callback's origin rather than dropping the directive.
  const csp = [
    "default-src 'none'",
    "style-src 'self'",
    // Passkey pages run two same-origin scripts (no inline script) that fetch their options.
    "script-src 'self'",
    "connect-src 'self'",
    "img-src 'self' https: http: data:",
    `form-action 'self'${formAction.map((s) => ' ' + s).join('')}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ')
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': csp,
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
  }
}

/**
 * The CSP form-action source for a verified redirect URI, so the browser follows a form POST's
 * redirect chain to the app (consent; a sign-in that ends at the app's callback).
 */
export function formActionSource(redirectUri: string): string {
  const url = new URL(redirectUri)
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol
}

/**
 * A page. `body` is a function rendered speaking `init.speech` (the request's language, from
 * speechOf): every `t()` inside it, the layout's `<html lang dir>` and its language menu follow it.
 */
export function htmlPage(
  body: JSX.Element | (() => JSX.Element),
  init: { status?: number; formAction?: readonly string[]; cookies?: readonly string[]; headers?: Record<string, string>; speech?: Speech } = {},
): Response {
  if (typeof body === 'function') body = init.speech ? speaking(init.speech, body) : body()
  const headers = new Headers(pageHeaders(init.formAction))
  for (const c of init.cookies ?? []) headers.append('set-cookie', c)
  for (const [name, value] of Object.entries(init.headers ?? {})) headers.set(name, value)
  if (typeof body !== 'string') throw new TypeError('pages render synchronously')
  return new Response('<!doctype html>' + body, { status: init.status ?? 200, headers })
}

/** A 303 redirect that leaks nothing through Referer and is never cached. */
export function seeOther(location: string, cookies: readonly string[] = []): Response {
  const h = new Headers({ location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', 'x-content-type-options': 'nosniff' })
  for (const c of cookies) h.append('set-cookie', c)
  return new Response(null, { status: 303, headers: h })
}
