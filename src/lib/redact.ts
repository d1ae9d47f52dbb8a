/** Masks anything shaped like a Latchkey credential or long random string before it is logged. */
export function redact(text: string): string {
  return text
    .replace(/lk_[a-z]{2}_[A-Za-z0-9_-]+/g, 'lk_[redacted]')
    .replace(/[A-Za-z0-9_-]{32,}/g, '[redacted]')
    .slice(0, 300)
}
