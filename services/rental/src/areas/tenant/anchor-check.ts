import { b64uDecode } from '@svc/trust/base64url'
import { ed25519FromDidKey } from '@svc/trust/did-key'
import { verifyEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import type { TenantDeps } from './deps.ts'

const LEDGER_TIMEOUT_MS = 5000
const ANCHOR_RECEIPT = 'audit.anchored'

interface LedgerEntry {
  receipt?: { type?: unknown; issuer?: unknown; data?: { org_id?: unknown; seq?: unknown; head?: unknown } }
  signature?: unknown
}

/** The ledger's entry at `index`, or null when the ledger does not answer it. */
async function ledgerEntry(ledgerUrl: string, index: number): Promise<LedgerEntry | null> {
  try {
    const res = await fetch(`${ledgerUrl}/v1/entries/${index}`, {
      signal: AbortSignal.timeout(LEDGER_TIMEOUT_MS),
    })
    return res.ok ? ((await res.json()) as LedgerEntry) : null
  } catch {
    return null
  }
}

/** The head the entry publishes, if it is our signed anchor of this organization's chain at `pos`. */
function anchoredHead(entry: LedgerEntry, issuer: string, orgId: string, pos: number): string | null {
  const receipt = entry.receipt
  if (!receipt || receipt.type !== ANCHOR_RECEIPT || receipt.issuer !== issuer) return null
  if (receipt.data?.org_id !== orgId || receipt.data.seq !== pos || typeof receipt.data.head !== 'string')
    return null
  try {
    const signed = verifyEd25519(
      ed25519FromDidKey(issuer),
      canonicalBytes(receipt),
      b64uDecode(String(entry.signature)),
    )
    return signed ? receipt.data.head : null
  } catch {
    return null
  }
}

/**
 * GET /v1/audit/verify: the chain walked link by link (the events area), then its latest anchor
 * read back from the ledger: a chain rewritten whole, links and head alike, holds by itself but
 * no longer has the link the ledger published at the anchored place.
 */
export async function verifyWithAnchor(deps: TenantDeps, orgId: string) {
  const report = await deps.events.verifyChain(orgId)
  const anchor = await deps.events.latestAnchor(orgId)
  if (!anchor) return { ...report, anchor: null }
  const ledgerIndex = await deps.outbox.ledgerIndexOf(anchor.receipt_id)
  const base = {
    pos: anchor.pos,
    receipt_id: anchor.receipt_id,
    anchored_at: anchor.anchored_at,
    ledger_index: ledgerIndex,
  }
  if (ledgerIndex === null)
    return {
      ...report,
      anchor: { ...base, state: 'pending' as const, message: 'the anchor is not on the ledger yet' },
    }
  const entry = await ledgerEntry(deps.ledgerUrl.replace(/\/+$/, ''), ledgerIndex)
  if (!entry)
    return {
      ...report,
      anchor: {
        ...base,
        state: 'ledger_unreachable' as const,
        message: `the ledger did not answer its entry ${ledgerIndex}`,
      },
    }
  const head = anchoredHead(entry, deps.providerDid, orgId, anchor.pos)
  const link = await deps.events.linkAt(orgId, anchor.pos)
  if (head !== null && head === link)
    return {
      ...report,
      anchor: {
        ...base,
        state: 'matches' as const,
        message: `the chain’s link at place ${anchor.pos} is the head published at ledger entry ${ledgerIndex}`,
      },
    }
  const message =
    head === null
      ? `the ledger’s entry ${ledgerIndex} is not this organization’s anchor at place ${anchor.pos}`
      : `the chain’s link at place ${anchor.pos} is not the head published at ledger entry ${ledgerIndex}: the record was rewritten`
  return {
    ...report,
    ok: false,
    // a break the walk found comes first; else the anchored place is where the chain departs
    problem: report.problem ?? {
      pos: anchor.pos,
      seq: null,
      problem: 'anchor_mismatch' as const,
      message,
    },
    anchor: { ...base, state: 'mismatch' as const, message },
  }
}
