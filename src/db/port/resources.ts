/** Resources (RFC 8707): the APIs, such as MCP servers, that tokens can be issued for. */

export interface ResourceRecord {
  /** The resource indicator, without a trailing slash. */
  uri: string
  name: string
  /** Each scope of the resource, with the words the consent page shows for it. */
  scopes: Record<string, string>
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
