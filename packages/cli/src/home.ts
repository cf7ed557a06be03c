/**
 * SVC_HOME: where the command line keeps a person's sign-in and signing key, readable by them alone
 * (the folder 0700, each file 0600). `$SVC_HOME`, else `$XDG_CONFIG_HOME/svc`, else `~/.config/svc`.
 *
 * | file               | what it holds                                                                    |
 * | ------------------ | -------------------------------------------------------------------------------- |
 * | `credentials.json` | the idp and rental it signed in to, the tokens (refresh token rotated on use), the DPoP key pair they are bound to, who signed in |
 * | `key.json`         | the client's Ed25519 signing key, encrypted under a passphrase: the console's backup file (`svc-rental-client-key/v1`) |
 */
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { join } from 'node:path'

export function homeDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SVC_HOME) return env.SVC_HOME
  if (env.XDG_CONFIG_HOME) return join(env.XDG_CONFIG_HOME, 'svc')
  return join(homedir(), '.config', 'svc')
}

export const CREDENTIALS_FILE = 'credentials.json'
export const KEY_FILE = 'key.json'
/** Held while the sign-in is refreshed (lock.ts): one `svc` at a time uses the refresh token. */
export const CREDENTIALS_LOCK_FILE = 'credentials.json.lock'

/** A file of the home as text, or undefined when there is none. */
export async function readHomeFile(home: string, name: string): Promise<string | undefined> {
  try {
    return await readFile(join(home, name), 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
}

/** The home folder, made when missing, readable by its owner alone. */
export async function ensureHome(home: string): Promise<void> {
  await mkdir(home, { recursive: true, mode: 0o700 })
  await chmod(home, 0o700)
}

/** Writes a file of the home whole (a temporary file renamed over it), mode 0600 in a 0700 folder. */
export async function writeHomeFile(home: string, name: string, text: string): Promise<void> {
  await ensureHome(home)
  const temporary = join(home, `.${name}.${process.pid}.tmp`)
  await writeFile(temporary, text, { mode: 0o600 })
  await chmod(temporary, 0o600)
  await rename(temporary, join(home, name))
}

export async function removeHomeFile(home: string, name: string): Promise<void> {
  await rm(join(home, name), { force: true })
}
