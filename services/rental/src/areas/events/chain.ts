import { createHash } from 'node:crypto'
import { canonicalize } from '@svc/trust/jcs'
import type { RentalDb } from '../../db.ts'
import { chainedEvents, headOf, lockHeads, saveHeads, setLinks } from './chain-store.ts'
import type { EventView } from './service.ts'
import type { EventRow } from './store.ts'

/** The hash before an organization's first entry. */
export const CHAIN_GENESIS = '0'.repeat(64)

/**
 * An entry's link: SHA-256 of the JCS form of its previous link, its place and every field it was
 * written with. Editing any of them, or removing an entry, breaks the links after it.
 */
export function linkOf(prev: string, pos: number, event: EventView): string {
  const form = {
    prev,
    pos,
    seq: event.seq,
    org_id: event.org_id,
    type: event.type,
    stream: event.stream,
    stream_seq: event.stream_seq,
    subjects: event.subjects,
    actor: event.actor,
    data: event.data,
    created_at: event.created_at,
  }
  return createHash('sha256').update(canonicalize(form), 'utf8').digest('hex')
}

/**
 * The `audit-chain` consumer: gives each organization's new events (in commit order, in the
 * transaction that moves its cursor) their place and link, and moves the chain's head.
 */
export async function chainEvents(trx: RentalDb, events: EventView[]) {
  const orgIds = [...new Set(events.flatMap((e) => (e.org_id === null ? [] : [e.org_id])))]
  const heads = await lockHeads(trx, orgIds)
  const links: Array<{ seq: number; pos: number; hash: string }> = []
  for (const event of events) {
    if (event.org_id === null) continue
    const head = heads.get(event.org_id) ?? { pos: 0, hash: CHAIN_GENESIS }
    const pos = head.pos + 1
    const hash = linkOf(head.hash, pos, event)
    links.push({ seq: event.seq, pos, hash })
    heads.set(event.org_id, { pos, hash })
  }
  await setLinks(trx, links)
  await saveHeads(trx, heads)
}

export interface ChainProblem {
  /** The place where the chain first breaks. */
  pos: number
  /** The event found there (null: none; removed, or moved out of the organization). */
  seq: number | null
  problem: 'edited' | 'removed' | 'head_mismatch'
  message: string
}

export interface ChainReport {
  ok: boolean
  /** How many entries were checked. */
  checked: number
  head: { pos: number; hash: string }
  problem: ChainProblem | null
}

const PAGE = 1000

/**
 * Walks the organization's chain from its first entry to its head, recomputing each link: an
 * edited entry's link differs; a removed one leaves a gap in the places; a removed last entry
 * leaves the chain short of its head. Events not chained yet (written after the head) are not read.
 */
export async function verifyChain(
  db: RentalDb,
  orgId: string,
  view: (row: EventRow) => EventView,
): Promise<ChainReport> {
  const headRow = await headOf(db, orgId)
  const head = headRow
    ? { pos: Number(headRow.last_pos), hash: headRow.last_hash }
    : { pos: 0, hash: CHAIN_GENESIS }
  let prev = CHAIN_GENESIS
  let expected = 1
  const broken = (problem: ChainProblem): ChainReport => ({ ok: false, checked: expected - 1, head, problem })
  while (expected <= head.pos) {
    const rows = await chainedEvents(db, orgId, expected, head.pos, PAGE)
    if (rows.length === 0) break
    for (const row of rows) {
      const pos = Number(row.chain_pos)
      if (pos !== expected)
        return broken({
          pos: expected,
          seq: null,
          problem: 'removed',
          message: `the entry at place ${expected} is missing (the next one found is at ${pos})`,
        })
      const link = linkOf(prev, pos, view(row))
      if (link !== row.chain_hash)
        return broken({
          pos,
          seq: Number(row.seq),
          problem: 'edited',
          message: `the entry at place ${pos} (evt_${row.seq}) does not match its link: edited, or one before it was`,
        })
      prev = link
      expected++
    }
  }
  if (expected <= head.pos)
    return broken({
      pos: expected,
      seq: null,
      problem: 'removed',
      message: `the chain ends at place ${expected - 1}, its head is at ${head.pos}: entries were removed`,
    })
  if (prev !== head.hash)
    return broken({
      pos: head.pos,
      seq: null,
      problem: 'head_mismatch',
      message: 'the last entry’s link is not the head’s hash',
    })
  return { ok: true, checked: head.pos, head, problem: null }
}
