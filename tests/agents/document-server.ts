import { selfSignedCertificate } from '../mail/smtp'

/**
 * A local HTTPS server for client ID metadata documents, on a certificate made for the test
 * (trusted through `ca` in-process, NODE_EXTRA_CA_CERTS for the binary). Each path answers what
 * the test set; every request is counted per path.
 */
export class DocumentServer {
  readonly tls = selfSignedCertificate()
  readonly hits = new Map<string, number>()
  private readonly routes = new Map<string, () => Response | Promise<Response>>()
  private readonly server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    tls: { key: this.tls.key, cert: this.tls.cert },
    fetch: (request) => {
      const path = new URL(request.url).pathname
      this.hits.set(path, (this.hits.get(path) ?? 0) + 1)
      const route = this.routes.get(path)
      return route ? route() : new Response('not found', { status: 404 })
    },
  })

  /** `localhost:PORT`: the host CLIENT_ID_METADATA_ALLOW_HOSTS names. */
  get host(): string {
    return `localhost:${this.server.port}`
  }

  url(path: string): string {
    return `https://${this.host}${path}`
  }

  /** Serves a JSON document at `path` (its client_id defaults to its own URL). */
  document(path: string, doc: Record<string, unknown>, headers: Record<string, string> = { 'cache-control': 'max-age=120' }): string {
    const url = this.url(path)
    this.routes.set(path, () => Response.json({ client_id: url, ...doc }, { headers }))
    return url
  }

  route(path: string, answer: () => Response | Promise<Response>): string {
    this.routes.set(path, answer)
    return this.url(path)
  }

  stop(): void {
    this.server.stop(true)
  }
}
