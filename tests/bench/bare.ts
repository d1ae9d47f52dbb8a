// The ceiling: a bare Bun.serve answering a constant JSON body; and for a POST, the floor of a
// form-posting endpoint that refuses (a device poll that finds nothing): the form read and
// parsed, a constant 400 with RFC 6749's no-store.
const body = JSON.stringify({ status: 'ok' })
const refusal = JSON.stringify({ error: 'authorization_pending', error_description: 'the user has not finished yet' })
Bun.serve({
  hostname: '127.0.0.1',
  port: Number(process.env.PORT),
  fetch: async (request) => {
    if (request.method !== 'POST') return new Response(body, { headers: { 'content-type': 'application/json' } })
    new URLSearchParams(await request.text())
    return new Response(refusal, { status: 400, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' } })
  },
})
