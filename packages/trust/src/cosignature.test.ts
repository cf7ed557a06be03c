import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { formatCheckpoint, parseCheckpoint } from './checkpoint.ts'
import {
  COSIGNATURE_TYPE,
  cosignatureMessage,
  cosignatureVerifierFromKey,
  cosignerFromKey,
  generateCosignerKey,
} from './cosignature.ts'
import { verifyEd25519 } from './ed25519.ts'
import {
  decodeEd25519VerifierKey,
  generateNoteKey,
  keyIdOf,
  openNote,
  parseNote,
  signerFromKey,
  signNote,
  verifierFromKey,
} from './note.ts'

const vectors = (file: string): unknown =>
  JSON.parse(readFileSync(new URL(`../testdata/note/${file}`, import.meta.url), 'utf8'))

const c2sp = vectors('c2sp-examples.json') as {
  cosignature: {
    note: string
    cosignerName: string
    timestamp: number
    signedMessage: string
    derived: { keyId: string }
  }
}
const formats = vectors('transparency-dev-formats.json') as {
  cosignatureVerifierKey: string
  ed25519VerifierKeyWithPlus: string
  badVerifierKeys: string[]
  cosignatureTimestamp: { signatureBase64: string; timestamp: number }
  notACosignatureBase64: string
}
const arche = vectors('tlog-scales-arche2025h1.json') as {
  note: string
  logVerifierKey: string
  witnessVerifierKey: string
  origin: string
  size: number
  derived: { witnessTimestamp: number }
}
const go = vectors('go-sumdb-note.json') as { peter: { signerKey: string } }

const anyCosigner = cosignatureVerifierFromKey(generateCosignerKey('w').verifierKey)
const afterKeyId = (b64: string) => new Uint8Array(Buffer.from(b64, 'base64')).subarray(4)
const utf8 = (s: string) => new TextEncoder().encode(s)

describe('cosignatures against published examples', () => {
  it('builds the signed message of the c2sp.org/tlog-cosignature example', () => {
    const { text } = parseNote(c2sp.cosignature.note)
    const message = cosignatureMessage(text, c2sp.cosignature.timestamp)
    assert.equal(Buffer.from(message).toString(), c2sp.cosignature.signedMessage)
  })

  it('reads key ID and timestamp of the witness line in the c2sp.org/tlog-cosignature example', () => {
    const { signatures } = parseNote(c2sp.cosignature.note)
    const witness = signatures.find((s) => s.name === c2sp.cosignature.cosignerName)!
    assert.equal(witness.keyId, parseInt(c2sp.cosignature.derived.keyId, 16))
    assert.equal(witness.signature.length, 72)
    assert.equal(anyCosigner.timestampOf(witness.signature), c2sp.cosignature.timestamp)
  })

  it('reads the timestamp of the transparency-dev/formats cosignature, and refuses a plain signature', () => {
    const { signatureBase64, timestamp } = formats.cosignatureTimestamp
    assert.equal(anyCosigner.timestampOf(afterKeyId(signatureBase64)), timestamp)
    assert.throws(() => anyCosigner.timestampOf(afterKeyId(formats.notACosignatureBase64)), /wrong length/)
  })

  it('accepts the remora.n621.de cosigner key of transparency-dev/formats with key ID da77ade7', () => {
    const v = cosignatureVerifierFromKey(formats.cosignatureVerifierKey)
    assert.equal(v.name, 'remora.n621.de')
    assert.equal(v.keyId, 0xda77ade7)
  })

  it('takes only type 0x04 keys: a plain Ed25519 key is a note key, not a cosigner key', () => {
    assert.throws(
      () => cosignatureVerifierFromKey(formats.ed25519VerifierKeyWithPlus),
      /signature type 0x01, want 0x04/,
    )
    assert.equal(verifierFromKey(formats.ed25519VerifierKeyWithPlus).keyId, 0x7997405c)
    assert.throws(() => verifierFromKey(formats.cosignatureVerifierKey), /signature type 0x04, want 0x01/)
    assert.throws(() => cosignerFromKey(go.peter.signerKey), /signature type 0x01, want 0x04/)
  })

  it('rejects the bad verifier keys of transparency-dev/formats', () => {
    for (const key of formats.badVerifierKeys) {
      assert.throws(() => cosignatureVerifierFromKey(key), Error, key)
      assert.throws(() => verifierFromKey(key), Error, key)
    }
  })

  it('verifies a real witnessed checkpoint: the log signature and the remora.n621.de cosignature', () => {
    const log = verifierFromKey(arche.logVerifierKey)
    const witness = cosignatureVerifierFromKey(arche.witnessVerifierKey)
    const opened = openNote(arche.note, [log, witness])
    assert.deepEqual(
      opened.verified.map((s) => s.name),
      [arche.origin, 'remora.n621.de'],
    )
    assert.equal(opened.unverified.length, 4)
    assert.equal(witness.timestampOf(opened.verified[1]!.signature), arche.derived.witnessTimestamp)
    const c = parseCheckpoint(opened.text)
    assert.equal(c.size, arche.size)
  })

  it('rejects the real witnessed checkpoint once its tree size is changed', () => {
    const witness = cosignatureVerifierFromKey(arche.witnessVerifierKey)
    const tampered = arche.note.replace(`\n${arche.size}\n`, '\n42\n')
    assert.throws(
      () => openNote(tampered, [witness]),
      /^Error: invalid signature for key remora\.n621\.de\+da77ade7$/,
    )
  })
})

describe('cosignatures: round trips and rejections', () => {
  const now = 1_700_000_000
  const logKeys = generateNoteKey('example.com/log', new Uint8Array(32).fill(1))
  const witnessKeys = generateCosignerKey('witness.example.com/w1', new Uint8Array(32).fill(2))
  const log = signerFromKey(logKeys.signerKey)
  const cosigner = cosignerFromKey(witnessKeys.signerKey, () => now)
  const witness = cosignatureVerifierFromKey(witnessKeys.verifierKey)
  const rootHash = new Uint8Array(32).fill(9)
  const text = formatCheckpoint({ origin: 'example.com/log', size: 3, rootHash, extensions: [] })

  function cosign(checkpointText: string): string {
    const parsed = parseNote(signNote(checkpointText, [log]))
    return signNote(
      parsed.text,
      [cosigner],
      parsed.signatures.map((s) => s.line),
    )
  }

  it('derives the cosigner key ID with type 0x04 and encodes both keys like Go', () => {
    const { publicKey } = decodeEd25519VerifierKey(witnessKeys.verifierKey, COSIGNATURE_TYPE)
    const keyId = keyIdOf('witness.example.com/w1', new Uint8Array([0x04, ...publicKey]))
    assert.equal(witness.keyId, keyId)
    assert.equal(cosigner.keyId, keyId)
    const hex = keyId.toString(16).padStart(8, '0')
    assert.match(
      witnessKeys.verifierKey,
      new RegExp(`^witness\\.example\\.com/w1\\+${hex}\\+B[A-Za-z0-9+/]{43}$`),
    )
    assert.match(
      witnessKeys.signerKey,
      new RegExp(`^PRIVATE\\+KEY\\+witness\\.example\\.com/w1\\+${hex}\\+B`),
    )
  })

  it('adds a cosignature line that verifies with the log signature', () => {
    const note = cosign(text)
    const opened = openNote(note, [verifierFromKey(logKeys.verifierKey), witness])
    assert.deepEqual(
      opened.verified.map((s) => s.name),
      ['example.com/log', 'witness.example.com/w1'],
    )
    const cosignature = opened.verified[1]!.signature
    assert.equal(witness.timestampOf(cosignature), now)
    assert.deepEqual([...cosignature.subarray(0, 8)], [0, 0, 0, 0, 0x65, 0x53, 0xf1, 0x00])
    const { publicKey } = decodeEd25519VerifierKey(witnessKeys.verifierKey, COSIGNATURE_TYPE)
    assert.ok(verifyEd25519(publicKey, cosignatureMessage(text, now), cosignature.subarray(8)))
  })

  it('covers extension lines', () => {
    const withExtension = formatCheckpoint({
      origin: 'example.com/log',
      size: 3,
      rootHash,
      extensions: ['Extendo'],
    })
    const note = cosign(withExtension)
    assert.equal(openNote(note, [witness]).verified.length, 1)
    assert.throws(() => openNote(note.replace('Extendo', 'Extend@'), [witness]), /invalid signature/)
  })

  it('rejects a cosignature whose timestamp was changed', () => {
    const note = cosign(text)
    const line = parseNote(note).signatures[1]!.line
    const bytes = Buffer.from(line.split(' ')[2]!, 'base64')
    bytes[11]! += 1
    const tampered = note.replace(line, `— witness.example.com/w1 ${bytes.toString('base64')}`)
    assert.throws(() => openNote(tampered, [witness]), /invalid signature for key witness\.example\.com\/w1/)
  })

  it('refuses timestamps of 2^63 and above', () => {
    const signature = cosigner.sign(utf8(text))
    assert.ok(witness.verify(utf8(text), signature))
    signature[0] = 0x80
    assert.equal(witness.verify(utf8(text), signature), false)
    assert.throws(() => witness.timestampOf(signature), /too large/)
    assert.throws(() => cosignatureMessage(text, 2n ** 63n), /out of range/)
  })

  it('is not verified by the plain Ed25519 key of the same seed and name', () => {
    const plain = generateNoteKey('witness.example.com/w1', new Uint8Array(32).fill(2))
    assert.throws(
      () => openNote(cosign(text), [verifierFromKey(plain.verifierKey)]),
      /no verifiable signatures/,
    )
  })

  it('refuses to cosign a text that is not a checkpoint, or with a bad clock', () => {
    assert.throws(() => cosigner.sign(utf8('just a note\n')), /malformed checkpoint/)
    assert.throws(() => cosignerFromKey(witnessKeys.signerKey, () => -1).sign(utf8(text)), /timestamp/)
    assert.throws(() => cosignerFromKey(witnessKeys.signerKey, () => 1.5).sign(utf8(text)), /timestamp/)
    assert.equal(witness.verify(utf8('just a note\n'), new Uint8Array(72)), false)
    assert.equal(witness.verify(utf8(text), new Uint8Array(64)), false)
  })

  it('stamps cosignatures with the current time by default', () => {
    const before = Math.floor(Date.now() / 1000)
    const t = witness.timestampOf(cosignerFromKey(witnessKeys.signerKey).sign(utf8(text)))
    assert.ok(t >= before && t <= Math.floor(Date.now() / 1000))
  })
})
