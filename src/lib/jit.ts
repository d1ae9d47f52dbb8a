/**
 * The compiled binary starts with JavaScriptCore's tier-up thresholds raised (`bun run build`
 * passes `--compile-jit-policy`): the code that opens, migrates and serves runs once, and compiling
 * it costs time and memory (the DFG's own code pages: ~3 MB of RSS in an idle server, measured) for
 * nothing. Called when the process turns to its real work — `serve` once its app is made, every
 * other command at once — it brings back the normal policy. A no-op where the policy is already
 * normal (`bun src/index.ts`, the tests).
 */
export function releaseJit(): void {
  Bun.unsafe.setJITPolicy?.(1)
}
