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

export const PasskeyForm = t.Object({
  csrf_token: t.Optional(t.String()),
  return_to: t.Optional(t.String()),
  credential: t.Optional(t.String()),
})

export const AddPasskeyForm = t.Object({ csrf_token: t.Optional(t.String()), name: t.Optional(t.String()), credential: t.Optional(t.String()) })

export const PasskeyChangeForm = t.Object({ csrf_token: t.Optional(t.String()), credential_id: t.Optional(t.String()), name: t.Optional(t.String()) })

export const TwoStepForm = t.Object({
  csrf_token: t.Optional(t.String()),
  return_to: t.Optional(t.String()),
  code: t.Optional(t.String()),
  recovery_code: t.Optional(t.String()),
})

export const TwoStepQuery = t.Object({ return_to: t.Optional(t.String()), recovery: t.Optional(t.String()) })

export const CodeForm = t.Object({ csrf_token: t.Optional(t.String()), code: t.Optional(t.String()), return_to: t.Optional(t.String()) })

/** A form that carries where the person goes afterwards (two-step set-up an app asked for). */
export const ReturnToForm = t.Object({ csrf_token: t.Optional(t.String()), return_to: t.Optional(t.String()) })

export const ProofForm = t.Object({ csrf_token: t.Optional(t.String()), proof: t.Optional(t.String()) })

export const PasswordForm = t.Object({ csrf_token: t.Optional(t.String()), password: t.Optional(t.String()), credential: t.Optional(t.String()) })
