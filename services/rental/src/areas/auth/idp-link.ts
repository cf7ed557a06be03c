import { DEV_IDP_ADMIN_TOKEN_FILE, type Sealer } from '@svc/kit'
import { rentalError } from '../../errors.ts'
import { createRemoteJWKSet, type JWTVerifyGetKey } from 'jose'
import * as oidc from 'openid-client'
import type { Logger } from 'pino'
import type { AdminTokenClient } from '../../config.ts'
import type { RentalDb } from '../../db.ts'
import { registerCliAccess } from './cli-client.ts'
import {
  AdminTokenRefused,
  type ClientCredentials,
  registerConsoleClient,
  type WantedClient,
} from './registration.ts'

export interface IdpLinkOptions {
  db: RentalDb
  sealer: Sealer
  log: Logger
  /** The idp's issuer URL (IDP_URL). */
  issuer: string
  /** This service's public base URL. */
  baseUrl: string
  client: AdminTokenClient | ClientCredentials
}

export const CALLBACK_PATH = '/auth/callback'
export const BACKCHANNEL_PATH = '/auth/backchannel-logout'
export const LIFECYCLE_PATH = '/webhooks/svc-id'

const FIRST_RETRY_MS = 250
const MAX_RETRY_MS = 10_000

/**
 * The console's link to the idp: its client (registered at start, or given in the configuration)
 * and the issuer's metadata (discovery), tried again with backoff until the idp answers, so the
 * idp may start after the rental. Until then sign-in answers 503 and `/readyz` says `idp: down`.
 */
export class IdpLink {
  #config: oidc.Configuration | undefined
  #webhookSecret: string | undefined
  #jwks: JWTVerifyGetKey | undefined
  #timer: NodeJS.Timeout | undefined
  #stopped = false
  #attempt = 0
  /** The idp refused the admin token: what is wrong and what to do, for the log and the 503. */
  #refused: string | undefined

  constructor(private readonly options: IdpLinkOptions) {}

  get ready(): boolean {
    return this.#config !== undefined
  }

  get wanted(): WantedClient {
    const { issuer, baseUrl } = this.options
    return {
      issuer,
      redirectUri: `${baseUrl}${CALLBACK_PATH}`,
      backchannelLogoutUri: `${baseUrl}${BACKCHANNEL_PATH}`,
      postLogoutRedirectUri: `${baseUrl}/`,
      clientUri: `${baseUrl}/console`,
      lifecycleWebhookUrl: `${baseUrl}${LIFECYCLE_PATH}`,
    }
  }

  /** The openid-client configuration; 503 while the idp has not been reached. */
  configuration(): oidc.Configuration {
    if (!this.#config)
      throw rentalError(
        'idp_unavailable',
        this.#refused
          ? 'sign-in is not available: the identity provider refused this service’s admin token (its log says what to change)'
          : 'sign-in is not available yet: the identity provider has not answered',
      )
    return this.#config
  }

  /** The secret the idp signs its lifecycle events with, once linked (undefined: none known). */
  webhookSecret(): string | undefined {
    return this.#webhookSecret
  }

  /** The idp's signing keys (its JWKS, cached, and fetched again by jose for an unknown kid), for logout and access tokens. */
  jwks(): JWTVerifyGetKey {
    this.configuration()
    return this.#jwks!
  }

  /** Starts linking in the background; resolves at once. */
  start(): void {
    void this.#tryOnce()
  }

  stop(): void {
    this.#stopped = true
    clearTimeout(this.#timer)
  }

  async #tryOnce(): Promise<void> {
    if (this.#stopped) return
    try {
      await this.#link()
      this.#refused = undefined
      this.options.log.info(
        { issuer: this.options.issuer, client_id: this.#config!.clientMetadata().client_id },
        'linked to the idp',
      )
    } catch (err) {
      const delay = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** this.#attempt++)
      if (err instanceof AdminTokenRefused) this.#tokenRefused(err)
      else
        // the idp starting later is expected: quiet at first, a warning once it lasts
        this.options.log[this.#attempt > 6 ? 'warn' : 'debug'](
          { err: (err as Error).message, retry_ms: delay },
          'the idp is not reachable yet',
        )
      if (!this.#stopped) this.#timer = setTimeout(() => void this.#tryOnce(), delay)
    }
  }

  /**
   * Said once, as an error: retrying with the same token cannot help, though the link keeps trying
   * (quietly) in case the idp is given this token. `blocked` tells `npm start` to stop waiting.
   */
  #tokenRefused(err: AdminTokenRefused): void {
    const from = 'adminToken' in this.options.client ? this.options.client.from : 'its configuration'
    const known = this.#refused !== undefined
    this.#refused =
      `the idp at ${this.options.issuer} refused the rental's admin token (401 to ${err.request}): ` +
      `the rental's comes from ${from}, and the idp takes IDP_ADMIN_TOKEN, else the development ` +
      `token in its own DATA_DIR (${DEV_IDP_ADMIN_TOKEN_FILE}). Give both the same token: IDP_ADMIN_TOKEN alone ` +
      `serves both, or set RENTAL_IDP_ADMIN_TOKEN to the idp's; in development, unset both to use the ` +
      `development token. Sign-in is unavailable until then.`
    if (known) this.options.log.debug({ err: err.message }, 'the idp still refuses the admin token')
    else this.options.log.error({ blocked: true }, this.#refused)
  }

  async #link(): Promise<void> {
    const { db, sealer, issuer, client } = this.options
    const creds =
      'adminToken' in client
        ? await registerConsoleClient(db, sealer, client.adminToken, this.wanted)
        : client
    const insecure = issuer.startsWith('http:')
    const config = await oidc.discovery(
      new URL(issuer),
      creds.clientId,
      { client_secret: creds.clientSecret },
      oidc.ClientSecretBasic(creds.clientSecret),
      { ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}), timeout: 5 },
    )
    this.#jwks = createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri!), { timeoutDuration: 5_000 })
    this.#webhookSecret = creds.webhookSecret
    this.#config = config
    if ('adminToken' in client) await this.#registerCli(client.adminToken)
  }

  /** The command line's access (cli-client.ts); without it sign-in still works, so a failure is logged only. */
  async #registerCli(adminToken: string): Promise<void> {
    try {
      await registerCliAccess(this.options.issuer, adminToken, this.options.baseUrl)
    } catch (err) {
      this.options.log.warn(
        { err: (err as Error).message },
        'the command line client (svc-cli) or the rental resource is not registered at the idp',
      )
    }
  }
}
