import { randomUUID } from 'node:crypto'
import { type Part, Role, type Task, TaskState, type TaskStatus } from '@a2a-js/sdk'
import {
  AgentEvent,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server'
import {
  AGENT_RESULT_KEY,
  AGENT_SIGNATURE_KEY,
  type AgentResult,
  agentInputHash,
  agentOutputHash,
  signAgentResult,
} from '@svc/trust/agent-result'
import type { AgentKey } from '../../keys.ts'
import type { AgentDefinition } from './catalogue.ts'
import { dataPart, textPart } from '@svc/kit/http/a2a-parts'

/** The text parts of the user's message, in order (the routes refuse a message without one). */
export const inputTexts = (parts: Part[]): string[] =>
  parts.flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : []))

/**
 * Runs an agent's skill on the user's message: the task is submitted, working, then completed with
 * one artifact holding a text part, a data part, and in its metadata the signed `svc_result`.
 * The skills are synchronous and fast, so a task is never left running (nothing to cancel).
 */
export function agentExecutor(agent: AgentDefinition, key: AgentKey, now: () => Date): AgentExecutor {
  const status = (state: TaskState, at: Date): TaskStatus => ({
    state,
    message: undefined,
    timestamp: at.toISOString(),
  })
  return {
    async execute(request: RequestContext, bus: ExecutionEventBus) {
      const { taskId, contextId, userMessage } = request
      const texts = inputTexts(userMessage.parts)
      const task: Task = {
        id: taskId,
        contextId,
        status: status(TaskState.TASK_STATE_SUBMITTED, now()),
        artifacts: [],
        history: [userMessage],
        metadata: { agent: agent.id },
      }
      bus.publish(AgentEvent.task(task))
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: status(TaskState.TASK_STATE_WORKING, now()),
          metadata: undefined,
        }),
      )
      const output = agent.run(texts.join('\n'), userMessage.metadata ?? {})
      const completedAt = now()
      const result: AgentResult = {
        type: 'svc.agent-result',
        version: 1,
        agent_did: key.did,
        task_id: taskId,
        context_id: contextId,
        input_sha256: agentInputHash(texts),
        output_sha256: agentOutputHash(output.data),
        completed_at: completedAt.toISOString(),
      }
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: {
            artifactId: randomUUID(),
            name: `${agent.id}-result`,
            description: agent.skill.name,
            parts: [textPart(output.text), dataPart(output.data)],
            metadata: {
              [AGENT_RESULT_KEY]: result,
              [AGENT_SIGNATURE_KEY]: signAgentResult(result, key.seed),
            },
            extensions: [],
          },
          append: false,
          lastChunk: true,
          metadata: undefined,
        }),
      )
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: status(TaskState.TASK_STATE_COMPLETED, completedAt),
          metadata: undefined,
        }),
      )
      bus.finished()
    },
    async cancelTask(taskId: string, bus: ExecutionEventBus) {
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId: '',
          status: {
            state: TaskState.TASK_STATE_CANCELED,
            message: {
              messageId: randomUUID(),
              contextId: '',
              taskId,
              role: Role.ROLE_AGENT,
              parts: [textPart('canceled')],
              metadata: undefined,
              extensions: [],
              referenceTaskIds: [],
            },
            timestamp: now().toISOString(),
          },
          metadata: undefined,
        }),
      )
      bus.finished()
    },
  }
}
