/**
 * The messages the server sends (SPEC "Email"): fixed subjects, a text and an HTML part, absolute
 * links from ISSUER, no tracking. Every value that came from a user is escaped in the HTML part;
 * addresses and names were refused at input if they held CR, LF or other control characters, and
 * nodemailer encodes headers besides. Each is written in its recipient's language (their choice on
 * /account, else DEFAULT_LOCALE) with times in their zone (SPEC "Brand and language").
 */
import type { NewMail } from '../db/store'
import { formatTime, speaking, speech, t, type Speech } from '../i18n'
import { isKnownAddress } from '../web/client-address'
import { isLocale, type Locale } from '../i18n/locales'

const escape = (s: string) => Bun.escapeHTML(s)

/** Who a message goes to, the language and zone it is written in, and the operator's name it is signed with (BRAND_NAME). */
export interface Recipient {
  email: string
  speech: Speech
  brand: string
}

/** A user (or an address about to be one) as a recipient: their language and zone, else DEFAULT_LOCALE and UTC. */
export function recipient(config: { defaultLocale: Locale; brand: { name: string } }, user: { email: string; locale?: string | null; timeZone?: string | null }): Recipient {
  return { email: user.email, speech: speech(isLocale(user.locale) ? user.locale : config.defaultLocale, user.timeZone ?? 'UTC'), brand: config.brand.name }
}

function message(to: Recipient, subject: string, lines: string[], link?: { url: string; label: string }): NewMail {
  const text = [...lines, ...(link ? ['', `${link.label}: ${link.url}`] : []), '', `— ${to.brand}`].join('\n')
  const html = [
    `<!doctype html><html lang="${to.speech.locale}" dir="${to.speech.dir}"><body style="font-family:system-ui,sans-serif;line-height:1.5">`,
    ...lines.map((l) => `<p>${escape(l)}</p>`),
    ...(link ? [`<p><a href="${escape(link.url)}">${escape(link.label)}</a></p>`, `<p style="color:#6b7280;font-size:0.9em">${escape(link.url)}</p>`] : []),
    `<p style="color:#6b7280">— ${escape(to.brand)}</p></body></html>`,
  ].join('')
  return { to: to.email, subject, text, html }
}

/** A message written in its recipient's language: `write` runs speaking it. */
const written = (to: Recipient, write: () => [subject: string, lines: string[], link?: { url: string; label: string }]): NewMail =>
  speaking(to.speech, () => message(to, ...write()))

export const verifyEmailMessage = (to: Recipient, url: string) =>
  written(to, () => [t('mail.verify.subject'), [t('mail.verify.body'), t('mail.verify.notYou')], { url, label: t('mail.verify.link') }])

export const resetPasswordMessage = (to: Recipient, url: string) =>
  written(to, () => [t('mail.reset.subject'), [t('mail.reset.body'), t('mail.reset.notYou')], { url, label: t('mail.reset.link') }])

export const inviteMessage = (to: Recipient, name: string, url: string) =>
  written(to, () => [t('mail.invite.subject', { brand: to.brand }), [t('mail.invite.body', { name })], { url, label: t('mail.invite.link') }])

/**
 * With `security` (a reset of a verified account, SPEC "Recovery"): what else still lets someone
 * in — the passkeys by name and whether two-step verification is on — and a link to /account.
 */
export const passwordChangedMessage = (to: Recipient, security?: { passkeys: readonly string[]; totp: boolean; accountUrl: string }) =>
  written(to, () => [
    t('mail.passwordChanged.subject'),
    [
      t('mail.passwordChanged.body'),
      ...(security
        ? [
            security.passkeys.length ? t('mail.passwordChanged.passkeys', { names: security.passkeys.join(', ') }) : t('mail.passwordChanged.noPasskey'),
            security.totp ? t('mail.passwordChanged.twoStepOn') : t('mail.passwordChanged.twoStepOff'),
            t('mail.passwordChanged.removeIt'),
          ]
        : []),
      t('mail.passwordChanged.notYou'),
    ],
    security && { url: security.accountUrl, label: t('mail.yourAccount') },
  ])

/** To the new address of an email change (SPEC "Change email"): a message of its own, naming the account's current address. */
export const confirmEmailChangeMessage = (to: Recipient, currentEmail: string, url: string) =>
  written(to, () => [
    t('mail.confirmChange.subject'),
    [t('mail.confirmChange.body', { email: currentEmail }), t('mail.confirmChange.how'), t('mail.confirmChange.notYou')],
    { url, label: t('mail.confirmChange.link') },
  ])

export const emailChangedMessage = (to: Recipient, newEmail: string) =>
  written(to, () => [t('mail.emailChanged.subject'), [t('mail.emailChanged.body', { email: newEmail }), t('mail.contactAdmin')]])

/** What changed about two-step verification. */
export type TwoStepChange = 'turnedOn' | 'turnedOff' | 'adminReset'

export const twoStepChangedMessage = (to: Recipient, what: TwoStepChange) =>
  written(to, () => [
    t('mail.twoStep.subject'),
    [
      what === 'turnedOn' ? t('mail.twoStep.turnedOn') : what === 'turnedOff' ? t('mail.twoStep.turnedOff') : t('mail.twoStep.adminReset'),
      t('mail.twoStep.notYou'),
    ],
  ])

/** The last message to an address whose account was deleted by its owner (SPEC "Your account and your sessions"). */
export const accountDeletedMessage = (to: Recipient) => written(to, () => [t('mail.deleted.subject'), [t('mail.deleted.body'), t('mail.contactAdmin')]])

/** SPEC "New device": a sign-in from a browser that had not signed in to the account before; `at` in the recipient's zone, named. */
export const newDeviceMessage = (to: Recipient, at: { at: number; address: string; device: () => string; reviewUrl: string }) =>
  written(to, () => [
    t('mail.newDevice.subject'),
    [
      t('mail.newDevice.body'),
      t('mail.newDevice.when', { when: formatTime(at.at, 'second') }),
      isKnownAddress(at.address) ? t('mail.newDevice.address', { address: at.address }) : t('mail.newDevice.addressUnknown'),
      t('mail.newDevice.device', { device: at.device() }),
      t('mail.newDevice.notYou'),
    ],
    { url: at.reviewUrl, label: t('sessions.title') },
  ])

/** A notice after a change (its own write, right after it): only when the server sends mail. */
export function notify(config: { smtpUrl: string | null }, store: { mail: { enqueue(mail: readonly NewMail[], now: number): Promise<void> } }, mail: NewMail, now: number): Promise<void> {
  return config.smtpUrl === null ? Promise.resolve() : store.mail.enqueue([mail], now)
}

/** SPEC "Sign in with another account": an identity was linked to the account (by its verified address, or connected from /account). */
export const newSignInMethodMessage = (to: Recipient, provider: string, upstream: string, accountUrl: string) =>
  written(to, () => [t('mail.newSignInMethod.subject'), [t('mail.newSignInMethod.body', { provider, upstream }), t('mail.newSignInMethod.notYou')], { url: accountUrl, label: t('mail.newSignInMethod.link') }])
