import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'

export interface Balancer {
  url: string
  proc: Subprocess
  stop(): void
}

/**
 * Debian's haproxy in the foreground, round-robin over `backends` (host:port) with health checks
 * on /healthz, retrying a request on another instance when one cannot be reached. Resolves once
 * it answers; `stop()` kills it by its PID.
 */
export async function startHaproxy(port: number, backends: string[]): Promise<Balancer> {
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-haproxy-'))
  const config = [
    'global',
    '  maxconn 4096',
    'defaults',
    '  mode http',
    '  timeout connect 1s',
    '  timeout client 30s',
    '  timeout server 30s',
    '  retries 3',
    '  option redispatch',
    'frontend latchkey',
    `  bind 127.0.0.1:${port}`,
    '  default_backend instances',
    'backend instances',
    '  balance roundrobin',
    '  option httpchk GET /healthz',
    '  http-check expect status 200',
    '  default-server inter 200ms fall 2 rise 2',
    ...backends.map((host, i) => `  server i${i} ${host} check`),
    '',
  ].join('\n')
  writeFileSync(join(dir, 'haproxy.cfg'), config)
  const bin = Bun.which('haproxy') ?? '/usr/sbin/haproxy'
  const proc = Bun.spawn([bin, '-f', join(dir, 'haproxy.cfg'), '-db'], { stdout: 'ignore', stderr: 'ignore' })
  const url = `http://127.0.0.1:${port}`
  const stop = () => {
    proc.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  }
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; await Bun.sleep(50)) {
    try {
      if ((await fetch(`${url}/healthz`)).status === 200) return { url, proc, stop }
    } catch {}
  }
  stop()
  throw new Error('haproxy did not come up')
}
