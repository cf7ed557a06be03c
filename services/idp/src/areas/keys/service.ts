import type { Sealer } from '@svc/kit'
import {
  calculateJwkThumbprint,
  createLocalJWKSet,
  exportJWK,
  generateKeyPair,
  importJWK,
  jwtVerify,
  type JWK,
  SignJWT,
  type JWTPayload,
  type JWTVerifyOptions,
} from 'jose'
import type { Kysely } from 'kysely'
import type { IdpTables } from '../../db.ts'
import {
  insertKey,
  type KeyRow,
  liveKeys,
  lockRotation,
  publishedKeys,
  retireKeys,
  signingKey,
} from './store.ts'

export const ALGORITHMS: ReadonlyArray<KeyRow['alg']> = ['RS256', 'ES256', 'EdDSA']
/** A new key is published this long before it signs: longer than the JWKS cache (max-age 300). */
export const PREPUBLISH_MS = 6 * 60_000
const CACHE_MS = 30_000

export interface KeyPolicy {
  rotationDays: number
  retentionHours: number
}

type Signer = { kid: string; key: Awaited<ReturnType<typeof importJWK>>; until: number }

/**
 * The issuer's signing keys: private keys sealed at rest, rotated on a schedule or on demand.
 * Rotation publishes the successor first and retires the predecessor when the successor starts
 * signing; a retired key stays in the JWKS for `retentionHours`, for the tokens it signed.
 */
export class SigningKeys {
  readonly #signers = new Map<KeyRow['alg'], Signer>()
  // the published keys, read at most every 30 s: safe, as a successor is published 6 minutes before it signs
  #published: { keys: JWK[]; until: number } | undefined

  constructor(
    private readonly db: Kysely<IdpTables>,
    private readonly sealer: Sealer,
    private readonly policy: KeyPolicy,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Makes sure every algorithm has a key that signs now (first start). */
  async ensure(): Promise<void> {
    for (const alg of ALGORITHMS)
      await this.db.transaction().execute(async (trx) => {
        await lockRotation(trx)
        if (!(await signingKey(trx, alg, this.now()))) await this.#create(trx, alg, this.now())
      })
  }

  /**
   * Starts a successor for each algorithm (or one). `immediate` makes it sign at once and retires
   * the current key now: for a compromised key, at the cost of verifiers with a stale JWKS cache.
   */
  async rotate(options: { alg?: KeyRow['alg']; immediate?: boolean } = {}) {
    const now = this.now()
    const activatesAt = options.immediate ? now : new Date(now.getTime() + PREPUBLISH_MS)
    const rotated: Array<{ kid: string; alg: string; activates_at: string }> = []
    for (const alg of options.alg ? [options.alg] : ALGORITHMS)
      await this.db.transaction().execute(async (trx) => {
        await lockRotation(trx)
        const previous = await liveKeys(trx, alg)
        const kid = await this.#create(trx, alg, activatesAt)
        await retireKeys(
          trx,
          previous.map((k) => k.kid),
          activatesAt,
          new Date(activatesAt.getTime() + this.policy.retentionHours * 3600_000),
        )
        rotated.push({ kid, alg, activates_at: activatesAt.toISOString() })
      })
    this.#signers.clear()
    this.#published = undefined
    return rotated
  }

  /** Rotates each algorithm whose signing key is older than the rotation period and has no successor yet. */
  async rotateIfDue(): Promise<void> {
    const dueBefore = this.now().getTime() - this.policy.rotationDays * 86_400_000
    for (const alg of ALGORITHMS) {
      const live = await liveKeys(this.db, alg)
      if (live.length === 1 && live[0]!.activates_at.getTime() < dueBefore) await this.rotate({ alg })
    }
  }

  /** The public JWKS: signing, pre-published and retired-but-unexpired keys. */
  async jwks(): Promise<{ keys: JWK[] }> {
    if (!this.#published || this.#published.until <= Date.now())
      this.#published = {
        keys: (await publishedKeys(this.db, this.now())).map((k) => k.public_jwk as JWK),
        until: Date.now() + CACHE_MS,
      }
    return { keys: this.#published.keys }
  }

  async list() {
    const now = this.now()
    return (await publishedKeys(this.db, now)).map((k) => ({
      kid: k.kid,
      alg: k.alg,
      state: k.activates_at > now ? 'pending' : k.retired_at && k.retired_at <= now ? 'retired' : 'active',
      created_at: k.created_at.toISOString(),
      activates_at: k.activates_at.toISOString(),
      retired_at: k.retired_at?.toISOString() ?? null,
      expires_at: k.expires_at?.toISOString() ?? null,
    }))
  }

  /** Signs a JWT with the current key of `alg`; instances pick up another's rotation within 30 s. */
  async sign(payload: JWTPayload, alg: KeyRow['alg'] = 'RS256', typ = 'JWT'): Promise<string> {
    const signer = await this.#signer(alg)
    return new SignJWT(payload).setProtectedHeader({ alg, kid: signer.kid, typ }).sign(signer.key)
  }

  /** Verifies a JWT this issuer signed, against its published keys. */
  async verify(token: string, options: JWTVerifyOptions & { issuer: string }) {
    return jwtVerify(token, createLocalJWKSet(await this.jwks()), options)
  }

  async #signer(alg: KeyRow['alg']): Promise<Signer> {
    const cached = this.#signers.get(alg)
    if (cached && cached.until > Date.now()) return cached
    const row = await signingKey(this.db, alg, this.now())
    if (!row) throw new Error(`no ${alg} signing key: call ensure() first`)
    const jwk = JSON.parse(
      this.sealer.open(row.private_key_enc, `signing-key:${row.kid}`).toString('utf8'),
    ) as JWK
    const signer = { kid: row.kid, key: await importJWK(jwk, alg), until: Date.now() + CACHE_MS }
    this.#signers.set(alg, signer)
    return signer
  }

  async #create(
    db: Kysely<IdpTables> | Parameters<typeof insertKey>[0],
    alg: KeyRow['alg'],
    activatesAt: Date,
  ) {
    const options = alg === 'RS256' ? { modulusLength: 2048 } : alg === 'EdDSA' ? { crv: 'Ed25519' } : {}
    const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true, ...options })
    const publicJwk = await exportJWK(publicKey)
    const kid = await calculateJwkThumbprint(publicJwk)
    await insertKey(db, {
      kid,
      alg,
      public_jwk: { ...publicJwk, kid, alg, use: 'sig' },
      private_key_enc: this.sealer.seal(JSON.stringify(await exportJWK(privateKey)), `signing-key:${kid}`),
      activates_at: activatesAt,
    })
    return kid
  }
}
