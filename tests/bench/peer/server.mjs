// The peer: panva's oidc-provider on Node with opaque access tokens and its default in-memory
// adapter, measured on client_credentials and introspection (see ../run.ts).
import Provider from 'oidc-provider'

const port = Number(process.env.PORT)
const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [
    {
      client_id: 'bench',
      client_secret: 'bench-secret-that-is-long-enough-0123456789',
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  scopes: ['api'],
  features: {
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    devInteractions: { enabled: false },
  },
})
provider.listen(port, '127.0.0.1', () => console.log(JSON.stringify({ msg: 'listening', port })))
