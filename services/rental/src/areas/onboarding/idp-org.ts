import type { Sealer } from '@svc/kit'
import type { RentalDb } from '../../db.ts'
import { rentalError, rentalErrors } from '../../errors.ts'
import * as store from './store.ts'

/** The idp answers an organization call within this, its own outbound fetch (5 s) included. */
const IDP_TIMEOUT_MS = 10_000

/** What the idp's organization API answers the rental (identity-provider.md, Organizations). */
export interface IdpAnswer {
  status: number
  body: Record<string, unknown>
}

/**
 * The rental's own organization at the idp, through its `svc_org_` key: RENTAL_IDP_ORG_KEY, or in
 * development and tests one signed up at the first call and kept sealed in `idp_org_keys` (made
 * again if the idp no longer knows it, as when its data was reset). Calls are serialised in this
 * instance: the idp keeps one declared domain per organization, so a declaration and its check
 * must not interleave with another client's (a check across instances is guarded by its answer's
 * domain, see service.ts).
 */
export class IdpOrganization {
  #key: Promise<string> | undefined
  #queue: Promise<unknown> = Promise.resolve()

  constructor(
    private readonly deps: {
      db: RentalDb
      sealer: Sealer
      issuer: string
      /** RENTAL_IDP_ORG_KEY; undefined: signed up where `mayEnrol` (development and tests). */
      configuredKey: string | undefined
      mayEnrol: boolean
    },
  ) {}

  /** Runs `work` alone among this instance's idp organization calls. */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(work, work)
    this.#queue = run.catch(() => undefined)
    return run
  }

  /** One call of the idp's organization API; an idp that cannot be reached or fails is 502 `idp_unavailable`. */
  async call(method: 'POST' | 'GET', path: string, body?: unknown): Promise<IdpAnswer> {
    let answer = await this.#send(method, path, await this.#apiKey(), body)
    if (answer.status === 401 && this.deps.configuredKey === undefined) {
      // development: the idp forgot our organization (its data was reset): sign up again
      this.#key = this.#signUp()
      answer = await this.#send(method, path, await this.#apiKey(), body)
    }
    if (answer.status >= 500 || answer.status === 401 || answer.status === 403 || answer.status === 429)
      throw rentalErrors.errorWith(
        502,
        'idp_unavailable',
        `the identity provider answered ${answer.status} to ${path}`,
      )
    return answer
  }

  async #send(method: string, path: string, key: string, body?: unknown): Promise<IdpAnswer> {
    let res: Response
    try {
      res = await fetch(`${this.deps.issuer}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(IDP_TIMEOUT_MS),
      })
    } catch (err) {
      throw rentalErrors.errorWith(
        502,
        'idp_unavailable',
        `the identity provider could not be reached: ${(err as Error).message}`,
      )
    }
    let parsed: Record<string, unknown> = {}
    try {
      parsed = (await res.json()) as Record<string, unknown>
    } catch {
      // not JSON: its status says enough
    }
    return { status: res.status, body: parsed }
  }

  #apiKey(): Promise<string> {
    if (this.deps.configuredKey) return Promise.resolve(this.deps.configuredKey)
    if (!this.deps.mayEnrol)
      return Promise.reject(
        rentalError(
          'onboarding_not_configured',
          'set RENTAL_IDP_ORG_KEY: the rental has no idp organization',
        ),
      )
    if (!this.#key) {
      this.#key = this.#remembered().then((key) => key ?? this.#signUp())
      this.#key.catch(() => (this.#key = undefined))
    }
    return this.#key
  }

  async #remembered(): Promise<string | undefined> {
    const row = await store.idpOrgKeyOf(this.deps.db, this.deps.issuer)
    return row
      ? this.deps.sealer.open(row.api_key_sealed, `idp-org:${row.organization_id}`).toString('utf8')
      : undefined
  }

  async #signUp(): Promise<string> {
    let res: Response
    try {
      res = await fetch(`${this.deps.issuer}/orgs/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          name: 'Agent rental platform (development)',
          contact_email: 'operators@rental.invalid',
          accept_terms: true,
        }),
        signal: AbortSignal.timeout(IDP_TIMEOUT_MS),
      })
    } catch (err) {
      throw rentalErrors.errorWith(
        502,
        'idp_unavailable',
        `the identity provider could not be reached: ${(err as Error).message}`,
      )
    }
    const body = (await res.json().catch(() => ({}))) as { organization_id?: string; api_key?: string }
    if (res.status !== 201 || !body.api_key || !body.organization_id)
      throw rentalErrors.errorWith(
        502,
        'idp_unavailable',
        `the identity provider answered ${res.status} to /orgs/signup`,
      )
    const sealed = this.deps.sealer.seal(body.api_key, `idp-org:${body.organization_id}`)
    await store.keepIdpOrgKey(this.deps.db, {
      issuer: this.deps.issuer,
      organization_id: body.organization_id,
      api_key_sealed: sealed,
    })
    return body.api_key
  }
}
