// The ceiling: a bare Bun.serve answering a constant JSON body.
const body = JSON.stringify({ status: 'ok' })
Bun.serve({
  hostname: '127.0.0.1',
  port: Number(process.env.PORT),
  fetch: () => new Response(body, { headers: { 'content-type': 'application/json' } }),
})
