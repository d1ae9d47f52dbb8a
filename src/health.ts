import type { AppContext } from './context'
import { json } from './lib/http'

/** GET /healthz: 200 after a database round trip, 503 (retry in a second) when there is none. */
export async function healthAnswer(ctx: Pick<AppContext, 'store'>): Promise<Response> {
  try {
    await ctx.store.ping()
    return json({ status: 'ok' })
  } catch {
    return json({ status: 'unavailable' }, 503, { 'retry-after': '1' })
  }
}
