/** The applications (OAuth clients) registered by the operator. */

export interface ClientRecord {
  id: string
  name: string
  /** null for public clients (PKCE, no secret). */
  secretHash: string | null
  redirectUris: string[]
  /** RP-initiated logout may return only to these (exact match). */
  postLogoutRedirectUris: string[]
  skipConsent: boolean
  /** Authorizing needs a session signed in with two factors. */
  requireMfa: boolean
}

export interface ClientStore {
  insertClient(client: ClientRecord, now: number): Promise<void>
  findClient(id: string): Promise<ClientRecord | undefined>
  listClients(): Promise<ClientRecord[]>
  deleteClient(id: string): Promise<boolean>
  /** Only a confidential client's secret changes; false for public or unknown clients. */
  setClientSecret(id: string, secretHash: string): Promise<boolean>
  /** false for an unknown client. */
  setRequireMfa(id: string, requireMfa: boolean): Promise<boolean>
}
