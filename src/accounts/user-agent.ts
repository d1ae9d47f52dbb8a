/**
 * "Chrome on Linux", "Safari on iPhone": a browser's User-Agent as "Where you're signed in" and
 * the "New sign-in" notice name it. Only for people to read — never for a decision. Order
 * matters: Edge and Opera also say "Chrome", Chrome also says "Safari", iPhones also say "Mac OS X".
 */
import { t } from '../i18n'

const BROWSERS: [RegExp, string][] = [
  [/\bEdg(e|A|iOS)?\//, 'Edge'],
  [/\bOPR\/|\bOpera\b/, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\bFirefox\/|\bFxiOS\//, 'Firefox'],
  [/\bCriOS\/|\bChrome\/|\bChromium\//, 'Chrome'],
  [/\bSafari\//, 'Safari'],
  [/\bcurl\//, 'curl'],
]

const SYSTEMS: [RegExp, string][] = [
  [/\biPhone\b/, 'iPhone'],
  [/\biPad\b/, 'iPad'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b/, 'Linux'],
]

/** In the language of the render or mail in progress (English outside one): call it while rendering. */
export function describeUserAgent(userAgent: string): string {
  const browser = BROWSERS.find(([re]) => re.test(userAgent))?.[1]
  const system = SYSTEMS.find(([re]) => re.test(userAgent))?.[1]
  if (browser && system) return t('device.browserOnSystem', { browser, system })
  return browser ?? (system ? t('device.aBrowserOn', { system }) : t('device.unknownBrowser'))
}
