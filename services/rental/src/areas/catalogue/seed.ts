/** The demo catalogue (development and tests): jobs of the built-in agents, prices in AED fils. */
export interface SeedJob {
  id: string
  title: string
  profile: string
  outcome: string
  description: string
  price_fils: number
  /** The agents service's ids of the agents that serve it. */
  agents: string[]
}

export const DEMO_JOBS: SeedJob[] = [
  {
    id: 'job_summary',
    title: 'Document summary',
    profile: 'summariser',
    outcome: 'a short summary of a document',
    description: 'The key points of a report, contract or article, in a few sentences.',
    price_fils: 2_500,
    agents: ['summariser'],
  },
  {
    id: 'job_extraction',
    title: 'Field extraction',
    profile: 'extractor',
    outcome: 'structured fields from a document',
    description: 'Names, dates, amounts and references pulled out as JSON.',
    price_fils: 4_000,
    agents: ['extractor'],
  },
  {
    id: 'job_invoice_check',
    title: 'Invoice check',
    profile: 'invoice-checker',
    outcome: 'an invoice checked for arithmetic and required fields',
    description: 'Totals, VAT and mandatory fields of an invoice checked, with the problems found.',
    price_fils: 6_000,
    agents: ['invoice-checker'],
  },
  {
    id: 'job_brief',
    title: 'Brief with key facts',
    profile: 'summariser+extractor',
    outcome: 'a summary and the facts it rests on',
    description: 'A summary together with the extracted figures and dates.',
    price_fils: 7_500,
    agents: ['summariser', 'extractor'],
  },
  {
    id: 'job_invoice_review',
    title: 'Invoice review',
    profile: 'invoice-checker+summariser',
    outcome: 'an invoice checked and explained in plain words',
    description: 'The invoice check, followed by a short explanation for the approver.',
    price_fils: 9_000,
    agents: ['invoice-checker', 'summariser'],
  },
  {
    id: 'job_notes',
    title: 'Note filing',
    profile: 'note-taker',
    outcome: 'a note filed in the client’s own notes tool',
    description: 'The text filed as a note through a connection to the client’s tool server (MCP).',
    price_fils: 1_500,
    agents: ['note-taker'],
  },
  {
    id: 'job_team_brief',
    title: 'Team brief',
    profile: 'team-lead',
    outcome: 'a brief made by a team: a summary and the facts, each by its own agent',
    description:
      'The team lead delegates the summary and the extraction to its members through the rental and merges their signed results.',
    price_fils: 10_000,
    agents: ['team-lead'],
  },
]
