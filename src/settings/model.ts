import { t } from 'elysia'

export const KEY_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/

/** Any JSON value but null (SPEC: a null value is invalid_request). */
export const SettingValue = t.Union([t.String(), t.Number(), t.Boolean(), t.Array(t.Unknown()), t.Record(t.String(), t.Unknown())])

export const SettingInput = t.Object({
  client_id: t.String(),
  key: t.String(),
  value: SettingValue,
})
export type SettingInput = typeof SettingInput.static

export const ClientIdQuery = t.Object({ client_id: t.Optional(t.String()) })
export const ListQuery = t.Object({
  client_id: t.Optional(t.String()),
  since: t.Optional(t.String({ description: 'a revision: answer only what changed after it, as {revision, changes}' })),
})

export const KeyParams = t.Object({ key: t.String() })

export const Setting = t.Object({
  key: t.String(),
  value: SettingValue,
  client_id: t.String(),
  updated_at: t.String({ format: 'date-time' }),
})

export const SettingList = t.Union([
  t.Object({ settings: t.Array(Setting), revision: t.Integer({ description: 'the revision of this (user, app) the list is at' }) }),
  t.Object({
    revision: t.Integer(),
    changes: t.Array(t.Union([Setting, t.Object({ key: t.String(), deleted: t.Literal(true) })]), { description: 'with since: each key changed after it, once, at its latest state, in revision order' }),
  }),
])
export const SettingOne = t.Object({ setting: Setting })
export const SettingSaved = t.Object({ success: t.Literal(true), setting: Setting })
export const SettingDeleted = t.Object({ success: t.Literal(true) })
