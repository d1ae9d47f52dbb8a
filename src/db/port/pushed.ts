/** Pushed authorization requests (RFC 9126): stored under the hash of their request_uri, used once. */

export interface PushedRequest {
  clientId: string
  /** The authorization parameters as pushed (strings only). */
  params: Record<string, string>
  expiresAt: number
}

export interface PushedRequestStore {
  /**
   * Stores a push unless its client has `max` pushes not yet redeemed (expiring after `now`, no
   * later than this one: a redeemed request lives on 15 minutes ahead, out of the count); false
   * then. Counted and written under a per-client lock, on any instance.
   */
  insertPushedRequest(uriHash: string, request: PushedRequest, cap: { max: number; now: number }): Promise<boolean>
  /** The request while it is unexpired and unused (reading does not use it: a sign-in may come between). */
  findPushedRequest(uriHash: string, now: number): Promise<PushedRequest | undefined>
  /**
   * RFC 9126 §4: the client's unexpired request, redeemed once (on any instance): stored on
   * under `redeemedHash`, living until `redeemedUntil`; undefined when it was not there.
   */
  redeemPushedRequest(uriHash: string, clientId: string, now: number, redeemedHash: string, redeemedUntil: number): Promise<PushedRequest | undefined>
  /** Uses it up: true for exactly one caller, on any instance, before it expires. */
  usePushedRequest(uriHash: string, now: number): Promise<boolean>
}
