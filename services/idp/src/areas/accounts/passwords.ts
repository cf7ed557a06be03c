import { hash, verify } from '@node-rs/argon2'

// argon2id with OWASP's recommended floor: 19 MiB, 2 passes, 1 lane (Algorithm 2 = argon2id).
const OPTIONS = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const
// verified against when the account does not exist, so a wrong email costs as long as a wrong password
const DUMMY = hash('not-a-real-password', OPTIONS)

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS)
}

export async function verifyPassword(stored: string | null | undefined, password: string): Promise<boolean> {
  if (!stored) {
    await verify(await DUMMY, password).catch(() => false)
    return false
  }
  return verify(stored, password).catch(() => false)
}
