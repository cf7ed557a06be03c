import { startService } from '@svc/kit'
import { request, testEnv } from '@svc/kit/testing'
import { ledger } from '../../../services/ledger/src/app.ts'
import { idp } from '../../../services/idp/src/app.ts'
import { ADMIN } from './idp-flow.ts'

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

/**
 * A ledger and an idp that writes its receipts there with `writer` (rate limits off); the ledger
 * may take other writers too (`ledgerWriters`, LEDGER_WRITERS form).
 */
export async function idpWithLedger(
  writer: string,
  env: Record<string, string> = {},
  ledgerWriters = `idp:${writer}`,
) {
  const log = await startService(
    ledger,
    testEnv({ LEDGER_WRITERS: ledgerWriters, LEDGER_BATCH_WAIT_MS: '2' }),
    {
      fresh: true,
    },
  )
  const service = await startService(
    idp,
    testEnv({
      IDP_ADMIN_TOKEN: ADMIN,
      IDP_TOKEN_RATE_PER_MIN_CLIENT: '0',
      IDP_TOKEN_RATE_PER_MIN_IP: '0',
      IDP_LEDGER_TOKEN: writer,
      LEDGER_URL: log.url,
      ...env,
    }),
    { fresh: true },
  )
  return { log, service }
}
