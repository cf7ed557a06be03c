import { cosignatureVerifierFromKey } from '@svc/trust/cosignature'
import type { LedgerConfig, WitnessTarget } from '../../config.ts'
import type { WitnessSet } from './pusher.ts'

/**
 * The configured witnesses and, in development (LEDGER_WITNESSES unset), the idp's, found at its
 * /.well-known/svc-witness.json the first time it answers. Production names every witness.
 */
export function witnessSet(config: Pick<LedgerConfig, 'witnesses' | 'discoverWitness'>): WitnessSet {
  let discovered: WitnessTarget | undefined
  return {
    keys: () => [...config.witnesses, ...(discovered ? [discovered] : [])].map((w) => w.verifierKey),
    async targets() {
      if (config.discoverWitness && !discovered) discovered = await discover(config.discoverWitness)
      return [...config.witnesses, ...(discovered ? [discovered] : [])]
    },
  }
}

async function discover(idpUrl: string): Promise<WitnessTarget> {
  const res = await fetch(`${idpUrl}/.well-known/svc-witness.json`, { signal: AbortSignal.timeout(5_000) })
  if (!res.ok) throw new Error(`the idp's svc-witness.json answered ${res.status}`)
  const { witness } = (await res.json()) as {
    witness?: { verifier_key?: string; submission_prefix?: string }
  }
  if (!witness?.verifier_key || !witness.submission_prefix)
    throw new Error('svc-witness.json names no witness')
  cosignatureVerifierFromKey(witness.verifier_key)
  return { verifierKey: witness.verifier_key, prefix: witness.submission_prefix }
}
