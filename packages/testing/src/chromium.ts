import { existsSync } from 'node:fs'
import { type Browser, chromium } from 'playwright-core'

/** Debian's Chromium (what .ci/run installs), or CHROMIUM_PATH; undefined when neither exists. */
export function chromiumPath(): string | undefined {
  return [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find(
    (path): path is string => Boolean(path && existsSync(path)),
  )
}

export const NO_CHROMIUM =
  'no Chromium found (set CHROMIUM_PATH or install Debian’s chromium): the browser tests are skipped'

/** Headless Chromium, with the flags a closed network needs (no background calls to Google). */
export function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({
    executablePath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
}
