import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { base58 } from '@scure/base'
import {
  createEddsaJcs2022Proof,
  eddsaJcs2022HashData,
  eddsaJcs2022ProofConfiguration,
  verifyEddsaJcs2022Proof,
} from './data-integrity.ts'
import { didKeyFromEd25519, didKeyVerificationMethod } from './did-key.ts'
import { ed25519FromSeed, generateEd25519, signEd25519 } from './ed25519.ts'
import { canonicalize } from './jcs.ts'

type Json = Record<string, unknown>
const testdata = new URL('../testdata/vc-di-eddsa/', import.meta.url)
const text = (name: string) => readFileSync(new URL(name, testdata), 'utf8')
const json = (name: string) => JSON.parse(text(name)) as Json
const toHex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex')
const sha256Hex = (value: string) => createHash('sha256').update(value).digest('hex')

// keyPair.json: multibase base58btc of multicodec ed25519-priv (0x1300 → 0x80 0x26) + seed, ed25519-pub + key.
const keyPair = json('keyPair.json') as { publicKeyMultibase: string; privateKeyMultibase: string }
const privateKey = base58.decode(keyPair.privateKeyMultibase.slice(1))
const publicKey = base58.decode(keyPair.publicKeyMultibase.slice(1))
const seed = privateKey.slice(2)

const rec = 'eddsa-jcs-2022/'
const unsigned = json(`${rec}unsigned.json`)
const proofOptions = json(`${rec}proofConfigJCS.json`) as Json & {
  verificationMethod: string
  created: string
}
const signed = json(`${rec}signedJCS.json`)

describe('Data Integrity eddsa-jcs-2022', () => {
  describe('the Recommendation test vectors', () => {
    it('decodes the key pair: seed and public key belong together and form the did:key', () => {
      assert.deepEqual([...privateKey.slice(0, 2)], [0x80, 0x26])
      assert.deepEqual([...publicKey.slice(0, 2)], [0xed, 0x01])
      assert.deepEqual(ed25519FromSeed(seed).publicKey, publicKey.slice(2))
      assert.equal(didKeyFromEd25519(publicKey.slice(2)), `did:key:${keyPair.publicKeyMultibase}`)
      assert.equal(
        proofOptions.verificationMethod,
        didKeyVerificationMethod(`did:key:${keyPair.publicKeyMultibase}`),
      )
    })

    it('canonicalizes and hashes the credential without proof', () => {
      assert.equal(canonicalize(unsigned), text(`${rec}canonDocJCS.txt`))
      assert.equal(sha256Hex(text(`${rec}canonDocJCS.txt`)), text(`${rec}docHashJCS.txt`))
    })

    it('builds, canonicalizes and hashes the proof configuration', () => {
      const canonical = eddsaJcs2022ProofConfiguration(unsigned, proofOptions)
      assert.equal(canonical, text(`${rec}proofCanonJCS.txt`))
      assert.equal(sha256Hex(canonical), text(`${rec}proofHashJCS.txt`))
    })

    it('combines the hashes and signs them to the published signature', () => {
      const hashData = eddsaJcs2022HashData(unsigned, proofOptions)
      assert.equal(toHex(hashData), text(`${rec}combinedHashJCS.txt`))
      const signature = signEd25519(seed, hashData)
      assert.equal(toHex(signature), text(`${rec}sigHexJCS.txt`))
      assert.equal(`z${base58.encode(signature)}`, text(`${rec}sigBTC58JCS.txt`))
    })

    it('creates the signed credential byte for byte', () => {
      const secured = createEddsaJcs2022Proof(unsigned, {
        seed,
        verificationMethod: proofOptions.verificationMethod,
        created: proofOptions.created,
      })
      assert.equal(JSON.stringify(secured, null, 2), text(`${rec}signedJCS.json`))
      assert.deepEqual(unsigned, json(`${rec}unsigned.json`), 'the input is not modified')
    })

    it('verifies the signed credential through its did:key verification method', () => {
      assert.deepEqual(verifyEddsaJcs2022Proof(signed), { verified: true })
    })
  })

  describe('the earlier upstream revision with an https verification method', () => {
    const dir = 'eddsa-jcs-2022-https-vm/'
    const options = json(`${dir}proofConfigJCS.json`) as Json & {
      verificationMethod: string
      created: string
    }
    const secured = json(`${dir}signedJCS.json`)
    const resolve = (vm: string) => (vm === options.verificationMethod ? publicKey.slice(2) : undefined)

    it('creates the signed credential byte for byte', () => {
      const created = createEddsaJcs2022Proof(unsigned, {
        seed,
        verificationMethod: options.verificationMethod,
        created: options.created,
      })
      assert.equal(JSON.stringify(created, null, 2), text(`${dir}signedJCS.json`))
      const proofValue = (created.proof as Json).proofValue as string
      assert.equal(proofValue, text(`${dir}sigBTC58JCS.txt`))
      assert.equal(toHex(base58.decode(proofValue.slice(1))), text(`${dir}sigHexJCS.txt`))
    })

    it('verifies with a resolver for the verification method, and not without one', () => {
      assert.deepEqual(verifyEddsaJcs2022Proof(secured, resolve), { verified: true })
      const result = verifyEddsaJcs2022Proof(secured)
      assert.equal(result.verified, false)
      assert.match(result.error ?? '', /cannot resolve verification method/)
    })
  })

  describe('tampering', () => {
    const proof = signed.proof as Json
    const refused = (secured: Json, error: RegExp) => {
      const result = verifyEddsaJcs2022Proof(secured)
      assert.equal(result.verified, false)
      assert.match(result.error ?? '', error)
    }

    it('fails when the document is changed', () => {
      const subject = { ...(signed.credentialSubject as Json), alumniOf: 'Another School' }
      refused({ ...signed, credentialSubject: subject }, /does not verify/)
      refused({ ...signed, extra: true }, /does not verify/)
      const { name: _name, ...withoutName } = signed
      refused(withoutName, /does not verify/)
    })

    it('fails when the proof options are changed', () => {
      refused({ ...signed, proof: { ...proof, created: '2023-02-24T23:36:39Z' } }, /does not verify/)
      refused({ ...signed, proof: { ...proof, proofPurpose: 'authentication' } }, /does not verify/)
      const other = generateEd25519()
      const vm = didKeyVerificationMethod(didKeyFromEd25519(other.publicKey))
      refused({ ...signed, proof: { ...proof, verificationMethod: vm } }, /does not verify/)
      refused(
        { ...signed, proof: { ...proof, cryptosuite: 'eddsa-rdfc-2022' } },
        /not a eddsa-jcs-2022 proof/,
      )
      refused({ ...signed, proof: { ...proof, '@context': ['https://example.org/other'] } }, /@context/)
    })

    it('fails when the proof value is changed, malformed or missing', () => {
      const value = proof.proofValue as string
      const flipped = `${value.slice(0, -1)}${value.endsWith('X') ? 'Y' : 'X'}`
      refused({ ...signed, proof: { ...proof, proofValue: flipped } }, /does not verify|not an Ed25519/)
      refused({ ...signed, proof: { ...proof, proofValue: `u${value.slice(1)}` } }, /base58btc/)
      refused({ ...signed, proof: { ...proof, proofValue: `${value}0` } }, /base58btc/)
      refused({ ...signed, proof: { ...proof, proofValue: 'z' } }, /not an Ed25519 signature/)
      refused({ ...signed, proof: { ...proof, proofValue: undefined } }, /base58btc/)
      const { proof: _proof, ...unsecured } = signed
      refused(unsecured, /no proof/)
      refused({ ...signed, proof: [proof] }, /proof sets/)
    })

    it('answers instead of throwing on values that are not JSON and on a failing resolver', () => {
      const result = verifyEddsaJcs2022Proof({ ...signed, extra: 1n })
      assert.equal(result.verified, false)
      assert.ok(result.error)
      const throwing = () => {
        throw new Error('resolver failed')
      }
      assert.match(verifyEddsaJcs2022Proof(signed, throwing).error ?? '', /cannot resolve/)
    })
  })

  describe('creating proofs', () => {
    const pair = generateEd25519()
    const verificationMethod = didKeyVerificationMethod(didKeyFromEd25519(pair.publicKey))

    it('signs for assertionMethod by default, without created unless given, and verifies', () => {
      const secured = createEddsaJcs2022Proof({ hello: 'world' }, { seed: pair.seed, verificationMethod })
      const proof = secured.proof as Json
      assert.equal(proof.proofPurpose, 'assertionMethod')
      assert.equal('created' in proof, false)
      assert.equal('@context' in proof, false)
      assert.deepEqual(verifyEddsaJcs2022Proof(secured), { verified: true })
    })

    it('refuses a seed that does not match the did:key, a document with a proof and a bad created', () => {
      const other = generateEd25519()
      assert.throws(
        () => createEddsaJcs2022Proof({}, { seed: other.seed, verificationMethod }),
        /does not match/,
      )
      assert.throws(
        () => createEddsaJcs2022Proof(signed, { seed, verificationMethod }),
        /already has a proof/,
      )
      assert.throws(
        () => createEddsaJcs2022Proof({}, { seed: pair.seed, verificationMethod, created: '2023-02-24' }),
        /dateTimeStamp/,
      )
    })
  })
})
