/**
 * The device cookie (SPEC "New device") lasts as long as browsers keep any cookie (Chromium caps
 * Max-Age at 400 days). It is set once, when a browser has none, so no browser presents a device
 * value longer than this after the account first saw it: the purge deletes user_devices rows
 * that old, and a browser signing in after that is new again anyway (its cookie is gone).
 * Its own module: the server's purge needs the number without loading the sign-in code.
 */
export const DEVICE_COOKIE_SECONDS = 400 * 24 * 3600
