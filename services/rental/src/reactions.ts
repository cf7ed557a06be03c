import type { Reactions } from '@svc/kit'
import type { ToolCallDecisions } from './areas/approvals/index.ts'
import type { EngagementLookup } from './areas/budgets/index.ts'
import type { HoldCheck } from './areas/files/index.ts'
import type { ModelsOf } from './areas/models/index.ts'
import type { ApprovalGate, HeldScope, MessageMetadata, TaskEndHook } from './areas/tasks/index.ts'

/**
 * What one area does for another that cannot `need` it: the asking area is mounted first (the
 * reacting area needs it), so needing it back would be a cycle. Each is declared here once, with
 * the area that asks and the one that reacts; the reacting area registers at its mount
 * (`ctx.reactions.on`), the asking one reads the reactions when it runs, after every area is mounted.
 */
export interface RentalReactionTypes {
  /** tasks ask approvals (areas/approvals): whether a new task waits, an agent's question, a waiting task's end. */
  'tasks.gate': ApprovalGate
  /** tasks announce an engagement's task ended unpaid, in its transaction (areas/ending returns its escrow). */
  'tasks.ended': TaskEndHook
  /** tasks ask what legal holds cover (areas/retention): outputs there are not purged. */
  'tasks.held': HeldScope
  /** tasks add to the message an agent gets for a task (areas/connect, areas/teams: their credentials). */
  'tasks.message': MessageMetadata
  /** files ask whether a legal hold covers a file before its DELETE (areas/retention). */
  'files.hold': HoldCheck
  /** approvals announce a held tool call decided (areas/connect runs or ends it). */
  'approvals.toolCall': ToolCallDecisions
  /** the market and the catalogue show the models agents declare (areas/models). */
  'models.of': ModelsOf
  /** budgets ask whether an engagement is the organization's (areas/engagements). */
  'budgets.engagement': EngagementLookup
}

/** The rental's reactions, one registry per app (`ctx.reactions`). */
export type RentalReactions = Reactions<RentalReactionTypes>

/** Without the models area: no agent declares a model. */
export const NO_MODELS: ModelsOf = async () => new Map()
