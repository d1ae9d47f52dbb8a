/**
 * Waits for what a test expects to happen, not for a guess at how long it takes: polls `ready`
 * (sync or async) every `every` ms until it holds, and fails with `what` past a generous deadline.
 */
export async function until(ready: () => boolean | Promise<boolean>, what: string, { timeoutMs = 15_000, every = 10 } = {}): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${what}`)
    await Bun.sleep(every)
  }
}
