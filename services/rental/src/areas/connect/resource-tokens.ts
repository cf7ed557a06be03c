import * as oidc from 'openid-client'
import type { IdpLink } from '../auth/idp-link.ts'

/** A token is renewed this long before it expires. */
const RENEW_BEFORE_S = 30
const MAX_CACHED = 1000

/** The idp refused a token for the resource (unregistered, …): its words, for a 4XX. */
export class ResourceTokenError extends Error {}

/**
 * The rental's access tokens for tool servers registered as resources at the idp: the client
 * credentials grant of the rental's own client at the idp with `resource=` (RFC 8707), one per
 * resource, kept in memory until shortly before it expires (so a call costs no token request). No
 * secret is stored for such a connection: the token is asked for again after a restart.
 */
export class ResourceTokens {
  readonly #tokens = new Map<string, { value: string; renewAt: number }>()
  readonly #pending = new Map<string, Promise<string>>()

  constructor(
    private readonly link: IdpLink,
    private readonly now: () => number = Date.now,
  ) {}

  /** The idp's issuer: a server's metadata must name it among its authorization servers. */
  get issuer(): string {
    return this.link.wanted.issuer.replace(/\/+$/, '')
  }

  async token(resource: string): Promise<string> {
    const kept = this.#tokens.get(resource)
    if (kept && this.now() < kept.renewAt) return kept.value
    let pending = this.#pending.get(resource)
    if (!pending) {
      pending = this.#fetch(resource).finally(() => this.#pending.delete(resource))
      this.#pending.set(resource, pending)
    }
    return pending
  }

  /** Forgets a resource's token (its server refused it), so the next call asks for another. */
  invalidate(resource: string): void {
    this.#tokens.delete(resource)
  }

  async #fetch(resource: string): Promise<string> {
    let answer: oidc.TokenEndpointResponse
    try {
      answer = await oidc.clientCredentialsGrant(this.link.configuration(), { resource })
    } catch (err) {
      if (err instanceof oidc.ResponseBodyError)
        throw new ResourceTokenError(
          `the idp gives no token for ${resource}: ${err.error}${err.error_description ? ` (${err.error_description})` : ''}`,
        )
      throw new ResourceTokenError(`the idp could not be asked for a token: ${(err as Error).message}`)
    }
    const lifetime = answer.expires_in ?? 0
    if (this.#tokens.size >= MAX_CACHED) this.#tokens.delete(this.#tokens.keys().next().value!)
    this.#tokens.set(resource, {
      value: answer.access_token,
      renewAt: this.now() + Math.max(0, lifetime - RENEW_BEFORE_S) * 1000,
    })
    return answer.access_token
  }
}
