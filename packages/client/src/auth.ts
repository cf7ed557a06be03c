/**
 * Signing in at the idp as a program: the device authorization grant (RFC 8628) for the public
 * first-party client `svc-cli`, refresh tokens (`offline_access`), and DPoP-bound tokens (RFC 9449)
 * when a DPoP key pair is given. All of it through `oauth4webapi`.
 */
import * as oauth from 'oauth4webapi'
import { SvcError } from './errors.ts'

/** A WebCrypto key pair for DPoP proofs (`oauth.generateKeyPair('ES256')`). */
export type DPoPKeyPair = Parameters<typeof oauth.DPoP>[1]

export const CLI_CLIENT_ID = 'svc-cli'
export const DEFAULT_SCOPE = 'openid email profile offline_access'

/** What a program keeps between runs (the CLI stores it, mode 0600). */
export interface TokenSet {
  access_token: string
  refresh_token?: string
  /** milliseconds since the epoch */
  expires_at: number
  token_type: string
  scope?: string
}

export interface SignInOptions {
  /** The idp's issuer URL, for example http://127.0.0.1:4000. */
  idp: string
  clientId?: string
  scope?: string
  /** An RFC 8707 resource the access token is for (its audience), when the idp names one. */
  resource?: string
  /** A key pair (ES256 or Ed25519, `oauth.generateKeyPair`) that binds every token to it: DPoP. */
  dpop?: DPoPKeyPair
  /** The fetch to use (tests drop answers through it; browsers may pass their own). */
  fetch?: typeof globalThis.fetch
  /** Called with every new token set: after sign-in and after each refresh (refresh tokens rotate). */
  onTokens?: (tokens: TokenSet) => void | Promise<void>
  /**
   * Wraps each refresh, for tokens kept where other processes use them too (the idp takes a reused
   * refresh token for a stolen one and ends the sign-in): the CLI takes a lock, reads the kept tokens
   * and answers them when another process refreshed already, else calls `refresh` with them.
   */
  shareRefresh?: (refresh: (tokens: TokenSet) => Promise<TokenSet>, current: TokenSet) => Promise<TokenSet>
}

/** What the person is shown: the code, and where to enter it. */
export interface DeviceCode {
  user_code: string
  verification_uri: string
  verification_uri_complete?: string
  /** seconds */
  expires_in: number
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms)
    signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true })
  })

/** The SvcError of an oauth4webapi failure (an OAuth error answer keeps its `error` as the code). */
export function oauthError(err: unknown): SvcError {
  if (err instanceof SvcError) return err
  if (err instanceof oauth.ResponseBodyError)
    return new SvcError(err.error, err.status, err.error_description ?? err.error)
  if (err instanceof oauth.WWWAuthenticateChallengeError) {
    const challenge = err.cause[0]
    return new SvcError(
      challenge?.parameters.error ?? 'unauthenticated',
      err.status,
      challenge?.parameters.error_description ?? err.message,
    )
  }
  return new SvcError('network_error', 0, (err as Error).message)
}

class Idp {
  readonly client: oauth.Client
  readonly clientAuth = oauth.None()
  readonly dpop: oauth.DPoPHandle | undefined
  readonly options: oauth.TokenEndpointRequestOptions

  private constructor(
    readonly as: oauth.AuthorizationServer,
    readonly settings: SignInOptions,
  ) {
    this.client = { client_id: settings.clientId ?? CLI_CLIENT_ID, token_endpoint_auth_method: 'none' }
    this.dpop = settings.dpop ? oauth.DPoP(this.client, settings.dpop) : undefined
    this.options = Idp.httpOptions(settings)
    if (this.dpop) this.options.DPoP = this.dpop
  }

  /** oauth4webapi's options for `settings` (each of its requests types them apart; they are the same). */
  static httpOptions<T = oauth.TokenEndpointRequestOptions>(settings: SignInOptions): T {
    return {
      // plain http is for the local stack only (http://127.0.0.1, http://localhost)
      [oauth.allowInsecureRequests]: /^http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:|\/|$)/.test(settings.idp),
      ...(settings.fetch ? { [oauth.customFetch]: settings.fetch } : {}),
    } as T
  }

  static async discover(settings: SignInOptions): Promise<Idp> {
    const issuer = new URL(settings.idp)
    try {
      const res = await oauth.discoveryRequest(
        issuer,
        Idp.httpOptions<oauth.DiscoveryRequestOptions>(settings),
      )
      return new Idp(await oauth.processDiscoveryResponse(issuer, res), settings)
    } catch (err) {
      throw oauthError(err)
    }
  }

  /** Runs a token request, again at once when the idp asks for a fresh DPoP nonce. */
  async tokens(request: () => Promise<oauth.TokenEndpointResponse>): Promise<TokenSet> {
    for (let attempt = 0; ; attempt++) {
      try {
        const answer = await request()
        const tokens: TokenSet = {
          access_token: answer.access_token,
          expires_at: Date.now() + (answer.expires_in ?? 300) * 1000,
          token_type: answer.token_type,
          ...(answer.refresh_token ? { refresh_token: answer.refresh_token } : {}),
          ...(answer.scope ? { scope: answer.scope } : {}),
        }
        await this.settings.onTokens?.(tokens)
        return tokens
      } catch (err) {
        if (attempt === 0 && oauth.isDPoPNonceError(err)) continue
        throw oauthError(err)
      }
    }
  }
}

/**
 * Starts a device sign-in: show the person `code` (the user code and the verification URI), then
 * `wait()` until they allow it on the idp's page. Denied is `access_denied`, too late `expired_token`.
 */
export async function startDeviceSignIn(settings: SignInOptions) {
  const idp = await Idp.discover(settings)
  const parameters: Record<string, string> = { scope: settings.scope ?? DEFAULT_SCOPE }
  if (settings.resource) parameters.resource = settings.resource
  let started: oauth.DeviceAuthorizationResponse
  try {
    const res = await oauth.deviceAuthorizationRequest(
      idp.as,
      idp.client,
      idp.clientAuth,
      parameters,
      idp.options,
    )
    started = await oauth.processDeviceAuthorizationResponse(idp.as, idp.client, res)
  } catch (err) {
    throw oauthError(err)
  }
  const code: DeviceCode = {
    user_code: started.user_code,
    verification_uri: started.verification_uri,
    expires_in: started.expires_in,
    ...(started.verification_uri_complete
      ? { verification_uri_complete: started.verification_uri_complete }
      : {}),
  }
  const wait = async (signal?: AbortSignal): Promise<Session> => {
    let interval = (started.interval ?? 5) * 1000
    const deadline = Date.now() + started.expires_in * 1000
    for (;;) {
      try {
        const tokens = await idp.tokens(async () =>
          oauth.processDeviceCodeResponse(
            idp.as,
            idp.client,
            await oauth.deviceCodeGrantRequest(idp.as, idp.client, idp.clientAuth, started.device_code, {
              ...idp.options,
              ...(signal ? { signal } : {}),
            }),
          ),
        )
        return new Session(idp, tokens)
      } catch (err) {
        const code = (err as SvcError).code
        if (code === 'slow_down') interval += 5000
        else if (code !== 'authorization_pending') throw err
        if (Date.now() + interval > deadline)
          throw new SvcError('expired_token', 400, 'the device code expired before it was allowed')
        await sleep(interval, signal)
      }
    }
  }
  return { code, wait }
}

/** A signed-in person: their tokens, refreshed when they run out, and requests carrying them. */
export class Session {
  /** @internal use `startDeviceSignIn(…).wait()` or `Session.resume` */
  constructor(
    private readonly idp: Idp,
    private current: TokenSet,
  ) {}

  /** A session from kept tokens (the DPoP key pair must be the one they were bound to). */
  static async resume(settings: SignInOptions & { tokens: TokenSet }): Promise<Session> {
    return new Session(await Idp.discover(settings), settings.tokens)
  }

  get tokens(): TokenSet {
    return this.current
  }

  /** Whether the tokens are bound to a DPoP key. */
  get dpopBound(): boolean {
    return this.idp.dpop !== undefined
  }

  #refreshing: Promise<TokenSet> | undefined
  /** A new access token with the refresh token (which rotates); none left is `login_required`. */
  refresh(): Promise<TokenSet> {
    // concurrent requests share one refresh: a refresh token is good for one use
    this.#refreshing ??= (async () => {
      const share = this.idp.settings.shareRefresh
      this.current = share
        ? await share((tokens) => this.#refreshWith(tokens), this.current)
        : await this.#refreshWith(this.current)
      return this.current
    })().finally(() => (this.#refreshing = undefined))
    return this.#refreshing
  }

  async #refreshWith(current: TokenSet): Promise<TokenSet> {
    const refreshToken = current.refresh_token
    if (!refreshToken) throw new SvcError('login_required', 401, 'the sign-in ended: sign in again')
    const { idp } = this
    const tokens = await idp.tokens(async () =>
      oauth.processRefreshTokenResponse(
        idp.as,
        idp.client,
        await oauth.refreshTokenGrantRequest(idp.as, idp.client, idp.clientAuth, refreshToken, idp.options),
      ),
    )
    tokens.refresh_token ??= refreshToken
    return tokens
  }

  /** The access token, refreshed first when it has less than 30 s left. */
  async accessToken(): Promise<string> {
    if (this.current.expires_at - Date.now() < 30_000 && this.current.refresh_token) await this.refresh()
    return this.current.access_token
  }

  /**
   * Sends a request with the access token (`Authorization: Bearer`, or `DPoP` with a proof of the
   * key), again once after a DPoP nonce challenge or, on 401 `invalid_token`, after a refresh.
   */
  readonly fetch = async (request: Request): Promise<Response> => {
    const body = request.body ? await request.arrayBuffer() : null
    const send = async () =>
      oauth.protectedResourceRequest(
        await this.accessToken(),
        request.method,
        new URL(request.url),
        request.headers,
        body,
        {
          ...Idp.httpOptions<oauth.ProtectedResourceRequestOptions>({
            ...this.idp.settings,
            idp: request.url,
          }),
          ...(this.idp.dpop ? { DPoP: this.idp.dpop } : {}),
          signal: request.signal,
        },
      )
    for (let attempt = 0; ; attempt++) {
      try {
        return await send()
      } catch (err) {
        if (!(err instanceof oauth.WWWAuthenticateChallengeError)) throw oauthError(err)
        const expired = err.cause.some((c) => c.parameters.error === 'invalid_token')
        if (attempt === 0 && oauth.isDPoPNonceError(err)) continue
        if (attempt === 0 && expired && this.current.refresh_token) {
          await this.refresh()
          continue
        }
        return err.response
      }
    }
  }
}
