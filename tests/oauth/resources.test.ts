import { describe, expect, test } from 'bun:test'
import { ResourceInputError, canonicalResource, createResource, findResource, toResourceView } from '../../src/oauth/resources'
import { addClient, createTestApp } from '../helpers'

const scopes = ['tools:read=Read your tools', 'tools:call=Run tools']

describe('resources (RFC 8707)', () => {
  test('a resource is stored with its scopes and their words; found with or without a trailing slash', async () => {
    const t = await createTestApp()
    const { client } = await addClient(t)
    const made = await createResource(t.store, { uri: 'https://mcp.example.com/', name: 'Home MCP', scopes, tokenFormat: 'jwt', introspectors: [client.id] }, t.clock.now())
    expect(toResourceView(made)).toEqual({
      uri: 'https://mcp.example.com',
      name: 'Home MCP',
      scopes: { 'tools:read': 'Read your tools', 'tools:call': 'Run tools' },
      token_format: 'jwt',
      introspectors: [client.id],
    })
    for (const raw of ['https://mcp.example.com', 'https://mcp.example.com/', 'https://MCP.example.com//']) expect((await findResource(t.store, raw))?.uri).toBe('https://mcp.example.com')
    expect(await findResource(t.store, 'https://mcp.example.com/other')).toBeUndefined()
    expect((await t.store.resources.listResources()).map((r) => r.uri)).toEqual(['https://mcp.example.com'])
    expect(await t.store.resources.deleteResource('https://mcp.example.com')).toBe(true)
    expect(await t.store.resources.listResources()).toEqual([])
  })

  test('bad input is refused with a clear message, and nothing is stored', async () => {
    const t = await createTestApp()
    const publicClient = (await addClient(t, { public: true })).client
    const cases: Array<[Parameters<typeof createResource>[1], string]> = [
      [{ uri: 'mcp.example.com', name: 'X', scopes }, '--uri must be an absolute http(s) URI without a fragment'],
      [{ uri: 'https://mcp.example.com/#x', name: 'X', scopes }, '--uri must be an absolute http(s) URI without a fragment'],
      [{ uri: 'ftp://mcp.example.com', name: 'X', scopes }, '--uri must be an absolute http(s) URI'],
      [{ uri: 'https://a.example', name: ' ', scopes }, '--name must be 1 to 200 characters'],
      [{ uri: 'https://a.example', name: 'X', scopes: [] }, 'at least one --scope NAME=DESCRIPTION is required'],
      [{ uri: 'https://a.example', name: 'X', scopes: ['tools read=x'] }, 'a scope name is 1 to 128 printable characters'],
      [{ uri: 'https://a.example', name: 'X', scopes: ['settings:read=x'] }, "is one of Latchkey's own scopes"],
      [{ uri: 'https://a.example', name: 'X', scopes: ['tools:read'] }, 'needs a description'],
      [{ uri: 'https://a.example', name: 'X', scopes: ['a=x', 'a=y'] }, 'is given twice'],
      [{ uri: 'https://a.example', name: 'X', scopes, tokenFormat: 'paseto' }, '--token-format must be opaque or jwt'],
      [{ uri: 'https://a.example', name: 'X', scopes, introspectors: ['abc123'] }, 'is not a registered client'],
      [{ uri: 'https://a.example', name: 'X', scopes, introspectors: [publicClient.id] }, 'is a public client'],
    ]
    for (const [input, message] of cases) {
      const refused = createResource(t.store, input, t.clock.now())
      await expect(refused).rejects.toThrow(ResourceInputError)
      await expect(refused).rejects.toThrow(message)
    }
    expect(await t.store.resources.listResources()).toEqual([])
    await createResource(t.store, { uri: 'https://a.example', name: 'A', scopes }, t.clock.now())
    await expect(createResource(t.store, { uri: 'https://a.example/', name: 'A again', scopes }, t.clock.now())).rejects.toThrow('a resource with the URI "https://a.example" exists already')
  })

  test('canonical form: no trailing slash, no fragment, http(s) only', () => {
    expect(canonicalResource('https://mcp.example.com/api/')).toBe('https://mcp.example.com/api')
    expect(canonicalResource('http://127.0.0.1:8931/mcp')).toBe('http://127.0.0.1:8931/mcp')
    expect(canonicalResource('https://x.example/a\u0000')).toBeUndefined()
    expect(canonicalResource('urn:example:x')).toBeUndefined()
  })
})
