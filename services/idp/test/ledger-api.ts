import { request } from '@svc/kit/testing'

export interface LedgerReceipt {
  index: number
  leaf_hash: string
  receipt: { type: string; issuer: string; subject: string; issued_at: string; data: Record<string, unknown> }
  signature: string
}

/**
 * The receipts the ledger holds about `subject` (read with a writer's token), once `enough` says
 * they have arrived: receipts are delivered by a job after the idp commits. 20 s at the most.
 */
export async function receiptsAbout(
  ledger: { url: string; writer: string },
  subject: string,
  enough: (receipts: LedgerReceipt[]) => boolean,
): Promise<LedgerReceipt[]> {
  const deadline = Date.now() + 20_000
  for (;;) {
    const res = await request(`${ledger.url}/v1/receipts?${new URLSearchParams({ subject })}`, {
      headers: { authorization: `Bearer ${ledger.writer}` },
    })
    const found = res.body.receipts as LedgerReceipt[]
    if (enough(found)) return found
    if (Date.now() > deadline)
      throw new Error(`the ledger holds ${found.length} receipts about ${subject}, not enough`)
    await new Promise((r) => setTimeout(r, 200))
  }
}
