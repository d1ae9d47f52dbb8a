import type { AppContext } from '../context'
import type { Session } from '../accounts/sessions'
import { clearCookie, cookie, parseCookies } from '../lib/cookies'
import { constantTimeEqual, hmacSha256 } from '../lib/crypto'
import { CATALOGS } from '../i18n/catalog'
import type { Saying } from './pages'

/** A notice waits this long for the page it is shown on (the 303 right after the action). */
const NOTICE_SECONDS = 60
const MAX_NOTICE = 1500
/** Each value a notice names is cut to this (a resource's URI can be long; the cookie stays small and whole). */
const MAX_VALUE = 200

const nameOf = (secure: boolean) => `${secure ? '__Host-' : ''}lk_notice`
const macOf = (ctx: AppContext, session: Session, text: string) => hmacSha256(ctx.csrfKey, `notice:${session.token}:${text}`)

/**
 * What an /admin action did, carried to the page it redirects to (SPEC "/admin": every action
 * ends on a notice) in a short-lived cookie: the text, signed with the server's key for this
 * session — so nobody else can plant a message on an admin's page — and shown once, as text.
 * It carries the message's key and values, so the page says it in the admin's language.
 */
export function noticeCookie(ctx: AppContext, session: Session, notice: Saying): string {
  const params = notice.params && Object.fromEntries(Object.entries(notice.params).map(([name, value]) => [name, typeof value === 'string' ? value.slice(0, MAX_VALUE) : value]))
  const text = Buffer.from(JSON.stringify({ key: notice.key, params })).toString('base64url')
  return cookie(nameOf(ctx.config.secureCookies), `${text}.${macOf(ctx, session, text)}`, { secure: ctx.config.secureCookies, maxAgeSeconds: NOTICE_SECONDS })
}

/** The notice waiting for this page, if one is (and the cookie that removes it: shown once). */
export function takeNotice(ctx: AppContext, request: Request, session: Session): { notice?: Saying; cookies: string[] } {
  const name = nameOf(ctx.config.secureCookies)
  const value = parseCookies(request.headers.get('cookie'))[name]
  if (value === undefined) return { cookies: [] }
  const cookies = [clearCookie(name, ctx.config.secureCookies)]
  const [text, mac] = value.split('.', 2)
  if (!text || !mac || text.length > MAX_NOTICE * 2 || !constantTimeEqual(mac, macOf(ctx, session, text))) return { cookies }
  return { notice: sayingOf(Buffer.from(text, 'base64url').toString('utf8')), cookies }
}

/** A signed notice's message, when it is one of the catalog's (a cut or older cookie is none). */
function sayingOf(json: string): Saying | undefined {
  try {
    const value = JSON.parse(json) as Saying
    return typeof value?.key === 'string' && Object.hasOwn(CATALOGS.en, value.key) && (value.params === undefined || typeof value.params === 'object') ? value : undefined
  } catch {
    return undefined
  }
}
