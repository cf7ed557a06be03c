import { createHash } from 'node:crypto'
import { rentalError } from '../../errors.ts'
import { type RecordDeps, receiptsSlice } from './service.ts'
import type { OrgClient } from '../../http/index.ts'

type Section = 'agent' | 'engagements' | 'tasks' | 'receipts' | 'revocations'
interface Control {
  id: string
  title: string
  evidence: Section[]
}

/**
 * The frameworks an evidence pack maps to: each control heading names the sections of the pack
 * that speak to it. A mapping for orientation, not a certification or legal advice.
 */
export const FRAMEWORKS: Record<string, { name: string; controls: Control[] }> = {
  'eu-ai-act': {
    name: 'EU AI Act (Regulation (EU) 2024/1689)',
    controls: [
      { id: 'Art. 12', title: 'Record-keeping', evidence: ['tasks', 'receipts'] },
      {
        id: 'Art. 13',
        title: 'Transparency and provision of information to deployers',
        evidence: ['agent', 'engagements'],
      },
      { id: 'Art. 14', title: 'Human oversight', evidence: ['revocations'] },
      {
        id: 'Art. 26',
        title: 'Obligations of deployers of high-risk AI systems',
        evidence: ['engagements', 'tasks', 'receipts', 'revocations'],
      },
    ],
  },
  'iso-42001': {
    name: 'ISO/IEC 42001:2023, Annex A',
    controls: [
      { id: 'A.6.2.6', title: 'AI system operation and monitoring', evidence: ['tasks'] },
      { id: 'A.6.2.8', title: 'AI system recording of event logs', evidence: ['receipts'] },
      { id: 'A.9.2', title: 'Processes for responsible use of AI systems', evidence: ['revocations'] },
      { id: 'A.10.3', title: 'Suppliers', evidence: ['agent', 'engagements'] },
    ],
  },
  soc2: {
    name: 'SOC 2 Trust Services Criteria',
    controls: [
      { id: 'CC6.3', title: 'Access is authorised, modified and removed', evidence: ['revocations'] },
      {
        id: 'CC7.2',
        title: 'System components are monitored for anomalies',
        evidence: ['tasks', 'receipts'],
      },
      {
        id: 'CC9.2',
        title: 'Vendor and business partner risk is managed',
        evidence: ['agent', 'engagements'],
      },
      { id: 'PI1.4', title: 'Outputs are complete, accurate and timely', evidence: ['tasks', 'receipts'] },
    ],
  },
  'nist-ai-rmf': {
    name: 'NIST AI Risk Management Framework 1.0',
    controls: [
      { id: 'GOVERN 6.1', title: 'Policies for third-party AI risks', evidence: ['agent', 'engagements'] },
      {
        id: 'MEASURE 2.4',
        title: 'The AI system is monitored in production',
        evidence: ['tasks', 'receipts'],
      },
      {
        id: 'MANAGE 2.4',
        title: 'Mechanisms to supersede, disengage or deactivate AI systems',
        evidence: ['revocations'],
      },
    ],
  },
}
export const DEFAULT_FRAMEWORK = 'eu-ai-act'

/** The evidence pack of what the agent did for this client, mapped to the framework's controls. */
export async function evidencePack(deps: RecordDeps, client: OrgClient, did: string, frameworkId: string) {
  const framework = FRAMEWORKS[frameworkId]
  if (!framework)
    throw rentalError(
      'unknown_framework',
      `unknown framework ${frameworkId.slice(0, 50)}: known are ${Object.keys(FRAMEWORKS).join(', ')}`,
    )
  const { agent, engagements } = await deps.engagements.knownAgent(client.orgId, did)
  const tasks = await deps.tasks.tasksWith(client.orgId, did)
  const slice = await receiptsSlice(deps, client.orgId, did, { limit: 1000, offset: 0 })
  const revocation = await deps.engagements.revocationOf(client.orgId, did)
  const indexOf = new Map(slice.receipts.map((r) => [r.id, r.ledger_index]))
  const sections = {
    agent: agent ? 1 : 0,
    engagements: engagements.length,
    tasks: tasks.length,
    receipts: slice.receipts.length,
    revocations: revocation ? 1 : 0,
  }
  const verified = slice.receipts.filter((r) => r.verified).length
  const summaryOf = (section: Section) =>
    section === 'receipts'
      ? `${sections.receipts} receipt(s), ${verified} verified on the ledger`
      : section === 'agent'
        ? agent
          ? 'the agent is in the catalogue'
          : 'the agent is not in the catalogue'
        : `${sections[section]} ${section === 'revocations' ? 'revocation(s)' : section}`
  return {
    format: 'svc-evidence-pack/v1',
    framework: { id: frameworkId, name: framework.name },
    generated_at: deps.ctx.now().toISOString(),
    issuer: deps.ctx.provider.did,
    agent: {
      did,
      name: agent?.name ?? null,
      description: agent?.description ?? null,
      provider: agent?.provider ?? null,
      jobs: (agent?.jobs ?? []).map((j) => ({ id: j.id, title: j.title, outcome: j.outcome })),
    },
    controls: framework.controls.map((c) => ({
      id: c.id,
      title: c.title,
      evidence: c.evidence,
      summary: c.evidence.map(summaryOf).join('; '),
    })),
    engagements: engagements.map((e) => ({
      id: e.id,
      job_id: e.job_id,
      state: e.state,
      client_did: e.client_did,
      sla_hash: e.sla_hash,
      sla_signed: e.sla_signature !== null,
      price_fils: Number(e.price_fils),
      currency: e.currency,
      created_at: e.created_at.toISOString(),
      activated_at: e.activated_at?.toISOString() ?? null,
    })),
    tasks: tasks.map((t) => ({
      id: t.id,
      engagement_id: t.engagement_id,
      state: t.state,
      input_sha256: t.input_sha256,
      output_sha256: t.output_sha256,
      receipt_id: t.receipt_id,
      receipt_leaf_hash: t.receipt_leaf_hash,
      ledger_index: t.receipt_id ? (indexOf.get(t.receipt_id) ?? null) : null,
      error: t.error,
      created_at: t.created_at.toISOString(),
      completed_at: t.completed_at?.toISOString() ?? null,
    })),
    receipts: slice.receipts.map((r) => ({
      id: r.id,
      type: r.type,
      subject: r.subject,
      task_id: r.task_id,
      escrow_id: r.escrow_id,
      issued_at: r.issued_at,
      leaf_hash: r.leaf_hash,
      ledger_index: r.ledger_index,
      proof: r.proof,
      verified: r.verified,
      ...(r.problem ? { problem: r.problem } : {}),
    })),
    revocations: revocation
      ? [
          {
            agent_did: did,
            reason: revocation.reason,
            reason_sha256: createHash('sha256').update(revocation.reason, 'utf8').digest('hex'),
            revoked_at: revocation.revoked_at.toISOString(),
          },
        ]
      : [],
    ledger: { ...slice.ledger, checkpoint: slice.checkpoint, log_key: slice.log_key },
  }
}
export type EvidencePack = Awaited<ReturnType<typeof evidencePack>>

/**
 * Inline Markdown text on one line: the characters that open emphasis, code, links, HTML, entities,
 * strikethrough, GFM autolinks (`:`, `@`) or end a table cell are backslash-escaped (CommonMark escapes any ASCII punctuation).
 */
export const mdText = (value: string | number | boolean | null | undefined) =>
  value === null || value === undefined || value === ''
    ? '—'
    : String(value)
        .replace(/[\r\n]+/g, ' ')
        .replace(/[\\`*_[\]()#!|<>~&:@]/g, (c) => `\\${c}`)

/** A code span (ids, hashes, DIDs): backticks cannot end it early, pipes cannot end a table cell. */
export const mdCode = (value: string | number | null | undefined) =>
  value === null || value === undefined || value === ''
    ? '—'
    : `\`${String(value)
        .replace(/[\r\n]+/g, ' ')
        .replace(/`/g, "'")
        .replace(/\|/g, '\\|')}\``

const table = (head: string[], rows: string[][]) =>
  rows.length === 0
    ? 'No entries.\n'
    : [
        `| ${head.join(' | ')} |`,
        `| ${head.map(() => '---').join(' | ')} |`,
        ...rows.map((r) => `| ${r.join(' | ')} |`),
      ]
        .map((l) => `${l}\n`)
        .join('')

const fence = (text: string) => {
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((m) => m.length))
  const marks = '`'.repeat(longest + 1)
  return `${marks}text\n${text.endsWith('\n') ? text : `${text}\n`}${marks}\n`
}

/** The pack as GFM Markdown: the same facts as the JSON form. */
export function renderEvidenceMarkdown(pack: EvidencePack): string {
  const receiptRow = (r: EvidencePack['receipts'][number]) => [
    mdCode(r.id),
    mdCode(r.type),
    mdCode(r.task_id ?? r.escrow_id ?? r.subject),
    r.ledger_index === null ? '—' : String(r.ledger_index),
    mdCode(r.leaf_hash),
    r.verified ? 'yes' : `no${r.problem ? `: ${mdText(r.problem)}` : ''}`,
  ]
  const out = [
    `# Evidence pack: ${mdText(pack.agent.name ?? pack.agent.did)}\n`,
    `- Framework: ${mdText(pack.framework.name)} (${mdCode(pack.framework.id)})\n` +
      `- Agent: ${mdCode(pack.agent.did)}\n` +
      (pack.agent.provider
        ? `- Provider: ${mdText(pack.agent.provider.name)} (${mdCode(pack.agent.provider.id)})\n`
        : '') +
      `- Issued by: ${mdCode(pack.issuer)}\n` +
      `- Generated at: ${mdCode(pack.generated_at)}\n` +
      `- Ledger: ${mdCode(pack.ledger.url)} (${pack.ledger.reachable ? 'reachable' : 'unreachable'})\n`,
    '## Controls\n',
    'A mapping for orientation, not a certification or legal advice.\n',
    table(
      ['Control', 'Heading', 'Evidence', 'Summary'],
      pack.controls.map((c) => [mdCode(c.id), mdText(c.title), c.evidence.join(', '), mdText(c.summary)]),
    ),
    '## Agent\n',
    `${mdText(pack.agent.description)}\n`,
    table(
      ['Job', 'Title', 'Outcome'],
      pack.agent.jobs.map((j) => [mdCode(j.id), mdText(j.title), mdText(j.outcome)]),
    ),
    '## Engagements\n',
    table(
      ['Engagement', 'Job', 'State', 'Client DID', 'SLA hash', 'SLA signed', 'Created'],
      pack.engagements.map((e) => [
        mdCode(e.id),
        mdCode(e.job_id),
        mdText(e.state),
        mdCode(e.client_did),
        mdCode(e.sla_hash),
        e.sla_signed ? 'yes' : 'no',
        mdCode(e.created_at),
      ]),
    ),
    '## Tasks\n',
    table(
      ['Task', 'State', 'Input SHA-256', 'Output SHA-256', 'Receipt leaf hash', 'Ledger index', 'Error'],
      pack.tasks.map((t) => [
        mdCode(t.id),
        mdText(t.state),
        mdCode(t.input_sha256),
        mdCode(t.output_sha256),
        mdCode(t.receipt_leaf_hash),
        t.ledger_index === null ? '—' : String(t.ledger_index),
        mdText(t.error),
      ]),
    ),
    '## Receipts\n',
    table(
      ['Receipt', 'Type', 'About', 'Ledger index', 'Leaf hash', 'Verified'],
      pack.receipts.map(receiptRow),
    ),
    '## Revocations\n',
    table(
      ['Agent', 'Revoked at', 'Reason', 'Reason SHA-256'],
      pack.revocations.map((r) => [
        mdCode(r.agent_did),
        mdCode(r.revoked_at),
        mdText(r.reason),
        mdCode(r.reason_sha256),
      ]),
    ),
    '## Ledger checkpoint\n',
    pack.ledger.checkpoint
      ? `Size ${pack.ledger.checkpoint.size}, root ${mdCode(pack.ledger.checkpoint.root_hash)}, ` +
        `signature ${pack.ledger.checkpoint.verified ? 'verified' : 'not verified'} with the log key ` +
        `${mdCode(pack.ledger.log_key?.verifier_key)}.\n\n${fence(pack.ledger.checkpoint.note)}`
      : 'The ledger was unreachable: no checkpoint.\n',
  ]
  return out.join('\n')
}
