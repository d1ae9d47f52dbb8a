/**
 * Refusals that domain modules word in English for every caller (the CLI prints them, /admin and
 * the pages show them): a page shows the catalog's words for the ones it knows, found by their
 * English text, so those modules stay free of the request's language. Unknown text is shown as
 * it is (capitalized, with a full stop) — a new refusal reads English until it is added here.
 */
import { PASSWORD_MAX, PASSWORD_MIN, NAME_MAX } from '../accounts/users'
import { t } from './index'
import type { MessageKey } from './types'

const KNOWN: ReadonlyMap<string, () => string> = new Map<string, () => string>([
  ['email address must be a plain address like name@example.com, without a name, brackets, commas, spaces or quotes', () => t('input.emailPlain')],
  ['email address is not valid', () => t('input.emailInvalid')],
  ['email address contains control or invisible characters', () => t('input.emailInvisible')],
  [`full name must be 1 to ${NAME_MAX} characters`, () => t('input.fullNameLength', { max: NAME_MAX })],
  ['full name contains control or invisible characters', () => t('input.fullNameInvisible')],
  [`password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`, () => t('input.passwordLength', { min: PASSWORD_MIN, max: PASSWORD_MAX })],
  ...(
    [
      ['Passkeys are not available on this server.', 'passkey.unavailable'],
      ['Your browser did not send a passkey. Try again, or use your password.', 'passkey.notSent'],
      ['This passkey request expired or was already used. Try again.', 'passkey.expired'],
      ['The passkey could not be verified. Try again.', 'passkey.notVerified'],
      ['This passkey is already registered.', 'passkey.taken'],
      ['This passkey is not registered here. Sign in with your password and add it on your account page.', 'passkey.unknown'],
    ] as Array<[string, MessageKey & `passkey.${string}`]>
  ).map(([text, key]) => [text, () => t(key as 'passkey.taken')] as [string, () => string]),
])

/** Where a refusal names what is being changed: "The email address …" (a change of address), "The new password …". */
const IN_CONTEXT: Record<'the' | 'theNew', ReadonlyMap<string, () => string>> = {
  the: new Map<string, () => string>([
    ['email address must be a plain address like name@example.com, without a name, brackets, commas, spaces or quotes', () => t('input.theEmailPlain')],
    ['email address is not valid', () => t('input.theEmailInvalid')],
    ['email address contains control or invisible characters', () => t('input.theEmailInvisible')],
    [`password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`, () => t('input.thePasswordLength', { min: PASSWORD_MIN, max: PASSWORD_MAX })],
  ]),
  theNew: new Map<string, () => string>([[`password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`, () => t('input.newPasswordLength', { min: PASSWORD_MIN, max: PASSWORD_MAX })]]),
}

/**
 * An error's words in the current speech: the catalog's when known, else its English as a
 * sentence (with `context`'s "The"/"The new" before it, as the page always said).
 */
export function sayError(error: Error, context?: 'the' | 'theNew'): string {
  const known = (context && IN_CONTEXT[context].get(error.message)) || KNOWN.get(error.message)
  if (known) return known()
  const m = error.message
  const sentence = context === 'the' ? `The ${m}` : context === 'theNew' ? `The new ${m}` : m.charAt(0).toUpperCase() + m.slice(1)
  return sentence + (/[.!?]$/.test(m) ? '' : '.')
}
