/**
 * The messages Latchkey sends (SPEC "Email"): fixed subjects, a text and an HTML part, absolute
 * links from ISSUER, no tracking. Every value that came from a user is escaped in the HTML part;
 * addresses and names were refused at input if they held CR, LF or other control characters, and
 * nodemailer encodes headers besides.
 */
import type { NewMail } from '../db/store'

const escape = (s: string) => Bun.escapeHTML(s)

/** Each message is signed with the operator's name (BRAND_NAME, SPEC "Brand and language"). */
function message(brand: string, to: string, subject: string, lines: string[], link?: { url: string; label: string }): NewMail {
  const text = [...lines, ...(link ? ['', `${link.label}: ${link.url}`] : []), '', `— ${brand}`].join('\n')
  const html = [
    '<!doctype html><html><body style="font-family:system-ui,sans-serif;line-height:1.5">',
    ...lines.map((l) => `<p>${escape(l)}</p>`),
    ...(link ? [`<p><a href="${escape(link.url)}">${escape(link.label)}</a></p>`, `<p style="color:#6b7280;font-size:0.9em">${escape(link.url)}</p>`] : []),
    `<p style="color:#6b7280">— ${escape(brand)}</p></body></html>`,
  ].join('')
  return { to, subject, text, html }
}

export const verifyEmailMessage = (brand: string, to: string, url: string) =>
  message(brand, to, 'Verify your email', ['Confirm that this address is yours: open the link and press Confirm, signed in to the account. The link works once, for 24 hours.', 'If you did not create this account, do not confirm: use "Forgot password" on the sign-in page to take it over.'], { url, label: 'Verify your email' })

export const resetPasswordMessage = (brand: string, to: string, url: string) =>
  message(brand, to, 'Reset your password', ['Someone asked to reset the password of your account. The link works once, for 30 minutes.', 'If it was not you, ignore this message: your password stays as it is.'], {
    url,
    label: 'Choose a new password',
  })

export const inviteMessage = (brand: string, to: string, name: string, url: string) =>
  message(brand, to, `You're invited to ${brand}`, [`Hello ${name}, an account was made for you. Choose a password to start; the link works once, for 7 days.`], { url, label: 'Choose your password' })

/**
 * With `security` (a reset of a verified account, SPEC "Recovery"): what else still lets someone
 * in — the passkeys by name and whether two-step verification is on — and a link to /account.
 */
export const passwordChangedMessage = (brand: string, to: string, security?: { passkeys: readonly string[]; totp: boolean; accountUrl: string }) =>
  message(
    brand,
    to,
    'Your password was changed',
    [
      'The password of your account was just changed, and every browser signed in to it was signed out.',
      ...(security
        ? [
            security.passkeys.length ? `Passkeys that can still sign in to it: ${security.passkeys.join(', ')}.` : 'No passkey can sign in to it.',
            `Two-step verification is ${security.totp ? 'on' : 'off'}.`,
            'If any of this is not yours, remove it on your account page.',
          ]
        : []),
      'If this was not you, reset your password at once.',
    ],
    security && { url: security.accountUrl, label: 'Your account' },
  )

/** To the new address of an email change (SPEC "Change email"): a message of its own, naming the account's current address. */
export const confirmEmailChangeMessage = (brand: string, to: string, currentEmail: string, url: string) =>
  message(
    brand,
    to,
    'Confirm your new email address',
    [
      `Someone signed in to the account ${currentEmail} asked to change its email address to this one.`,
      'Open the link while signed in to that account and confirm: only then does the address change. The link works once, for 24 hours.',
      'If you did not ask for this, ignore this message: nothing changes.',
    ],
    { url, label: 'Confirm your new email address' },
  )

export const emailChangedMessage = (brand: string, to: string, newEmail: string) =>
  message(brand, to, 'Your email was changed', [`Your account's email address was changed from this address to ${newEmail}.`, 'If this was not you, contact the administrator of this server.'])

export const twoStepChangedMessage = (brand: string, to: string, what: string) =>
  message(brand, to, 'Two-step verification changed', [`${what}. Your other browsers were signed out.`, 'If this was not you, reset your password and contact the administrator of this server.'])

/** The last message to an address whose account was deleted by its owner (SPEC "Your account and your sessions"). */
export const accountDeletedMessage = (brand: string, to: string) =>
  message(brand, to, 'Your account was deleted', [
    'Your account was deleted at your request, with the apps you authorized, the settings they saved and your passkeys. Apps signed in with it no longer are.',
    'If this was not you, contact the administrator of this server.',
  ])

/** SPEC "New device": a sign-in from a browser that had not signed in to the account before. */
export const newDeviceMessage = (brand: string, to: string, at: { when: string; address: string; device: string; reviewUrl: string }) =>
  message(
    brand,
    to,
    'New sign-in to your account',
    [`Your account was just signed in to from a browser it had not been used from before.`, `When: ${at.when}`, `Address: ${at.address}`, `Device: ${at.device}`, 'If this was not you, sign that browser out and change your password.'],
    { url: at.reviewUrl, label: "Where you're signed in" },
  )

/** A notice after a change (its own write, right after it): only when the server sends mail. */
export function notify(config: { smtpUrl: string | null }, store: { mail: { enqueue(mail: readonly NewMail[], now: number): Promise<void> } }, mail: NewMail, now: number): Promise<void> {
  return config.smtpUrl === null ? Promise.resolve() : store.mail.enqueue([mail], now)
}

/** SPEC "Sign in with another account": an identity was linked to the account (by its verified address, or connected from /account). */
export const newSignInMethodMessage = (brand: string, to: string, provider: string, upstream: string, accountUrl: string) =>
  message(
    brand,
    to,
    'A new way to sign in was added',
    [`Your account can now be signed in to with the ${provider} account ${upstream}.`, 'If this was not you, disconnect it under Connected accounts on your account page, and contact the administrator of this server.'],
    { url: accountUrl, label: 'Connected accounts' },
  )
