/**
 * `--password-stdin`: piped, the whole of standard input (one trailing newline dropped); on a
 * terminal, asked for — "Password: " on stderr (stdout stays the command's JSON), read in raw mode
 * so it is never echoed, up to Enter. Ctrl-C stops the command (exit 130), and nothing is made.
 */
export async function readPassword(): Promise<string> {
  if (!process.stdin.isTTY) return (await Bun.stdin.text()).replace(/\r?\n$/, '')
  const stdin = process.stdin
  stdin.setRawMode(true)
  process.stderr.write('Password: ')
  try {
    return await new Promise<string>((resolve) => {
      let typed = ''
      const onData = (chunk: Buffer) => {
        for (const char of chunk.toString('utf8')) {
          if (char === '\r' || char === '\n' || char === '\u0004') {
            stdin.off('data', onData)
            return resolve(typed)
          }
          if (char === '\u0003') {
            stdin.setRawMode(false)
            process.stderr.write('\n')
            process.exit(130)
          }
          if (char === '\u007f' || char === '\b') typed = [...typed].slice(0, -1).join('')
          else if (char >= ' ') typed += char
        }
      }
      stdin.on('data', onData)
    })
  } finally {
    stdin.setRawMode(false)
    stdin.pause()
    process.stderr.write('\n')
  }
}
