import { t } from 'elysia'

// Every field is optional at the schema level so a form without its CSRF token is
// answered 403 by the handler (SPEC), not 400 by validation.
export const LoginForm = t.Object({
  email: t.Optional(t.String()),
  password: t.Optional(t.String()),
  csrf_token: t.Optional(t.String()),
  return_to: t.Optional(t.String()),
})
export type LoginForm = typeof LoginForm.static

export const SignupForm = t.Object({
  full_name: t.Optional(t.String()),
  email: t.Optional(t.String()),
  password: t.Optional(t.String()),
  csrf_token: t.Optional(t.String()),
  return_to: t.Optional(t.String()),
})
export type SignupForm = typeof SignupForm.static

export const CsrfForm = t.Object({ csrf_token: t.Optional(t.String()) })

export const RevokeForm = t.Object({ csrf_token: t.Optional(t.String()), client_id: t.Optional(t.String()) })

export const ReturnToQuery = t.Object({ return_to: t.Optional(t.String()), reauth: t.Optional(t.String()) })
