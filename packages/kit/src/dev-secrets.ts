import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * A development secret made once and kept in the data directory (mode 0600), so what it signs
 * or seals stays valid across restarts. Production passes every secret in the environment.
 */
export function devFileSecret(dataDir: string, name: string, make: () => string): string {
  const path = join(dataDir, name.replace(/[^A-Za-z0-9.-]/g, '_'))
  try {
    return readFileSync(path, 'utf8').trim()
  } catch {
    const secret = make()
    try {
      mkdirSync(dataDir, { recursive: true })
      writeFileSync(path, `${secret}\n`, { mode: 0o600, flag: 'wx' })
      return secret
    } catch {
      // another process made it first
      return readFileSync(path, 'utf8').trim()
    }
  }
}

/**
 * The idp's development admin token, kept in the data directory: the idp accepts it and the rental
 * console uses it to register its client, so both agree under `npm start` with nothing configured.
 */
export const devIdpAdminToken = (dataDir: string) =>
  devFileSecret(dataDir, DEV_IDP_ADMIN_TOKEN_FILE, () => randomBytes(24).toString('base64url'))

export const DEV_IDP_ADMIN_TOKEN_FILE = 'idp.admin-token'
