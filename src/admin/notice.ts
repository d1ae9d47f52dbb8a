import type { AppContext } from '../context'
import type { Session } from '../accounts/sessions'
import { clearCookie, cookie, parseCookies } from '../lib/cookies'
import { constantTimeEqual, hmacSha256 } from '../lib/crypto'

/** A notice waits this long for the page it is shown on (the 303 right after the action). */
const NOTICE_SECONDS = 60
const MAX_NOTICE = 500

const nameOf = (secure: boolean) => `${secure ? '__Host-' : ''}lk_notice`
const macOf = (ctx: AppContext, session: Session, text: string) => hmacSha256(ctx.csrfKey, `notice:${session.token}:${text}`)

/**
 * What an /admin action did, carried to the page it redirects to (SPEC "/admin": every action
 * ends on a notice) in a short-lived cookie: the text, signed with the server's key for this
 * session — so nobody else can plant a message on an admin's page — and shown once, as text.
 */
export function noticeCookie(ctx: AppContext, session: Session, notice: string): string {
  const text = Buffer.from(notice.slice(0, MAX_NOTICE)).toString('base64url')
  return cookie(nameOf(ctx.config.secureCookies), `${text}.${macOf(ctx, session, text)}`, { secure: ctx.config.secureCookies, maxAgeSeconds: NOTICE_SECONDS })
}

/** The notice waiting for this page, if one is (and the cookie that removes it: shown once). */
export function takeNotice(ctx: AppContext, request: Request, session: Session): { notice?: string; cookies: string[] } {
  const name = nameOf(ctx.config.secureCookies)
  const value = parseCookies(request.headers.get('cookie'))[name]
  if (value === undefined) return { cookies: [] }
  const cookies = [clearCookie(name, ctx.config.secureCookies)]
  const [text, mac] = value.split('.', 2)
  if (!text || !mac || text.length > MAX_NOTICE * 2 || !constantTimeEqual(mac, macOf(ctx, session, text))) return { cookies }
  return { notice: Buffer.from(text, 'base64url').toString('utf8'), cookies }
}
