import type { AppContext } from '../context'
import { reauthenticated, type Session } from '../accounts/sessions'
import { emailHash } from '../accounts/sign-in'
import { SignInLimits } from '../accounts/throttle'
import { csrfAccepted, readSession } from '../accounts/web'
import { NotFound, PageError } from '../lib/errors'
import type { Saying } from './pages'
import { verifyPassword } from '../lib/crypto'
import { parsePageForm, type FormFields } from '../web/forms'

/** A destructive action, or one that widens access, asks for the password or a passkey again when the sign-in is older than this (SPEC). */
export const REAUTH_AFTER_MS = 15 * 60 * 1000

/**
 * The admin authorization model: a signed-in session (both factors given, when the account has
 * two — a sign-in waiting for its second is no session) whose user is an admin, read from the
 * database with the session on every request, so a demotion or a disabling takes effect at
 * once. Anyone else gets exactly the answer of a path no route serves: nothing says /admin exists.
 */
export async function adminSession(ctx: AppContext, request: Request): Promise<Session> {
  const session = await readSession(ctx, request)
  if (session?.admin) return session
  throw new NotFound(`no route for ${request.method} ${new URL(request.url).pathname}`)
}

/** One text field: a repeated field is bad input. */
export function field(body: FormFields, name: string): string {
  const value = body[name]
  if (Array.isArray(value)) throw new PageError(400, 'error.fieldTwice', { name })
  return value ?? ''
}

/** Every value of a repeatable field (checkboxes). */
export const fieldValues = (body: FormFields, name: string): string[] => ([] as string[]).concat(body[name] ?? [])

/** A textarea's non-empty lines, trimmed. */
export const lines = (text: string): string[] =>
  text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean)

export type Freshness = 'fresh' | 'ask' | { refused: Saying; status: number }

/**
 * What every /admin form goes through: the admin check first (a stranger's POST learns nothing
 * from a 415 or a 413), then the page form rules (urlencoded, 64 KiB), then the CSRF token; and,
 * for destructive actions and those that widen access, the re-authentication rule.
 */
export function adminForms(ctx: AppContext) {
  const accepted = new WeakMap<Request, Session>()
  const limits = new SignInLimits(ctx.store, ctx.clock, ctx.config.loginAttemptsPerMinute)
  return {
    async parse({ request }: { request: Request }): Promise<FormFields> {
      const session = await adminSession(ctx, request)
      const fields = await parsePageForm({ request })
      if (!csrfAccepted(ctx, request, session, fields.csrf_token))
        throw new PageError(403, 'error.adminForbidden')
      accepted.set(request, session)
      return fields
    },

    /** The admin session a form was accepted for (its parse ran first). */
    session(request: Request): Session {
      const session = accepted.get(request)
      if (!session) throw new Error('admin form read without its parser')
      return session
    },

    /**
     * A sign-in of the last 15 minutes is enough; otherwise the form comes back asking for the
     * password (its own fields kept), guessed under the sign-in budgets, and a right one moves
     * the session's auth_time to now. A passkey-only admin signs in again (the page links to
     * it) and repeats the action.
     */
    async freshness(request: Request, session: Session, body: FormFields): Promise<Freshness> {
      const now = ctx.clock.now()
      if (now - session.authTime <= REAUTH_AFTER_MS) return 'fresh'
      const password = field(body, 'confirm_password')
      if (!password) return 'ask'
      const key = emailHash(session.user.email)
      const throttled = await limits.takeAttempt(ctx, request, key, 'admin re-authentication throttled')
      if (throttled) return { refused: { key: 'admin.error.tooMany', params: { count: throttled.wait } }, status: 429 }
      const account = await ctx.store.users.findUserByEmail(session.user.email)
      if (!account?.passwordHash || password.length > 256 || !(await verifyPassword(password, account.passwordHash))) return { refused: { key: 'admin.error.wrongPassword' }, status: 401 }
      await limits.succeeded(key)
      await reauthenticated(ctx.store, session, now)
      return 'fresh'
    },
  }
}
