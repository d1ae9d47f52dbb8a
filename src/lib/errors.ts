import type { MessageKey, PageErrorKey } from '../i18n/types'

/**
 * Errors are data: each RFC error code is a small class carrying its status, and one
 * serializer (`errorResponse`) decides what leaves the server — only `error` and
 * `error_description`, plus the headers a class names (RFC 6749 §5.2, RFC 6750 §3).
 */
export class ApiError extends Error {
  constructor(
    public readonly error: string,
    public readonly status: number,
    public readonly description: string,
    public readonly headers: Record<string, string> = {},
  ) {
    super(description)
  }
}

function defineError(error: string, status: number) {
  return class extends ApiError {
    constructor(description: string, headers?: Record<string, string>) {
      super(error, status, description, headers)
    }
  }
}

export const InvalidRequest = defineError('invalid_request', 400)
export const InvalidClient = defineError('invalid_client', 401)
export const InvalidGrant = defineError('invalid_grant', 400)
export const UnauthorizedClient = defineError('unauthorized_client', 400)
export const UnsupportedGrantType = defineError('unsupported_grant_type', 400)
export const InvalidScope = defineError('invalid_scope', 400)
export const InvalidTarget = defineError('invalid_target', 400)
export const InvalidRedirectUri = defineError('invalid_redirect_uri', 400)
export const InvalidClientMetadata = defineError('invalid_client_metadata', 400)
// RFC 8628 §3.5: what a device's poll is answered while the user has not finished.
export const AuthorizationPending = defineError('authorization_pending', 400)
export const SlowDown = defineError('slow_down', 400)
export const ExpiredToken = defineError('expired_token', 400)
export const PollAccessDenied = defineError('access_denied', 400)
export const TooManyRequests = defineError('too_many_requests', 429)
export const Gone = defineError('gone', 410)
export const InvalidToken = defineError('invalid_token', 401)
export const InsufficientScope = defineError('insufficient_scope', 403)
export const AccessDenied = defineError('access_denied', 403)
export const NotFound = defineError('not_found', 404)
export const MethodNotAllowed = defineError('method_not_allowed', 405)
export const QuotaExceeded = defineError('quota_exceeded', 409)
export const PreconditionFailed = defineError('precondition_failed', 412)
export const ValueTooLarge = defineError('value_too_large', 413)
export const RequestTooLarge = defineError('request_too_large', 413)
export const ServerError = defineError('server_error', 500)
export const TemporarilyUnavailable = defineError('temporarily_unavailable', 503)

/**
 * Bad input a person can fix, in words meant for them (a name too long, an unknown group): the
 * CLI prints it as one line and exits 2, /admin shows it on the form's page. Each domain's
 * refusal (users, groups, clients, resources) is one. `message` is the CLI's wording (its
 * --flags; the JSON APIs answer it too); `words`, when given, is the catalog's message for a web
 * form, naming the field by its label, that /admin says in the admin's language (SPEC "Brand
 * and language": every word a person reads on a page comes from the catalog).
 */
export class InputError extends Error {
  constructor(
    message: string,
    public readonly words?: { key: MessageKey; params?: Readonly<Record<string, string | number>> },
  ) {
    super(message)
  }
}

/**
 * A failure that is shown to a person as an HTML page (never a redirect), in their language:
 * `new PageError(404, 'error.noMail')` names the messages `error.noMail.title` and `.detail`
 * (src/i18n/messages). The older form, English title and detail, still renders, untranslated.
 */
export class PageError extends Error {
  public readonly title: string
  public readonly detail: string
  /** The catalog's words, when given by key. */
  public readonly words?: { key: PageErrorKey; params?: Readonly<Record<string, string | number>> }
  constructor(status: number, key: PageErrorKey, params?: Readonly<Record<string, string | number>>)
  constructor(status: number, title: string, detail: string)
  constructor(
    public readonly status: number,
    title: string,
    detail?: string | Readonly<Record<string, string | number>>,
  ) {
    super(title)
    if (typeof detail === 'string') {
      this.title = title
      this.detail = detail
    } else {
      this.words = { key: title as PageErrorKey, params: detail }
      this.title = title
      this.detail = ''
    }
  }
}
