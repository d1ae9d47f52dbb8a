import type { OpenedStore } from '../open'

export const PgStore = {
  async open(url: string, poolSize: number): Promise<OpenedStore> {
    throw new Error(`not yet ${url.length} ${poolSize}`)
  },
}
