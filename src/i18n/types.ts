/**
 * The catalog's types, all derived from the English source (messages/en.ts): its keys, the
 * shape every other locale must have, and each message's placeholders, so `t('k', {name})`
 * is checked by the compiler against `{name}` in the English text.
 */
import type en from './messages/en'

export type En = typeof en
export type MessageKey = keyof En

/** CLDR plural categories (Intl.PluralRules#select). `other` is required in every language. */
export type PluralCategory = 'zero' | 'one' | 'two' | 'few' | 'many' | 'other'
export type Plural = { readonly [C in Exclude<PluralCategory, 'other'>]?: string } & { readonly other: string }

/** What a locale file must hold: every key of en.ts; a plain string where English has one, plural forms where English has them. */
export type Catalog = { readonly [K in MessageKey]: En[K] extends string ? string : Plural }

/** `{a} and {b}` → 'a' | 'b'. */
type Names<S> = S extends `${string}{${infer P}}${infer R}` ? P | Names<R> : never
type Source<K extends MessageKey> = En[K] extends string ? En[K] : En[K][keyof En[K]]
/** A message's placeholders; a plural message always takes `count`. */
export type ParamName<K extends MessageKey> = Names<Source<K>> | (En[K] extends string ? never : 'count')

/** Markup a caller built (already escaped), to put into an HTML message as is. */
export interface RawHtml {
  readonly html: string
}
export type TextValue = string | number
export type HtmlValue = string | number | RawHtml

/** No second argument for a message without placeholders; exactly its placeholders otherwise. */
export type Args<K extends MessageKey, V> = [ParamName<K>] extends [never] ? [] : [params: { readonly [P in ParamName<K>]: V }]

/** An error page's words: a key `K` with both `K.title` and `K.detail` in the catalog. */
type ErrorBase<M> = M extends `${infer B}.title` ? (`${B}.detail` extends MessageKey ? B : never) : never
export type PageErrorKey = ErrorBase<MessageKey>
