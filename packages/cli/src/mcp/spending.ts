/**
 * The spending rule: a tool that commits money asks the person first, through MCP elicitation
 * (`elicitation/create`), showing the amount and the counterparty in words. A client that cannot
 * ask is refused, unless the server was started with `--allow-spend AED`: an allowance for this
 * server session, counted down by each payment, never overspent.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js'
import { aed } from './words.ts'

/** One payment to approve. */
export interface Spend {
  amountFils: number
  /** Who is paid, in words: the agent's name (and its provider). */
  counterparty: string
  /** What the money is for, as a sentence: "Hire Summariser for “Invoice check”: …". */
  purpose: string
  /** The escrows a release pays out: one whose hold this session's allowance paid for counts nothing more. */
  escrows?: Array<{ hash: string; amountFils: number }>
}

export type Decision =
  | { ok: true; by: 'person' | 'allowance'; release: () => void; covers: (hashes: string[]) => void }
  | { ok: false; outcome: 'declined' | 'cancelled' | 'refused'; sentence: string }

export class SpendGate {
  private leftFils: number | undefined
  /** Escrows whose hold this session's allowance already paid for: releasing them counts nothing more. */
  private readonly counted = new Set<string>()

  constructor(
    private readonly server: Server,
    allowanceFils?: number,
  ) {
    this.leftFils = allowanceFils
  }

  /** What is left of the allowance (undefined: no allowance given). */
  get allowanceLeftFils() {
    return this.leftFils
  }

  /** Whether the connected client can ask the person (it declared the elicitation capability). */
  canAsk(): boolean {
    const elicitation = this.server.getClientCapabilities()?.elicitation
    // 2025-06-18 clients declare `{}`; later ones `{ form: {} }` (a URL-only client cannot show a form)
    return !!elicitation && (Object.keys(elicitation).length === 0 || 'form' in elicitation)
  }

  /**
   * Asks for a payment: the person through elicitation when the client can ask, else the
   * allowance. A yes from the allowance reserves the amount at once (two calls at a time never
   * both fit into what is left); `release()` gives it back when the payment did not happen.
   */
  async approve(spend: Spend): Promise<Decision> {
    const amount = aed(spend.amountFils)
    if (this.canAsk()) return this.ask(spend, amount)
    if (this.leftFils === undefined)
      return {
        ok: false,
        outcome: 'refused',
        sentence:
          `Refused: ${amount} to ${spend.counterparty} needs the person’s yes, and this MCP client cannot ask ` +
          '(it does not support elicitation). Nothing was spent. Start the server with `svc mcp --allow-spend AED` ' +
          'to allow an amount for this session, or do this with the `svc` command line.',
      }
    const paidBefore = (spend.escrows ?? [])
      .filter((e) => this.counted.has(e.hash))
      .reduce((sum, e) => sum + e.amountFils, 0)
    const cost = Math.max(spend.amountFils - paidBefore, 0)
    if (cost > this.leftFils)
      return {
        ok: false,
        outcome: 'refused',
        sentence:
          `Refused: ${aed(cost)} to ${spend.counterparty} is more than the ${aed(this.leftFils)} left of this ` +
          'session’s spending allowance (--allow-spend). Nothing was spent.',
      }
    this.leftFils -= cost
    return {
      ok: true,
      by: 'allowance',
      release: () => {
        if (this.leftFils !== undefined) this.leftFils += cost
      },
      covers: (hashes) => hashes.forEach((h) => this.counted.add(h)),
    }
  }

  private async ask(spend: Spend, amount: string): Promise<Decision> {
    const result = await this.server.request(
      {
        method: 'elicitation/create',
        params: {
          message: `${spend.purpose}\n\nAmount: ${amount}. Paid to: ${spend.counterparty}. Allow this payment?`,
          requestedSchema: {
            type: 'object',
            properties: {
              confirm: {
                type: 'boolean',
                title: `Pay ${amount} to ${spend.counterparty}`,
                description: 'Tick to allow this payment; leave it to refuse.',
                default: false,
              },
            },
          },
        },
      },
      ElicitResultSchema,
      // the person may take a while to answer
      { timeout: 10 * 60_000 },
    )
    const nothing = { release: () => {}, covers: () => {} }
    if (result.action === 'accept' && result.content?.confirm !== false)
      return { ok: true, by: 'person', ...nothing }
    const outcome = result.action === 'cancel' ? 'cancelled' : 'declined'
    return {
      ok: false,
      outcome,
      sentence: `The person ${outcome === 'cancelled' ? 'cancelled' : 'declined'} paying ${amount} to ${spend.counterparty}: nothing was spent.`,
    }
  }
}
