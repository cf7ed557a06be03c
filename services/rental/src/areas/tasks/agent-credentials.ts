import * as oidc from 'openid-client'
import type { IdpLink } from '../auth/idp-link.ts'
import type { ClientCredentials } from '../auth/registration.ts'

/** A token is renewed this long before it expires (the idp's last 600 s). */
const RENEW_BEFORE_S = 60
const RESOURCE_NAME = 'svc built-in agents'

export interface AgentCredentialsOptions {
  /** The rental's link to the idp: its console client, which may use client credentials. */
  link: IdpLink
  /** The console client's origin: with the idp's admin token, the agents' resource is registered if missing. */
  idpClient: { adminToken: string } | ClientCredentials
  /** The agents service's base URL (AGENTS_URL): the RFC 8707 resource the tokens are for. */
  resource: string
  now?: () => number
}

/**
 * The rental's access token at the agents service: the idp's client credentials grant for the
 * console client with `resource` = the agents' URL (RFC 8707), kept until a minute before it
 * expires, so a task costs no token request. Sent only to URLs under that resource.
 */
export class AgentCredentials {
  #token: { value: string; renewAt: number } | undefined
  #pending: Promise<string> | undefined
  readonly #resource: string
  readonly #now: () => number

  constructor(private readonly options: AgentCredentialsOptions) {
    this.#resource = options.resource.replace(/\/+$/, '')
    this.#now = options.now ?? Date.now
  }

  /** Whether a URL is the agents service's (the only place the token goes). */
  covers(url: string): boolean {
    return url === this.#resource || url.startsWith(`${this.#resource}/`)
  }

  async token(): Promise<string> {
    if (this.#token && this.#now() < this.#token.renewAt) return this.#token.value
    this.#pending ??= this.#fetch().finally(() => (this.#pending = undefined))
    return this.#pending
  }

  /** Forgets the token (the agents refused it), so the next call asks for another. */
  invalidate(): void {
    this.#token = undefined
  }

  async #fetch(): Promise<string> {
    let answer: oidc.TokenEndpointResponse
    try {
      answer = await this.#grant()
    } catch (err) {
      if (!(err instanceof oidc.ResponseBodyError) || err.error !== 'invalid_target') throw err
      if (!('adminToken' in this.options.idpClient)) throw err
      // development: the agents' resource is registered at the idp the first time it is needed
      await this.#registerResource(this.options.idpClient.adminToken)
      answer = await this.#grant()
    }
    const lifetime = answer.expires_in ?? 0
    this.#token = {
      value: answer.access_token,
      renewAt: this.#now() + Math.max(0, lifetime - RENEW_BEFORE_S) * 1000,
    }
    return answer.access_token
  }

  #grant() {
    return oidc.clientCredentialsGrant(this.options.link.configuration(), { resource: this.#resource })
  }

  async #registerResource(adminToken: string): Promise<void> {
    const res = await fetch(`${this.options.link.wanted.issuer}/manage/v1/resources`, {
      method: 'POST',
      headers: { 'x-admin-token': adminToken, 'content-type': 'application/json' },
      body: JSON.stringify({ identifier: this.#resource, name: RESOURCE_NAME }),
      signal: AbortSignal.timeout(5_000),
    })
    // 409: registered meanwhile (another instance)
    if (res.status !== 201 && res.status !== 409)
      throw new Error(`the idp answered ${res.status} to the registration of ${this.#resource}`)
  }
}

/**
 * A fetch that sends each agent the token for its resource (the built-in agents', or an external
 * agent's that takes the rental's idp tokens) and nothing to anyone else, renewed once on a 401.
 * `base`: the fetch underneath (the guarded one for external agents).
 */
export function authenticatingFetch(
  credentialsFor: (url: string) => Promise<AgentCredentials | undefined>,
  base: typeof fetch = fetch,
): typeof fetch {
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url
    const credentials = await credentialsFor(url)
    if (!credentials?.covers(url)) return base(input, init)
    const send = async () => {
      const headers = new Headers(init?.headers)
      headers.set('authorization', `Bearer ${await credentials.token()}`)
      return base(input, { ...init, headers })
    }
    const res = await send()
    if (res.status !== 401) return res
    credentials.invalidate()
    await res.body?.cancel()
    return send()
  }
}
