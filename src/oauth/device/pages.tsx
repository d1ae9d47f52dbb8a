/** @jsxRuntime classic */
/** @jsx Html.createElement */
/** @jsxFrag Html.Fragment */
import { Html } from '@elysiajs/html'
import { Elysia, t } from 'elysia'
import { hasTwoFactors, type Session } from '../../accounts/sessions'
import { csrfAccepted, formCsrf, loginUrl, readSession } from '../../accounts/web'
import type { AppContext } from '../../context'
import type { DeviceCodeRecord, ResourceRecord } from '../../db/store'
import { PageError } from '../../lib/errors'
import type { PageErrorKey } from '../../i18n/types'
import { formatTime, raw, t as msg, th } from '../../i18n'
import { speechOf } from '../../i18n/request'
import { CsrfField, Hidden, Layout } from '../../views/layout'
import { htmlPage, seeOther } from '../../views/page'
import { clientAddressOf, isKnownAddress, rateLimitKey } from '../../web/client-address'
import { parsePageForm } from '../../web/forms'
import { DecisionButtons } from '../authorize/consent-page'
import { findClient, type Client } from '../clients'
import { newCode } from '../codes'
import { scopeOrder, scopeWords } from '../scopes'
import { formatUserCode, normalizeUserCode, userCodeHash } from './codes'

/** The redirect_uri a device grant's code is bound to: no browser is sent anywhere (RFC 8628). */
export const DEVICE_REDIRECT = 'urn:ietf:params:oauth:grant-type:device_code'

/** Wrong user codes per client address and minute before /device answers 429 (RFC 8628 §5.1: codes are guessable). */
const WRONG_CODES_PER_MINUTE = 10
const MINUTE = 60_000

function CodeForm(props: { error?: string }) {
  return (
    <Layout title={msg('device.title')}>
      <h1>{th('device.title')}</h1>
      {props.error ? <p class="error" role="alert" safe>{props.error}</p> : ''}
      <p>{th('device.enterCode')}</p>
      <form method="get" action="/device">
        <label for="user_code">{th('device.code')}</label>
        <input id="user_code" name="user_code" type="text" autocomplete="off" autocapitalize="characters" spellcheck="false" placeholder="XXXX-XXXX" required dir="ltr" />
        <div class="actions">
          <button type="submit">{th('device.continue')}</button>
        </div>
      </form>
    </Layout>
  )
}

function DeviceConsentPage(props: { client: Client; resource: ResourceRecord | undefined; device: DeviceCodeRecord; userCode: string; session: Session; csrf: string }) {
  const { client, resource, device } = props
  const requested = <time datetime={new Date(device.createdAt).toISOString()} safe>{formatTime(device.createdAt, 'second')}</time>
  return (
    <Layout title={msg('device.title')}>
      <h1>
        {resource
          ? th('device.wantsResource', { app: raw(<span safe>{client.name}</span>), resource: raw(<strong safe>{resource.name}</strong>) })
          : th('device.wantsAccount', { app: raw(<span safe>{client.name}</span>) })}
      </h1>
      <p>
        {isKnownAddress(device.address)
          ? th('device.requested', { when: raw(requested), address: raw(<strong safe>{device.address}</strong>) })
          : th('device.requestedUnknownAddress', { when: raw(requested) })}
      </p>
      <p class="warning" role="alert">
        {th('device.warning')}
      </p>
      <p class="muted">{th('consent.signedInAs', { name: raw(<strong safe>{props.session.user.fullName}</strong>), email: raw(<span safe>{props.session.user.email}</span>) })}</p>
      <p>{th('consent.willBeAble')}</p>
      <ul class="scopes">
        {device.scope.split(' ').map((s) => (
          <li data-scope={s} safe>
            {scopeWords(s, resource?.scopes)}
          </li>
        ))}
      </ul>
      <form method="post" action="/device">
        <CsrfField token={props.csrf} />
        <Hidden name="user_code" value={props.userCode} />
        <DecisionButtons />
      </form>
    </Layout>
  )
}

function DonePage(props: { allowed: boolean; client: string }) {
  return (
    <Layout title={msg('device.title')}>
      <h1>{props.allowed ? th('device.connected') : th('device.denied')}</h1>
      <p>{props.allowed ? th('device.connectedText', { app: props.client }) : th('device.deniedText', { app: props.client })}</p>
    </Layout>
  )
}

/**
 * /device (RFC 8628 §3.3): the user types the code (or follows verification_uri_complete), signs
 * in, and allows or denies on a page that names the app, the scopes, when and from where the
 * request came. Wrong codes are counted per client address, on every instance.
 */
export function devicePages(ctx: AppContext) {
  const throttleKey = (request: Request) => `device:${rateLimitKey(clientAddressOf(request, ctx.config.trustedProxies))}`
  /**
   * One try of this address, taken in the same atomic update that checks the limit (so codes
   * sent in parallel cannot all pass a check made before any of them counted): the seconds to
   * wait when it typed too many wrong codes this minute, else 0 with the try counted.
   */
  const take = (request: Request) =>
    ctx.store.throttle.updateThrottle(throttleKey(request), (row) => {
      const now = ctx.clock.now()
      const fresh = !row || now - row.startedAt >= MINUTE
      if (!fresh && row!.count >= WRONG_CODES_PER_MINUTE) return { row: row ?? null, result: Math.max(1, Math.ceil((row!.startedAt + MINUTE - now) / 1000)) }
      return { row: fresh ? { count: 1, startedAt: now, lastAt: now } : { count: row!.count + 1, startedAt: row!.startedAt, lastAt: now }, result: 0 }
    })
  /** A right code gives its try back: only wrong codes count. */
  const giveBack = (request: Request) =>
    ctx.store.throttle.updateThrottle(throttleKey(request), (row) => ({ row: row && row.count > 0 ? { ...row, count: row.count - 1 } : (row ?? null), result: undefined }))

  /** The pending request a typed code names, or the page that says why not (429 when guessing). */
  async function lookUp(request: Request, raw: string): Promise<{ device: DeviceCodeRecord; code: string } | Response> {
    const wait = await take(request)
    const speech = speechOf(ctx.config, request)
    if (wait > 0) return htmlPage(() => <CodeForm error={msg('device.tooMany')} />, { status: 429, headers: { 'retry-after': String(wait) }, speech })
    const code = normalizeUserCode(raw)
    const device = code && (await ctx.store.devices.findPendingByUserCode(userCodeHash(code), ctx.clock.now()))
    if (code && device) {
      await giveBack(request)
      return { device, code }
    }
    ctx.log.warn('device code refused', { client: clientAddressOf(request, ctx.config.trustedProxies) })
    return htmlPage(() => <CodeForm error={msg('device.invalid')} />, { status: 400, speech })
  }

  async function clientOf(device: DeviceCodeRecord): Promise<Client> {
    const client = await findClient(ctx.store, device.clientId)
    if (!client) throw new PageError(400, 'error.deviceAppGone')
    return client
  }

  /** What stops this user from allowing it: the app's groups, its two-factor rule, an unverified email. */
  async function refusal(client: Client, session: Session): Promise<PageErrorKey | undefined> {
    if (!(await ctx.store.groups.mayAuthorize(client.id, session.user.id))) return 'error.deviceNoGroup'
    if (client.requireMfa && !hasTwoFactors(session)) return 'error.deviceNeedsMfa'
    if (ctx.config.emailVerification === 'required' && !session.user.emailVerified) return 'error.deviceVerifyEmail'
    return undefined
  }

  return new Elysia({ name: 'oauth-device-pages' })
    .get(
      '/device',
      async function devicePage({ request, query }) {
        if (query.user_code === undefined || query.user_code === '') return htmlPage(() => <CodeForm />, { speech: speechOf(ctx.config, request, { user: (await readSession(ctx, request))?.user }) })
        const found = await lookUp(request, query.user_code)
        if (found instanceof Response) return found
        const session = await readSession(ctx, request)
        const shown = formatUserCode(found.code)
        if (!session) return seeOther(loginUrl(`/device?user_code=${shown}`))
        const client = await clientOf(found.device)
        const resource = found.device.resource === null ? undefined : await ctx.resources.byUri(found.device.resource)
        const csrf = formCsrf(ctx, request, session)
        return htmlPage(() => <DeviceConsentPage client={client} resource={resource} device={found.device} userCode={shown} session={session} csrf={csrf.token} />, {
          speech: speechOf(ctx.config, request, { user: session.user }),
        })
      },
      { query: t.Object({ user_code: t.Optional(t.String()) }), detail: { hide: true } },
    )
    .post(
      '/device',
      async function deviceDecision({ request, body }) {
        const session = await readSession(ctx, request)
        if (!session || !csrfAccepted(ctx, request, session, body.csrf_token))
          throw new PageError(403, 'error.deviceForbidden')
        const found = await lookUp(request, typeof body.user_code === 'string' ? body.user_code : '')
        if (found instanceof Response) return found
        const client = await clientOf(found.device)
        const now = ctx.clock.now()
        const hash = userCodeHash(found.code)
        const refused = body.decision === 'allow' ? await refusal(client, session) : undefined
        if (refused) throw new PageError(403, refused)
        const already = () => new PageError(400, 'error.deviceDecided')
        if (body.decision !== 'allow') {
          if (!(await ctx.store.devices.denyDeviceCode(hash, now, session.user.id))) throw already()
          return htmlPage(() => <DonePage allowed={false} client={client.name} />, { speech: speechOf(ctx.config, request, { user: session.user }) })
        }
        const { device } = found
        const resource = device.resource === null ? undefined : await ctx.resources.byUri(device.resource)
        // The code the device's next poll exchanges: bound to the client and this marker, living as long as the device code;
        // its id_token names this browser's session (`sid`), whose end the device's app hears of (Back-Channel Logout §2.7).
        const { record } = newCode(
          { clientId: client.id, userId: session.user.id, redirectUri: DEVICE_REDIRECT, scope: device.scope, codeChallenge: null, authTime: session.authTime, amr: session.amr.join(' '), resource: device.resource, sid: session.sid },
          now,
          Math.max(1, Math.ceil((device.expiresAt - now) / 1000)),
        )
        // The decision, the code and the consent commit together: an Allow that lost to another decision records nothing.
        if (!(await ctx.store.devices.allowDeviceCode(hash, now, record, { scopes: device.scope.split(' '), canonicalOrder: scopeOrder(resource?.scopes) }))) throw already()
        await ctx.audit.record('consent.granted', { userId: session.user.id, clientId: client.id, request, detail: { scope: device.scope, grant: 'device_code' } })
        return htmlPage(() => <DonePage allowed client={client.name} />, { speech: speechOf(ctx.config, request, { user: session.user }) })
      },
      { parse: parsePageForm, body: t.Object({ csrf_token: t.Optional(t.Unknown()), user_code: t.Optional(t.Unknown()), decision: t.Optional(t.Unknown()) }), detail: { hide: true } },
    )
}
