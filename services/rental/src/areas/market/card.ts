import { createHash } from 'node:crypto'
import { isEd25519DidKey } from '@svc/kit'
import {
  checkPublicUrl,
  getFromPublicUrl,
  PublicUrlError,
  type publicAgent,
} from '@svc/kit/http/public-fetch'
import { b64uEncode } from '@svc/trust/base64url'
import { canonicalBytes } from '@svc/trust/jcs'
import { createLocalJWKSet, decodeProtectedHeader, flattenedVerify, type JSONWebKeySet } from 'jose'
import { Type, type Static } from 'typebox'
import { Value } from 'typebox/value'
import { rentalError } from '../../errors.ts'

/**
 * External agents' A2A 1.0 agent cards: fetched with the kit's public fetch, checked against a
 * strict schema of the AgentCard message (a2a.proto), their JWS signatures verified (A2A §8.4), and
 * hashed (SHA-256 over the JCS bytes of the card without `signatures`).
 */

export const WELL_KNOWN = '/.well-known/agent-card.json'
/** The card extension that names the did:key signing the agent's results (the agents service's). */
export const AGENT_RESULT_EXTENSION = 'urn:svc:a2a:agent-result:v1'
const MAX_CARD_BYTES = 64 * 1024
const FETCH_TIMEOUT_MS = 5_000
const MAX_REDIRECTS = 3
const ALGORITHMS = ['ES256', 'ES384', 'ES512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'EdDSA']

const Str = (max = 2000) => Type.String({ maxLength: max })
const Words = (max = 50) => Type.Array(Str(200), { maxItems: max })
const Strict = { additionalProperties: false } as const
const Requirement = Type.Object(
  { schemes: Type.Record(Str(200), Type.Object({ list: Words() }, Strict)) },
  Strict,
)

/** The AgentCard of A2A 1.0 (ProtoJSON, camelCase): required fields required, nothing unknown. */
export const AgentCardSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Str(5000),
    supportedInterfaces: Type.Array(
      Type.Object(
        {
          url: Type.String({ minLength: 1, maxLength: 2000 }),
          protocolBinding: Type.String({ minLength: 1, maxLength: 100 }),
          tenant: Type.Optional(Str(200)),
          protocolVersion: Type.String({ minLength: 1, maxLength: 20 }),
        },
        Strict,
      ),
      { minItems: 1, maxItems: 20 },
    ),
    provider: Type.Optional(Type.Object({ url: Str(), organization: Str(200) }, Strict)),
    version: Type.String({ minLength: 1, maxLength: 100 }),
    documentationUrl: Type.Optional(Str()),
    capabilities: Type.Object(
      {
        streaming: Type.Optional(Type.Boolean()),
        pushNotifications: Type.Optional(Type.Boolean()),
        extensions: Type.Optional(
          Type.Array(
            Type.Object(
              {
                uri: Type.Optional(Str()),
                description: Type.Optional(Str()),
                required: Type.Optional(Type.Boolean()),
                params: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
              },
              Strict,
            ),
            { maxItems: 50 },
          ),
        ),
        extendedAgentCard: Type.Optional(Type.Boolean()),
      },
      Strict,
    ),
    securitySchemes: Type.Optional(
      Type.Record(
        Str(200),
        Type.Record(Type.String(), Type.Record(Type.String(), Type.Unknown()), {
          minProperties: 1,
          maxProperties: 1,
        }),
      ),
    ),
    securityRequirements: Type.Optional(Type.Array(Requirement, { maxItems: 20 })),
    defaultInputModes: Words(),
    defaultOutputModes: Words(),
    skills: Type.Array(
      Type.Object(
        {
          id: Type.String({ minLength: 1, maxLength: 200 }),
          name: Type.String({ minLength: 1, maxLength: 200 }),
          description: Str(5000),
          tags: Words(),
          examples: Type.Optional(Type.Array(Str(), { maxItems: 50 })),
          inputModes: Type.Optional(Words()),
          outputModes: Type.Optional(Words()),
          securityRequirements: Type.Optional(Type.Array(Requirement, { maxItems: 20 })),
        },
        Strict,
      ),
      { maxItems: 100 },
    ),
    signatures: Type.Optional(
      Type.Array(
        Type.Object(
          {
            protected: Type.String({ minLength: 1, maxLength: 4000 }),
            signature: Type.String({ minLength: 1, maxLength: 4000 }),
            header: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
          },
          Strict,
        ),
        { maxItems: 10 },
      ),
    ),
    iconUrl: Type.Optional(Str()),
  },
  Strict,
)
export type AgentCard = Static<typeof AgentCardSchema>

/** Where a card is fetched: the URL itself when it names the well-known path, else that path under it. */
export const cardUrlOf = (url: string) =>
  url.replace(/\/+$/, '').endsWith(WELL_KNOWN) ? url : `${url.replace(/\/+$/, '')}${WELL_KNOWN}`

/** The card without `signatures`, as JSON (what is hashed and what is signed). */
export function unsigned(card: Record<string, unknown>): Record<string, unknown> {
  const { signatures: _signatures, ...rest } = card
  return rest
}

/** SHA-256 (hex) of the JCS bytes of the card without `signatures`. */
export const cardHash = (card: Record<string, unknown>) =>
  createHash('sha256')
    .update(canonicalBytes(unsigned(card)))
    .digest('hex')

const empty = (v: unknown) =>
  v === '' ||
  v === false ||
  v === 0 ||
  (Array.isArray(v) && v.length === 0) ||
  (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0)

const dropDefaults = (o: Record<string, unknown>, fields: string[]) => {
  const out = { ...o }
  for (const f of fields) if (f in out && empty(out[f])) delete out[f]
  return out
}

/**
 * The signed payload (A2A §8.4.1): the card without `signatures`, with the proto fields that hold
 * their default value and have neither REQUIRED nor `optional` removed (repeated and map fields
 * empty, strings empty, booleans false), then JCS.
 */
export function signedPayload(card: AgentCard): Uint8Array {
  const c = dropDefaults(unsigned(card as unknown as Record<string, unknown>), [
    'securitySchemes',
    'securityRequirements',
  ])
  c.supportedInterfaces = card.supportedInterfaces.map((i) => dropDefaults(i, ['tenant']))
  const caps = dropDefaults(card.capabilities, ['extensions'])
  if (card.capabilities.extensions?.length)
    caps.extensions = card.capabilities.extensions.map((e) =>
      dropDefaults(e, ['uri', 'description', 'required']),
    )
  c.capabilities = caps
  c.skills = card.skills.map((s) =>
    dropDefaults(s, ['examples', 'inputModes', 'outputModes', 'securityRequirements']),
  )
  return canonicalBytes(c)
}

export interface FetchRules {
  agent: ReturnType<typeof publicAgent>
  allowPrivate: boolean
}

/** GETs a JSON document under the fetch rules; throws `agent_card_unreachable` naming why. */
async function fetchJson(url: string, rules: FetchRules, what: string): Promise<unknown> {
  let answer: { status: number; text: string }
  try {
    answer = await getFromPublicUrl(url, {
      agent: rules.agent,
      allowPrivate: rules.allowPrivate,
      timeoutMs: FETCH_TIMEOUT_MS,
      maxBytes: MAX_CARD_BYTES,
      maxRedirects: MAX_REDIRECTS,
      headers: { accept: 'application/json' },
    })
  } catch (err) {
    if (err instanceof PublicUrlError && err.message === 'is not an absolute URL')
      throw rentalError('invalid_request', `url: ${url.slice(0, 200)} is not an absolute URL`)
    throw rentalError(
      'agent_card_unreachable',
      `the ${what} at ${url.slice(0, 200)} ${(err as Error).message}`,
    )
  }
  if (answer.status !== 200)
    throw rentalError('agent_card_unreachable', `the ${what} at ${url} answered HTTP ${answer.status}`)
  try {
    return JSON.parse(answer.text) as unknown
  } catch {
    throw rentalError('agent_card_invalid', `the ${what} at ${url} is not JSON`)
  }
}

/** The card at `cardUrl` as JSON (an object), unvalidated: what a change check hashes. */
export async function fetchCardJson(cardUrl: string, rules: FetchRules): Promise<Record<string, unknown>> {
  const json = await fetchJson(cardUrl, rules, 'agent card')
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw rentalError('agent_card_invalid', `the agent card at ${cardUrl} is not a JSON object`)
  return json as Record<string, unknown>
}

/** The card checked against the A2A 1.0 AgentCard schema; 422 naming the first field that is wrong. */
export function validCard(json: Record<string, unknown>): AgentCard {
  if (Value.Check(AgentCardSchema, json)) return json
  const first = [...Value.Errors(AgentCardSchema, json)][0]
  const where = first?.instancePath || '(the card)'
  throw rentalError(
    'agent_card_invalid',
    `the agent card is not an A2A 1.0 AgentCard: ${where} ${first?.message ?? 'is invalid'}`,
  )
}

/**
 * Verifies every signature of the card (A2A §8.4.3): the protected header names `alg`, `kid` and
 * `jku`; the key is the one with that `kid` in the JWK Set fetched from `jku` (under the same fetch
 * rules: https and public outside development); the payload is the canonical card. A key carried in
 * the signature itself (`jwk`) proves nothing and is refused, as a signature without `jku` is (the
 * rental keeps no trusted key store). Answers the `kid`s, or [] for an unsigned card.
 */
export async function verifyCardSignatures(card: AgentCard, rules: FetchRules): Promise<string[]> {
  const refuse = (why: string) => rentalError('agent_card_signature_invalid', `the card's signature ${why}`)
  const payload = b64uEncode(signedPayload(card))
  const kids: string[] = []
  for (const sig of card.signatures ?? []) {
    let header: Record<string, unknown>
    try {
      header = decodeProtectedHeader({ protected: sig.protected, payload: '', signature: '' }) as Record<
        string,
        unknown
      >
    } catch {
      throw refuse('has a protected header that is not base64url JSON')
    }
    const { alg, kid, jku } = header
    if (typeof alg !== 'string' || !ALGORITHMS.includes(alg))
      throw refuse(`uses an algorithm the rental does not take (${String(alg)})`)
    if (typeof kid !== 'string' || kid === '') throw refuse('has no kid in its protected header')
    if ('jwk' in header || (sig.header && 'jwk' in sig.header))
      throw refuse('carries its own key (jwk): a key must come from the jku')
    if (typeof jku !== 'string') throw refuse('has no jku: the rental keeps no trusted key store')
    const jwks = await fetchJson(jku, rules, 'JWK Set')
    let keys: ReturnType<typeof createLocalJWKSet>
    try {
      keys = createLocalJWKSet(jwks as JSONWebKeySet)
    } catch {
      throw refuse(`names a jku (${jku}) that is not a JWK Set`)
    }
    try {
      await flattenedVerify(
        {
          protected: sig.protected,
          payload,
          signature: sig.signature,
          ...(sig.header ? { header: sig.header } : {}),
        },
        keys,
        { algorithms: ALGORITHMS },
      )
    } catch (err) {
      throw refuse(`by ${kid} does not verify (${(err as Error).message})`)
    }
    kids.push(kid)
  }
  return kids
}

/** What the rental needs to run the agent, read from a valid card. */
export interface RunnableCard {
  did: string
  /** The JSON-RPC A2A 1.0 interface's URL. */
  endpoint: string
  /** The RFC 8707 resource to ask the rental's idp a token for, or null when the agent takes none. */
  tokenResource: string | null
}

/**
 * The agent's did:key (from the svc agent-result extension: the rental checks every result's
 * signature against it), its JSON-RPC 1.0 endpoint (checked as the card URL was), and how it is
 * authenticated: no requirement, or one met by the rental's idp client credentials alone.
 */
export async function runnable(card: AgentCard, rules: FetchRules, idpIssuer: string): Promise<RunnableCard> {
  const unsupported = (why: string) => rentalError('agent_card_unsupported', why)
  const ext = card.capabilities.extensions?.find((e) => e.uri === AGENT_RESULT_EXTENSION)
  const did = ext?.params?.did
  if (typeof did !== 'string' || !isEd25519DidKey(did))
    throw unsupported(
      `the card names no Ed25519 did:key in the ${AGENT_RESULT_EXTENSION} extension's params.did: the rental checks every result against it`,
    )
  const iface = card.supportedInterfaces.find(
    (i) => i.protocolBinding === 'JSONRPC' && i.protocolVersion === '1.0',
  )
  if (!iface) throw unsupported('the card has no JSONRPC interface for protocol version 1.0')
  let endpoint: URL
  try {
    endpoint = await checkPublicUrl(iface.url, { allowPrivate: rules.allowPrivate })
  } catch (err) {
    if (!(err instanceof PublicUrlError)) throw err
    throw rentalError(
      'agent_card_unreachable',
      `the card's interface URL ${iface.url.slice(0, 200)} ${err.message}`,
    )
  }
  const requirements = (card.securityRequirements ?? []).filter((r) => Object.keys(r.schemes).length > 0)
  if (requirements.length === 0) return { did, endpoint: endpoint.href, tokenResource: null }
  const issuer = idpIssuer.replace(/\/+$/, '')
  const ours = (name: string) => {
    const oauth = card.securitySchemes?.[name]?.oauth2SecurityScheme as
      { flows?: { clientCredentials?: { tokenUrl?: unknown } } } | undefined
    const tokenUrl = oauth?.flows?.clientCredentials?.tokenUrl
    return typeof tokenUrl === 'string' && tokenUrl.startsWith(`${issuer}/`)
  }
  if (!requirements.some((r) => Object.keys(r.schemes).every(ours)))
    throw unsupported(
      'the card requires a security scheme the rental cannot meet (only OAuth 2.0 client credentials at the rental’s own idp)',
    )
  return { did, endpoint: endpoint.href, tokenResource: endpoint.origin }
}
