/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import { Elysia, t } from 'elysia'
import type { AppContext } from '../context'
import { clearCookie } from '../lib/cookies'
import { seeOther } from '../views/page'
import { ButtonForm } from '../views/layout'
import { parsePageForm } from '../web/forms'
import { CsrfForm } from './model'
import { accountPage } from './security'
import { cookieNames, deleteSessionsOf, type Session } from './sessions'
import { forbidden } from './sign-in'
import { describeUserAgent } from './user-agent'
import { csrfAccepted, readSession } from './web'
import { formatTime, raw, t as msg, th } from '../i18n'
import { isKnownAddress } from '../web/client-address'

const SignOutSessionForm = t.Object({ csrf_token: t.Optional(t.String()), session: t.Optional(t.String()) })

/** A session as "Where you're signed in" shows it. `handle`: its public id (the sid), never its secret token. */
export interface SessionView {
  handle: string
  /** The browser and system, in the page's language: call it while rendering. */
  device: () => string
  address: string
  createdAt: number
  lastActiveAt: number
  current: boolean
}

/** The user's live sessions, this one first. */
export async function sessionsOf(ctx: AppContext, session: Session): Promise<SessionView[]> {
  const now = ctx.clock.now()
  const rows = await ctx.store.sessions.listSessions(session.user.id, now, now - ctx.config.sessionIdleTtl * 1000)
  const views = rows.map((r) => ({
    handle: r.sid,
    device: () => describeUserAgent(r.userAgent),
    address: r.address,
    createdAt: r.createdAt,
    // This request is activity too, whether or not it is written yet.
    lastActiveAt: r.sid === session.sid ? now : r.lastActiveAt,
    current: r.sid === session.sid,
  }))
  return views.sort((a, b) => Number(b.current) - Number(a.current))
}

/** "2026-01-01 09:30 UTC" in English: a time in the reader's zone, naming it, as in the "New sign-in" notice. */
function Moment(props: { at: number }): JSX.Element {
  return (
    <time datetime={new Date(props.at).toISOString()} safe>
      {formatTime(props.at)}
    </time>
  )
}

/** /account → "Where you're signed in" (SPEC "Sessions"). */
export function SessionsSection(props: { sessions: SessionView[]; csrf: string }): JSX.Element {
  const others = props.sessions.some((s) => !s.current)
  return (
    <section id="sessions">
      <h2>{th('sessions.title')}</h2>
      <ul class="apps sessions">
        {props.sessions.map((s) => (
          <li>
            <div>
              <strong safe>{s.device()}</strong>
              {s.current ? <span class="badge"> {th('sessions.thisDevice')}</span> : ''}
              <div class="muted" safe>
                {isKnownAddress(s.address) ? s.address : msg('sessions.unknownAddress')}
              </div>
              <div class="muted">
                {th('sessions.times', { signedIn: raw(<Moment at={s.createdAt} />), lastActive: raw(<Moment at={s.lastActiveAt} />) })}
              </div>
            </div>
            {/* Each "Sign out" names its device for screen readers (the page's own "Sign out" is this browser's too). */}
            <div class="actions">
              <ButtonForm
                action="/account/sessions/sign-out"
                csrf={props.csrf}
                fields={{ session: s.handle }}
                label={msg('sessions.signOut')}
                ariaLabel={s.current ? msg('sessions.signOutThisDevice', { device: s.device() }) : msg('sessions.signOutDevice', { device: s.device() })}
                kind="secondary"
              />
            </div>
          </li>
        ))}
      </ul>
      {others ? (
        <div class="actions">
          <ButtonForm action="/account/sessions/sign-out-others" csrf={props.csrf} label={msg('sessions.signOutOthers')} kind="secondary" />
        </div>
      ) : (
        ''
      )}
    </section>
  )
}

/** Sign out one session of the user's, or all but this one. */
export function sessionRoutes(ctx: AppContext) {
  const secure = ctx.config.secureCookies
  const names = cookieNames(secure)
  async function signedIn(request: Request, csrfToken: string | undefined): Promise<Session> {
    const session = await readSession(ctx, request)
    if (!session || !csrfAccepted(ctx, request, session, csrfToken)) throw forbidden()
    return session
  }
  return new Elysia({ name: 'account-sessions' })
    .post(
      '/account/sessions/sign-out',
      async function signOutSession({ request, body }) {
        const session = await signedIn(request, body.csrf_token)
        const handle = body.session ?? ''
        // Only the user's own sessions: another's (or an unknown) handle changes nothing.
        if (!(await ctx.store.sessions.deleteSessionOf(session.user.id, handle))) return accountPage(ctx, request, session, { status: 404, error: () => msg('account.noSuchSession') })
        await ctx.audit.record('user.signed_out', { userId: session.user.id, request, detail: { sessions: 'one' } })
        if (handle === session.sid) return seeOther('/login', [clearCookie(names.session, secure)])
        return seeOther('/account#sessions')
      },
      { parse: parsePageForm, body: SignOutSessionForm, detail: { hide: true } },
    )
    .post(
      '/account/sessions/sign-out-others',
      async function signOutOthers({ request, body }) {
        const session = await signedIn(request, body.csrf_token)
        await deleteSessionsOf(ctx.store, session.user.id, session)
        await ctx.audit.record('user.signed_out', { userId: session.user.id, request, detail: { sessions: 'others' } })
        return seeOther('/account#sessions')
      },
      { parse: parsePageForm, body: CsrfForm, detail: { hide: true } },
    )
}
