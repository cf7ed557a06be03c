/**
 * A person's standing on this machine, as every command (and `svc mcp`) starts from it: the
 * services' URLs, the stored sign-in (resumed as a `Session`, its rotated tokens saved back) and the
 * client's signing key (made on first need, kept encrypted under a passphrase). Files: see home.ts.
 *
 *     const profile = await openProfile({ interactive: false })
 *     const jobs = await profile.client.jobs()              // signed in, or SvcError `not_signed_in`
 *     const hired = await (await profile.signer()).hire(…)  // the same client, with the signing key
 */
import {
  CLI_CLIENT_ID,
  ClientKey,
  type DPoPKeyPair,
  type DeviceCode,
  Session,
  startDeviceSignIn,
  SvcClient,
  SvcError,
  type TokenSet,
} from '@svc/client'
import { DEFAULT_PORTS } from '@svc/kit/topology'
import type { webcrypto } from 'node:crypto'
import { generateKeyPair } from 'oauth4webapi'
import { join } from 'node:path'
import {
  CREDENTIALS_FILE,
  CREDENTIALS_LOCK_FILE,
  ensureHome,
  homeDir,
  KEY_FILE,
  readHomeFile,
  removeHomeFile,
  writeHomeFile,
} from './home.ts'
import { withFileLock } from './lock.ts'
import { askPassphrase, canAsk } from './ui.ts'

export interface ProfileOptions {
  /** SVC_HOME (default: `$SVC_HOME`, `$XDG_CONFIG_HOME/svc`, `~/.config/svc`). */
  home?: string
  idp?: string
  rental?: string
  ledger?: string
  /** Whether a person may be asked (the key's passphrase); default: when stdin and stderr are terminals. */
  interactive?: boolean
  env?: NodeJS.ProcessEnv
}

export interface Urls {
  idp: string
  rental: string
  ledger: string
}

/** Who signed in (from the rental's `/api/me` at login). */
export interface Person {
  subject: string
  email: string | null
  name: string | null
}

/** credentials.json */
interface Credentials {
  idp: string
  rental: string
  tokens: TokenSet
  /** The DPoP key pair the tokens are bound to (JWK). */
  dpop: { privateJwk: webcrypto.JsonWebKey; publicJwk: webcrypto.JsonWebKey }
  person?: Person
  signed_in_at: string
}

export const notSignedIn = (why = 'not signed in') =>
  new SvcError('not_signed_in', 401, `${why}: run \`svc login\``)

const trim = (url: string) => url.replace(/\/+$/, '')
const local = (port: number) => `http://127.0.0.1:${port}`

export function resolveUrls(options: ProfileOptions, env: NodeJS.ProcessEnv = process.env): Urls {
  return {
    idp: trim(options.idp ?? env.SVC_IDP_URL ?? local(DEFAULT_PORTS.idp)),
    rental: trim(options.rental ?? env.SVC_RENTAL_URL ?? local(DEFAULT_PORTS.rental)),
    ledger: trim(options.ledger ?? env.SVC_LEDGER_URL ?? local(DEFAULT_PORTS.ledger)),
  }
}

const ES256 = { name: 'ECDSA', namedCurve: 'P-256' } as const

async function importDpop(stored: Credentials['dpop']): Promise<DPoPKeyPair> {
  const subtle = globalThis.crypto.subtle
  return {
    privateKey: await subtle.importKey('jwk', stored.privateJwk, ES256, false, ['sign']),
    publicKey: await subtle.importKey('jwk', stored.publicJwk, ES256, true, ['verify']),
  } as DPoPKeyPair
}

/** An ended sign-in (refresh refused, token revoked) as `not_signed_in`; other errors as they are. */
function signInEnded(err: unknown): unknown {
  if (err instanceof SvcError && ['invalid_grant', 'login_required', 'invalid_token'].includes(err.code))
    return notSignedIn('the sign-in has ended (expired or signed out)')
  return err
}

/** Revokes a kept sign-in's tokens at its idp (RFC 7009); false when the idp could not be reached. */
async function revoke(credentials: Pick<Credentials, 'idp' | 'tokens'>): Promise<boolean> {
  const { tokens } = credentials
  let revoked = false
  try {
    const discovery = await fetch(`${credentials.idp}/.well-known/openid-configuration`)
    const endpoint = ((await discovery.json()) as { revocation_endpoint?: string }).revocation_endpoint
    if (!endpoint) return false
    for (const [token, hint] of [
      [tokens.refresh_token, 'refresh_token'],
      [tokens.access_token, 'access_token'],
    ] as const) {
      if (!token) continue
      const res = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, token_type_hint: hint, client_id: CLI_CLIENT_ID }).toString(),
      })
      revoked ||= res.ok
    }
  } catch {
    // the idp is out of reach: the sign-in is forgotten here all the same
  }
  return revoked
}

export class Profile {
  #client: SvcClient | undefined
  #signer: SvcClient | undefined
  #key: ClientKey | undefined

  constructor(
    readonly home: string,
    readonly urls: Urls,
    readonly interactive: boolean,
    private readonly env: NodeJS.ProcessEnv,
    private credentials: Credentials | undefined,
  ) {}

  get signedIn(): boolean {
    return this.credentials !== undefined
  }

  #session: Promise<Session> | undefined
  /** The stored sign-in, resumed on first use (refreshing, and saving the rotated tokens). */
  session(): Promise<Session> {
    const credentials = this.credentials
    if (!credentials) return Promise.reject(notSignedIn())
    this.#session ??= (async () =>
      Session.resume({
        idp: this.urls.idp,
        resource: this.urls.rental,
        tokens: credentials.tokens,
        dpop: await importDpop(credentials.dpop),
        shareRefresh: (refresh, current) => this.#shareRefresh(refresh, current),
      }))().catch((err: unknown) => {
      this.#session = undefined
      throw signInEnded(err)
    })
    return this.#session
  }

  get person(): Person | undefined {
    return this.credentials?.person
  }

  #make(key?: ClientKey): SvcClient {
    if (!this.credentials) throw notSignedIn()
    const send = async (request: Request) => {
      const session = await this.session()
      let res: Response
      try {
        res = await session.fetch(request)
      } catch (err) {
        throw signInEnded(err)
      }
      // a step-up (RFC 9470, a recent second factor) is the service's own answer; any other 401 ends the sign-in
      if (
        res.status === 401 &&
        !/insufficient_user_authentication/.test(res.headers.get('www-authenticate') ?? '')
      )
        throw notSignedIn('the sign-in was not accepted (expired or signed out)')
      return res
    }
    return new SvcClient({
      rental: this.urls.rental,
      ledger: this.urls.ledger,
      send,
      ...(key ? { key } : {}),
    })
  }

  /** The signed-in client (without the signing key: reads, and tasks that need no new escrow). */
  get client(): SvcClient {
    this.#client ??= this.#make()
    return this.#client
  }

  /** The signed-in client with the signing key: hire, later tasks (their escrows), releases. */
  async signer(): Promise<SvcClient> {
    this.#signer ??= this.#make(await this.key())
    return this.#signer
  }

  /** The key's did:key as key.json names it (no passphrase needed), or undefined before it is made. */
  async keyDid(): Promise<string | undefined> {
    const text = await readHomeFile(this.home, KEY_FILE)
    return text ? (JSON.parse(text) as { did?: string }).did : undefined
  }

  async #passphrase(purpose: 'open' | 'new'): Promise<string> {
    const fromEnv = this.env.SVC_KEY_PASSPHRASE
    if (fromEnv) return fromEnv
    if (!this.interactive)
      throw new SvcError(
        'passphrase_required',
        0,
        'the signing key needs its passphrase: set SVC_KEY_PASSPHRASE',
      )
    if (purpose === 'open') return askPassphrase('Passphrase of your signing key')
    const first = await askPassphrase('A passphrase for your new signing key (12 characters or more)')
    if ((await askPassphrase('The same passphrase again')) !== first)
      throw new SvcError('passphrase_mismatch', 0, 'the two passphrases differ')
    return first
  }

  /** The local signing key: key.json opened with its passphrase, or made (and saved) on first need. */
  async key(): Promise<ClientKey> {
    if (this.#key) return this.#key
    const stored = await readHomeFile(this.home, KEY_FILE)
    if (stored) {
      try {
        this.#key = await ClientKey.restore(stored, await this.#passphrase('open'))
      } catch (err) {
        if (err instanceof SvcError && err.is('backup_passphrase'))
          throw new SvcError('backup_passphrase', 0, `the passphrase does not open ${this.home}/${KEY_FILE}`)
        throw err
      }
      return this.#key
    }
    const key = await ClientKey.generate()
    await this.saveKey(key, await this.#passphrase('new'))
    this.#key = key
    return key
  }

  /** Keeps `key` as key.json, encrypted under `passphrase` (it replaces any key kept before). */
  async saveKey(key: ClientKey, passphrase: string): Promise<void> {
    await writeHomeFile(this.home, KEY_FILE, await key.backup(passphrase))
    this.#key = key
    this.#signer = undefined
  }

  /** The passphrase of the kept key (SVC_KEY_PASSPHRASE or asked): for a backup under the same one. */
  keyPassphrase(purpose: 'open' | 'new' = 'open'): Promise<string> {
    return this.#passphrase(purpose)
  }

  /**
   * Signs in by the device grant (tokens bound to a new DPoP key) and keeps the sign-in:
   * `show` is given the code to show the person; answers once they allowed it.
   */
  async signIn(show: (code: DeviceCode) => void | Promise<void>, signal?: AbortSignal): Promise<Person> {
    const pair = await generateKeyPair('ES256', { extractable: true })
    const subtle = globalThis.crypto.subtle
    const dpop = {
      privateJwk: await subtle.exportKey('jwk', pair.privateKey),
      publicJwk: await subtle.exportKey('jwk', pair.publicKey),
    }
    const started = await startDeviceSignIn({ idp: this.urls.idp, resource: this.urls.rental, dpop: pair })
    await show(started.code)
    const session = await started.wait(signal)
    const before = await readHomeFile(this.home, CREDENTIALS_FILE)
    const credentials: Credentials = {
      idp: this.urls.idp,
      rental: this.urls.rental,
      tokens: session.tokens,
      dpop,
      signed_in_at: new Date().toISOString(),
    }
    await this.#locked(() => writeHomeFile(this.home, CREDENTIALS_FILE, JSON.stringify(credentials, null, 2)))
    const signedIn = await openProfile({
      home: this.home,
      ...this.urls,
      interactive: this.interactive,
      env: this.env,
    })
    const me = await signedIn.client.me()
    const person: Person = {
      subject: me.client.subject,
      email: me.client.email ?? null,
      name: me.client.name ?? null,
    }
    this.credentials = { ...signedIn.credentials!, person }
    this.#session = undefined
    this.#client = undefined
    this.#signer = undefined
    const kept = this.credentials
    await this.#locked(() => writeHomeFile(this.home, CREDENTIALS_FILE, JSON.stringify(kept, null, 2)))
    // the sign-in this one replaces ends at the idp too
    try {
      if (before) await revoke(JSON.parse(before) as Credentials)
    } catch {
      // not a sign-in: nothing to revoke
    }
    return person
  }

  /** Revokes the refresh token (and the access token) at the idp, then forgets the sign-in. */
  async signOut(): Promise<{ revoked: boolean }> {
    const credentials = this.credentials
    if (!credentials) return { revoked: false }
    const revoked = await revoke(credentials)
    await this.#locked(() => removeHomeFile(this.home, CREDENTIALS_FILE))
    this.credentials = undefined
    return { revoked }
  }

  /** `critical` while no other `svc` of this home reads-and-refreshes or replaces the sign-in. */
  async #locked<T>(critical: () => Promise<T>): Promise<T> {
    await ensureHome(this.home)
    return withFileLock(join(this.home, CREDENTIALS_LOCK_FILE), critical)
  }

  /**
   * Read the kept tokens, refresh, keep the new ones: under a lock shared by every `svc` of this home,
   * since the idp takes a refresh token used twice for a stolen one and ends the sign-in. When another
   * process refreshed since this one read the file, its tokens are used as they are.
   */
  #shareRefresh(refresh: (tokens: TokenSet) => Promise<TokenSet>, current: TokenSet): Promise<TokenSet> {
    return this.#locked(async () => {
      const kept = await readCredentials(this.home)
      const mine = this.credentials
      if (!kept || !mine || JSON.stringify(kept.dpop.publicJwk) !== JSON.stringify(mine.dpop.publicJwk))
        throw notSignedIn('the sign-in has ended (signed out, or replaced by another `svc login`)')
      this.credentials = kept
      const fresh = kept.tokens.expires_at - Date.now() > 30_000
      if (kept.tokens.access_token !== current.access_token && fresh) return kept.tokens
      const tokens = await refresh(kept.tokens)
      this.credentials = { ...kept, tokens }
      await writeHomeFile(this.home, CREDENTIALS_FILE, JSON.stringify(this.credentials, null, 2))
      return tokens
    })
  }
}

async function readCredentials(home: string): Promise<Credentials | undefined> {
  const text = await readHomeFile(home, CREDENTIALS_FILE)
  try {
    return text ? (JSON.parse(text) as Credentials) : undefined
  } catch {
    throw new SvcError('credentials_invalid', 0, `${home}/${CREDENTIALS_FILE} is not JSON: run \`svc login\``)
  }
}

/**
 * The profile of SVC_HOME: the stored sign-in resumed when there is one for these URLs. Nothing is
 * asked here; no request is sent either (the sign-in resumes on first use); `profile.client` throws `not_signed_in` ("run `svc login`") when there is no sign-in.
 */
export async function openProfile(options: ProfileOptions = {}): Promise<Profile> {
  const env = options.env ?? process.env
  const home = options.home ?? homeDir(env)
  const urls = resolveUrls(options, env)
  const interactive = options.interactive ?? canAsk()
  let credentials = await readCredentials(home)
  // a sign-in at another idp or for another rental is not this one's
  if (credentials && (credentials.idp !== urls.idp || credentials.rental !== urls.rental))
    credentials = undefined
  return new Profile(home, urls, interactive, env, credentials)
}
