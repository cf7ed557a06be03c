/**
 * Checking a task's receipt with no one's word for it: the issuer's signature on the receipt, its
 * leaf hash (the one the rental named for the task), the log's signature on the checkpoint (by the
 * log key, pinned when given) and the RFC 9162 inclusion proof of the leaf under that checkpoint.
 * The checks are `@svc/trust`'s (which uses node:crypto: this part of the SDK runs on Node).
 */
import { b64Encode } from '@svc/trust/base64url'
import { type ReceiptBundle, verifyReceiptBundle } from '@svc/trust/bundle'
import { canonicalBytes } from '@svc/trust/jcs'
import { leafHash } from '@svc/trust/merkle'

export type { ReceiptBundle }

/** The checks, by name, in the order they run. */
export const RECEIPT_CHECKS = [
  'format',
  'receipt signature',
  'receipt subject',
  'leaf hash',
  'log key',
  'checkpoint signature',
  'inclusion proof',
] as const
export type ReceiptCheckName = (typeof RECEIPT_CHECKS)[number]

export interface ReceiptVerdict {
  ok: boolean
  /** Each check with what it found; a check after a failed one is not run (and not listed). */
  checks: Array<{ check: ReceiptCheckName; ok: boolean; detail: string }>
  index: number
  /** The receipt as signed (its type, issuer, subject, data). */
  receipt: ReceiptBundle['receipt']
}

export interface Expected {
  /** The log's key (`GET /v1/key` of the ledger, kept from before): pins the checkpoint's signer. */
  logKey?: string
  /** The leaf hash (base64) the rental named for the task (`receipt.leaf_hash`). */
  leafHash?: string
  /** The receipt's subject: the task's id. */
  subject?: string
}

/** Checks a receipt bundle offline; `expected` ties it to the task and the log. */
export function verifyBundle(bundle: ReceiptBundle, expected: Expected = {}): ReceiptVerdict {
  const trust = verifyReceiptBundle(bundle, expected.logKey)
  const checks: ReceiptVerdict['checks'] = []
  const add = (check: ReceiptCheckName, ok: boolean, detail: string) => {
    if (checks.every((c) => c.ok)) checks.push({ check, ok, detail })
  }
  const fromTrust = (name: ReceiptCheckName) => {
    const found = trust.checks.find((c) => c.check === name)
    if (found) add(name, found.ok, found.detail)
    else add(name, false, 'not run: an earlier check failed')
  }
  fromTrust('format')
  fromTrust('receipt signature')
  if (expected.subject !== undefined) {
    const subject = bundle.receipt.subject
    add('receipt subject', subject === expected.subject, `the receipt is about ${String(subject)}`)
  }
  let hash = ''
  try {
    hash = b64Encode(leafHash(canonicalBytes({ receipt: bundle.receipt, signature: bundle.signature })))
  } catch (err) {
    add('leaf hash', false, (err as Error).message)
  }
  if (hash) {
    if (expected.leafHash === undefined) add('leaf hash', true, `${hash} (not compared: none named)`)
    else add('leaf hash', hash === expected.leafHash, `${hash}, named ${expected.leafHash}`)
  }
  fromTrust('log key')
  fromTrust('checkpoint signature')
  fromTrust('inclusion proof')
  return {
    ok: checks.every((c) => c.ok) && checks.some((c) => c.check === 'inclusion proof'),
    checks,
    index: bundle.index,
    receipt: bundle.receipt,
  }
}
