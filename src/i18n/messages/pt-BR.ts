/**
 * pt-BR: not translated yet — every message falls back to English until the translator's file
 * replaces this stub (the format: the header of en.ts; a full file ends `satisfies Catalog`).
 */
import type { Catalog } from '../types'

export default {} satisfies Partial<Catalog>
