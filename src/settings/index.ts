import { Elysia } from 'elysia'
import type { AppContext } from '../context'

export function settingsRoutes(_ctx: AppContext) {
  return new Elysia({ name: 'settings' })
}
