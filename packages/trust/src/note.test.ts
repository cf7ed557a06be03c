import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import {
  decodeEd25519VerifierKey,
  ED25519_TYPE,
  generateNoteKey,
  keyIdOf,
  openNote,
  parseNote,
  signerFromKey,
  signNote,
  verifierFromKey,
  type NoteVerifier,
} from './note.ts'

const vectors = (file: string): unknown =>
  JSON.parse(readFileSync(new URL(`../testdata/note/${file}`, import.meta.url), 'utf8'))

interface GoKey {
  name: string
  keyId: string
  signerKey?: string
  verifierKey: string
  signatureLine: string
}
const go = vectors('go-sumdb-note.json') as {
  peter: GoKey & { signerKey: string }
  enoch: GoKey
  text: string
  signedNote: string
  badVerifierKeys: string[]
}
const c2sp = vectors('c2sp-examples.json') as {
  signedNote: { note: string; text: string; name: string; derived: { keyId: string } }
  signedNoteVerifierKeyExample: { verifierKey: string; publicKeyHex: string; note: string; text: string }
}

const peter = verifierFromKey(go.peter.verifierKey)
const enoch = verifierFromKey(go.enoch.verifierKey)
const { text } = go
const peterSig = `${go.peter.signatureLine}\n`
const enochSig = `${go.enoch.signatureLine}\n`

/** Go's tests slice notes by UTF-8 byte offsets. */
function insertAtByte(line: string, offset: number, insert: string): string {
  const b = Buffer.from(line)
  return Buffer.concat([b.subarray(0, offset), Buffer.from(insert), b.subarray(offset)]).toString()
}

/** Every proper substring and every single-byte increment, as Go's TestNewVerifier and TestNewSigner. */
function manglings(key: string): string[] {
  const out: string[] = []
  for (let i = 0; i <= key.length; i++) {
    for (let j = i + 1; j <= key.length; j++) if (i !== 0 || j !== key.length) out.push(key.slice(i, j))
  }
  for (let i = 0; i < key.length; i++) {
    out.push(key.slice(0, i) + String.fromCharCode(key.charCodeAt(i) + 1) + key.slice(i + 1))
  }
  return out
}

describe('note keys (golang.org/x/mod/sumdb/note vectors)', () => {
  it('reads the PeterNeumann signer and verifier keys with key ID c74f20a3', () => {
    const signer = signerFromKey(go.peter.signerKey)
    assert.equal(signer.name, 'PeterNeumann')
    assert.equal(signer.keyId, 0xc74f20a3)
    assert.equal(peter.name, 'PeterNeumann')
    assert.equal(peter.keyId, parseInt(go.peter.keyId, 16))
    assert.equal(enoch.keyId, 0xaf0cfe78)
  })

  it('generates the published PeterNeumann key strings from its seed', () => {
    const seed = Buffer.from(go.peter.signerKey.split('+').slice(4).join('+'), 'base64').subarray(1)
    assert.deepEqual(generateNoteKey('PeterNeumann', seed), {
      signerKey: go.peter.signerKey,
      verifierKey: go.peter.verifierKey,
    })
  })

  it('derives key IDs as SHA-256(name || 0x0A || type || public key)[:4]', () => {
    const typeAndKey = (vkey: string) =>
      new Uint8Array(Buffer.from(vkey.split('+').slice(2).join('+'), 'base64'))
    assert.equal(keyIdOf('PeterNeumann', typeAndKey(go.peter.verifierKey)), 0xc74f20a3)
    assert.equal(keyIdOf('EnochRoot', typeAndKey(go.enoch.verifierKey)), 0xaf0cfe78)
    const example = c2sp.signedNoteVerifierKeyExample.verifierKey
    assert.equal(keyIdOf('example.com/foo', typeAndKey(example)), 0x530d903a)
  })

  it('rejects every truncation and every single-byte change of a verifier key', () => {
    for (const bad of [...manglings(go.peter.verifierKey), ...go.badVerifierKeys]) {
      assert.throws(() => verifierFromKey(bad), Error, bad)
    }
  })

  it('rejects every truncation and every single-byte change of a signer key', () => {
    for (const bad of manglings(go.peter.signerKey)) assert.throws(() => signerFromKey(bad), Error, bad)
  })

  it('does not take a signer key as a verifier key or the reverse', () => {
    assert.throws(() => verifierFromKey(go.peter.signerKey), /invalid key name|malformed/)
    assert.throws(() => signerFromKey(go.peter.verifierKey), /malformed signer key/)
  })
})

describe('signNote (golang.org/x/mod/sumdb/note vectors)', () => {
  const signer = signerFromKey(go.peter.signerKey)

  it('reproduces the published PeterNeumann note byte for byte', () => {
    assert.equal(signNote(text, [signer]), go.signedNote)
  })

  it('replaces an existing signature of the key that signs again', () => {
    assert.equal(signNote(text, [signer], [go.peter.signatureLine]), go.signedNote)
  })

  it('keeps existing signature lines of other keys before the new ones', () => {
    assert.equal(signNote(text, [signer], [go.enoch.signatureLine]), `${text}\n${enochSig}${peterSig}`)
  })

  it('rejects a text without a final newline, a bad signer name and a malformed existing line', () => {
    assert.throws(() => signNote('abc', [signer]), /does not end in a newline/)
    assert.throws(() => signNote(text, [{ ...signer, name: 'a+b' }]), /invalid signer/)
    assert.throws(() => signNote(text, [signer], ['— a+b ABCD']), /invalid key name/)
    assert.throws(() => signNote(text, [signer], [peterSig]), /newline/)
    assert.throws(() => signNote(text, []), /at least one signature/)
  })

  it('rejects a text with control characters', () => {
    assert.throws(() => signNote('tab\there\n', [signer]), /control character U\+0009/)
  })
})

describe('openNote (golang.org/x/mod/sumdb/note TestOpen)', () => {
  const both = `${text}\n${peterSig}${enochSig}`

  it('verifies the known key and returns the other signature as unverified', () => {
    const n = openNote(both, [peter])
    assert.equal(n.text, text)
    assert.deepEqual(
      n.verified.map((s) => s.line),
      [go.peter.signatureLine],
    )
    assert.deepEqual(
      n.unverified.map((s) => [s.name, s.keyId]),
      [['EnochRoot', 0xaf0cfe78]],
    )
  })

  it('verifies both signatures when both keys are known', () => {
    const n = openNote(both, [peter, enoch])
    assert.deepEqual(
      n.verified.map((s) => s.name),
      ['PeterNeumann', 'EnochRoot'],
    )
    assert.equal(n.unverified.length, 0)
  })

  it('rejects a note without a signature from a known key', () => {
    assert.throws(() => openNote(both, []), /^Error: note has no verifiable signatures$/)
  })

  it('rejects a signature that two verifiers claim, but not an unused duplicate', () => {
    assert.throws(
      () => openNote(`${text}\n${enochSig}`, [enoch, peter, enoch]),
      /ambiguous key EnochRoot\+af0cfe78/,
    )
    assert.equal(openNote(`${text}\n${peterSig}`, [enoch, peter, enoch]).verified.length, 1)
  })

  it('rejects more than 100 signatures', () => {
    assert.throws(() => openNote(`${text}\n${peterSig.repeat(101)}`, [peter]), /malformed note/)
    assert.throws(() => openNote(`${text}\n${peterSig.repeat(101)}`, []), /malformed note/)
  })

  it('rejects the whole note when a known key signature fails', () => {
    const bad = insertAtByte(peterSig, 60, 'ABCD')
    assert.throws(
      () => openNote(`${text}\n${bad}`, [peter]),
      /^Error: invalid signature for key PeterNeumann\+c74f20a3$/,
    )
  })

  it('drops repeated signatures and keeps distinct unverified ones', () => {
    const enochABCD = insertAtByte(enochSig, 60, 'ABCD')
    const n = openNote(`${text}\n${peterSig}${peterSig}${enochSig}${enochSig}${enochABCD}`, [peter])
    assert.deepEqual(
      n.verified.map((s) => s.line),
      [go.peter.signatureLine],
    )
    assert.deepEqual(
      n.unverified.map((s) => s.line),
      [go.enoch.signatureLine, enochABCD.slice(0, -1)],
    )
  })

  it('rejects the malformed messages of Go TestOpen', () => {
    const bad = [
      text,
      `${text}\n`,
      `${text}\n${peterSig.slice(0, -1)}`,
      `\x01${text}\n${peterSig}`,
      `${text}\n— Bad Name x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=`,
      `${text}\n${peterSig}Unexpected line.\n`,
    ]
    for (const note of bad) assert.throws(() => openNote(note, [peter]), /^Error: malformed note/, note)
    const invalidUtf8 = Buffer.concat([Buffer.from([0xff]), Buffer.from(`${text}\n${peterSig}`)])
    assert.throws(() => openNote(new Uint8Array(invalidUtf8), [peter]), /malformed note: not valid UTF-8/)
  })

  it('opens the note given as UTF-8 bytes', () => {
    assert.equal(openNote(new Uint8Array(Buffer.from(go.signedNote)), [peter]).text, text)
  })
})

describe('c2sp.org/signed-note examples', () => {
  it('splits the opening example at its last blank line', () => {
    const { text: t, signatures } = parseNote(c2sp.signedNote.note)
    assert.equal(t, c2sp.signedNote.text)
    assert.equal(signatures.length, 1)
    assert.equal(signatures[0]!.name, c2sp.signedNote.name)
    assert.equal(signatures[0]!.keyId, parseInt(c2sp.signedNote.derived.keyId, 16))
    assert.equal(signatures[0]!.signature.length, 64)
  })

  it('verifies the example.com/foo note with its verifier key', () => {
    const ex = c2sp.signedNoteVerifierKeyExample
    const v = verifierFromKey(ex.verifierKey)
    assert.equal(v.keyId, 0x530d903a)
    const { publicKey } = decodeEd25519VerifierKey(ex.verifierKey, ED25519_TYPE)
    assert.equal(Buffer.from(publicKey).toString('hex'), ex.publicKeyHex)
    const n = openNote(ex.note, [v])
    assert.equal(n.text, ex.text)
    assert.equal(n.verified[0]!.name, 'example.com/foo')
  })
})

describe('signed notes: round trips and rejections', () => {
  const seed = new Uint8Array(32).fill(7)
  const keys = generateNoteKey('example.com/log', seed)
  const signer = signerFromKey(keys.signerKey)
  const verifier = verifierFromKey(keys.verifierKey)
  const body = 'first line\n\nafter an empty line\n'
  const note = signNote(body, [signer])

  it('opens what it signs, keeping empty lines of the text', () => {
    assert.deepEqual(openNote(note, [verifier]).text, body)
    assert.deepEqual(parseNote(note).signatures[0]!.line, note.split('\n').at(-2))
  })

  it('generates a fresh random key when no seed is given', () => {
    const a = generateNoteKey('example.com/log')
    assert.notEqual(a.signerKey, generateNoteKey('example.com/log').signerKey)
    assert.match(a.verifierKey, /^example\.com\/log\+[0-9a-f]{8}\+A[A-Za-z0-9+/]{43}$/)
    assert.throws(() => generateNoteKey('has space'), /invalid key name/)
    assert.throws(() => generateNoteKey('a+b'), /invalid key name/)
    assert.throws(() => generateNoteKey(''), /invalid key name/)
  })

  it('rejects tampered text and a tampered signature', () => {
    assert.throws(
      () => openNote(note.replace('first', 'First'), [verifier]),
      /invalid signature for key example\.com\/log/,
    )
    const line = parseNote(note).signatures[0]!.line
    const sig = Buffer.from(line.split(' ')[2]!, 'base64')
    sig[10]! ^= 1
    const tampered = note.replace(line, `— example.com/log ${sig.toString('base64')}`)
    assert.throws(() => openNote(tampered, [verifier]), /invalid signature/)
  })

  it('ignores a signature of another key with the same name', () => {
    const other = verifierFromKey(generateNoteKey('example.com/log', new Uint8Array(32).fill(8)).verifierKey)
    assert.throws(() => openNote(note, [other]), /no verifiable signatures/)
  })

  it('rejects a signature made with another key under a known name and key ID', () => {
    const impostor = signerFromKey(generateNoteKey('example.com/log', new Uint8Array(32).fill(8)).signerKey)
    const forged = signNote(body, [{ ...impostor, keyId: verifier.keyId }])
    assert.throws(() => openNote(forged, [verifier]), /invalid signature for key/)
  })

  it('rejects malformed notes with clear errors', () => {
    const line = parseNote(note).signatures[0]!.line
    const cases: [string, RegExp][] = [
      [`${body}${line}\n`, /does not start with an em dash and a space: "after an empty line"/],
      ['no blank line\n— example.com/log AAAAAAA=\n', /no blank line/],
      [`${body}\n${line}`, /does not end in a newline/],
      [`${body}\n${line.replace('—', '-')}\n`, /does not start with an em dash/],
      [`${body}\n${line.replace('—', '\u2013')}\n`, /does not start with an em dash/],
      [`${body}\n${line.replace('— ', '—')}\n`, /does not start with an em dash/],
      [`${body}\n${line}!\n`, /not canonical standard base64/],
      [`${body}\n${line.slice(0, -1)}\n`, /not canonical standard base64/],
      [`${body}\n— example.com/log AAAA\n`, /shorter than a key ID/],
      [`${body}\n— example.com/log\n`, /no space/],
      [`${body}\n— example.com/log  ${line.split(' ')[2]}\n`, /base64/],
      [`${body}\n${line}\r\n`, /control character U\+000d/],
      [`tab\there\n\n${line}\n`, /control character U\+0009/],
      [`lone \uD800 surrogate\n\n${line}\n`, /not valid UTF-8/],
      [`${body}\n${line}\n\n`, /no signature lines/],
    ]
    for (const [bad, why] of cases) {
      assert.throws(() => openNote(bad, [verifier]), why, JSON.stringify(bad))
      assert.throws(() => parseNote(bad), why, JSON.stringify(bad))
    }
  })

  it('accepts a verifier list with unrelated keys', () => {
    const unrelated: NoteVerifier = { name: 'x', keyId: 1, verify: () => assert.fail('not asked') }
    assert.equal(openNote(note, [unrelated, verifier]).verified.length, 1)
  })
})
