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
  /** Who registered it: the operator, a client ID metadata document (the id is its URL), or dynamic registration (RFC 7591). */
  kind: ClientKind
  /** A metadata document's client: until when the fetched document is fresh. */
  metadataExpiresAt: number | null
  /** A dynamically registered client: the hash of its registration access token (RFC 7592). */
  registrationTokenHash: string | null
  /** How its ID tokens are signed (OpenID Connect's id_token_signed_response_alg). */
  idTokenAlg: IdTokenAlg
  /** A resource server's right to introspect other clients' access tokens (`--introspect`): their ids, or ['*'] for every client's. */
  introspects: string[]
  /** OpenID Connect Back-Channel Logout 1.0: where a logout_token is POSTed when a session it has an id_token from ends. */
  backchannelLogoutUri?: string | null
  /** It needs `sid` in logout tokens (always sent; kept for its metadata). */
  backchannelLogoutSessionRequired?: boolean
  /** The grants it may use (RFC 7591 grant_types): authorization_code, client_credentials, the device code. */
  grantTypes: string[]
  /** The resource scopes its client_credentials tokens may carry. */
  allowedScopes: string[]
  /** Its authorization requests must be pushed first (RFC 9126 §5). */
  requirePar: boolean
  /** 'private_key_jwt' (RFC 7523): it authenticates with an assertion signed by a key of its JWKS; null: its secret, or none. */
  authMethod: 'private_key_jwt' | null
  /** Its JWKS as given (`--jwks-file`), JSON text; or where it is published (`--jwks-uri`). */
  jwks: string | null
  jwksUri: string | null
  /** Where "Your apps" on /account opens it (`--launch-url`); null: not listed there unless authorized. */
  launchUrl?: string | null
  /** Its logo's version (client_logos); null: no logo. */
  logoEtag?: string | null
}

/** An app's logo, as stored and served: its type found from its bytes. */
export interface ClientLogo {
  contentType: string
  bytes: Uint8Array<ArrayBuffer>
  etag: string
}

/** An entry of /account's "Your apps". */
export interface YourApp {
  clientId: string
  name: string
  logoEtag: string | null
  /** Its launch URL, when it has one and the user may use it (it names no allowed groups, or one of theirs). */
  launchUrl: string | null
  /** The user authorized it (a consent). */
  authorized: boolean
}

/** The ID-token signing algorithms Latchkey has keys for. */
export type IdTokenAlg = 'RS256' | 'ES256' | 'EdDSA'

export type ClientKind = 'operator' | 'metadata' | 'dynamic'

export interface ClientStore {
  insertClient(client: ClientRecord, now: number): Promise<void>
  findClient(id: string): Promise<ClientRecord | undefined>
  /** The client's row if this instance holds it in memory and may trust it now; undefined: ask findClient. */
  peekClient(id: string): ClientRecord | undefined
  listClients(): Promise<ClientRecord[]>
  /**
   * Holds the client's row until the store transaction ends (PostgreSQL: FOR UPDATE; SQLite's
   * transaction holds the whole database already), so a read-modify-write of its options
   * (`client update --add-redirect-uri`) loses no change another instance makes meanwhile.
   * false for an unknown client.
   */
  lockClient(id: string): Promise<boolean>
  /** With its grants; the other clients' `introspects` stop naming it (a later client of that id gains no one's right). */
  deleteClient(id: string): Promise<boolean>
  /** Only a confidential client's secret changes; false for public or unknown clients. */
  setClientSecret(id: string, secretHash: string): Promise<boolean>
  /** false for an unknown client. */
  setRequireMfa(id: string, requireMfa: boolean): Promise<boolean>
  /** Replaces the clients whose tokens it may introspect; false for an unknown client. */
  setIntrospects(id: string, introspects: readonly string[]): Promise<boolean>
  /** Sets (or, with null, removes) the back-channel logout URI; false for an unknown client. */
  setBackchannelLogout(id: string, uri: string | null, sessionRequired: boolean): Promise<boolean>
  /** Replaces an operator's client's options (`latchkey apply`); false for an unknown client. */
  updateClient(id: string, fields: Pick<ClientRecord, 'name' | 'redirectUris' | 'postLogoutRedirectUris' | 'skipConsent' | 'requireMfa' | 'idTokenAlg' | 'grantTypes' | 'allowedScopes' | 'requirePar' | 'authMethod' | 'jwks' | 'jwksUri'>): Promise<boolean>
  /** Sets (null: removes) the launch URL; false for an unknown client. */
  setLaunchUrl(id: string, url: string | null): Promise<boolean>
  /** Sets (null: removes) the logo, and its version on the client, together; false for an unknown client. */
  setClientLogo(id: string, logo: ClientLogo | null, now: number): Promise<boolean>
  findClientLogo(id: string): Promise<ClientLogo | undefined>
  /** The apps with a launch URL the user may use, and those they authorized; by name. */
  yourApps(userId: string): Promise<YourApp[]>
  /** Records an assertion's jti (RFC 7523 §3) until it expires: false when the client used it already (on any instance). */
  useAssertionJti(clientId: string, jti: string, expiresAt: number): Promise<boolean>
  /** A metadata document's client as last fetched: inserted, or its name, redirect URIs and freshness replaced. */
  saveMetadataClient(client: ClientRecord, now: number): Promise<void>
  /**
   * Clients nobody registered by hand that are not in use, with everything they had: dynamically
   * registered or metadata-document clients older than `before` that no authorization used since
   * then, and metadata-document clients whose document went stale with no consent, code or
   * authorization at all (fetched again if they come back).
   */
  deleteUnusedClients(before: number, now: number): Promise<number>
  insertRegistrationToken(tokenHash: string, now: number, expiresAt: number): Promise<void>
  /** Whether an initial access token is known and unexpired. */
  registrationTokenValid(tokenHash: string, now: number): Promise<boolean>
}
