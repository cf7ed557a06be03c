import type { App } from '@svc/kit'
import { b64uEncode } from '@svc/trust/base64url'
import { decodeEd25519VerifierKey, ED25519_TYPE } from '@svc/trust/note'
import { didKeyFromEd25519 } from '@svc/trust/did-key'
import { Type } from 'typebox'

/** The log's public key in every form a verifier may want: signed-note verifier key, JWK and did:key. */
export function keyRoutes(app: App, origin: string, verifierKey: string) {
  const { publicKey } = decodeEd25519VerifierKey(verifierKey, ED25519_TYPE)
  const body = {
    origin,
    verifier_key: verifierKey,
    jwk: { kty: 'OKP', crv: 'Ed25519', x: b64uEncode(publicKey), alg: 'EdDSA', use: 'sig' },
    did: didKeyFromEd25519(publicKey),
  }
  app.get(
    '/v1/key',
    {
      schema: {
        summary: "The log's verifier key (C2SP signed-note form), as a JWK and as a did:key",
        tags: ['read'],
        response: {
          200: Type.Object({
            origin: Type.String(),
            verifier_key: Type.String(),
            jwk: Type.Object({
              kty: Type.String(),
              crv: Type.String(),
              x: Type.String(),
              alg: Type.String(),
              use: Type.String(),
            }),
            did: Type.String(),
          }),
        },
      },
    },
    async () => body,
  )
}
