// oidc-provider ships no types: the little of its API the tests use (https://github.com/panva/node-oidc-provider/blob/v9.x/docs/README.md).
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http'
  interface InteractionDetails {
    uid: string
    prompt: { name: string }
    params: Record<string, unknown>
    session?: { accountId: string }
  }
  interface Grant {
    addOIDCScope(scope: string): void
    save(): Promise<string>
  }
  interface Account {
    accountId: string
    claims(): Promise<Record<string, unknown>>
  }
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown> & { findAccount?(ctx: unknown, id: string): Promise<Account | undefined>; interactions?: { url(ctx: unknown, interaction: { uid: string }): string } })
    callback(): (req: IncomingMessage, res: ServerResponse) => void
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>
    interactionFinished(req: IncomingMessage, res: ServerResponse, result: Record<string, unknown>, options?: { mergeWithLastSubmission?: boolean }): Promise<void>
    Grant: new (init: { accountId: string; clientId: string }) => Grant
  }
}
