/** Resources (RFC 8707): the APIs, such as MCP servers, that tokens can be issued for. */

/**
 * The words the consent page shows for one of a resource's scopes: one text, or one per language
 * (SPEC "Brand and language": `{en: …, de: …}` in `apply`; `en` is there, the fallback).
 */
export type ScopeDescription = string | Readonly<Record<string, string>>
/** A resource's scopes, in its order, each with its description. */
export type ResourceScopes = Record<string, ScopeDescription>

export interface ResourceRecord {
  /** The resource indicator, without a trailing slash. */
  uri: string
  name: string
  /** Each scope of the resource, with the words the consent page shows for it. */
  scopes: ResourceScopes
  tokenFormat: 'opaque' | 'jwt'
  /** Clients that may introspect the resource's tokens besides the token's own client. */
  introspectors: string[]
}

export interface ResourceStore {
  /** UniqueViolation when the URI is registered already. */
  insertResource(resource: ResourceRecord, now: number): Promise<void>
  findResource(uri: string): Promise<ResourceRecord | undefined>
  listResources(): Promise<ResourceRecord[]>
  /** Replaces a resource's name, scopes, token format and introspectors; false for an unknown URI. */
  updateResource(resource: ResourceRecord): Promise<boolean>
  /** The resource and every consent, code and token for it. */
  deleteResource(uri: string): Promise<boolean>
}
