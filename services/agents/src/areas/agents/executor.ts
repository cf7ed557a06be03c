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
import type { AgentDefinition, AgentEnv } from './catalogue.ts'
import { type FileRules, type ReadFile, readFiles } from './files.ts'
import { dataPart, textPart } from '@svc/kit/http/a2a-parts'
import { withSpan } from '@svc/kit/tracing'

/** The text parts of the user's message, in order (the routes refuse a message without one). */
export const inputTexts = (parts: Part[]): string[] =>
  parts.flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : []))

/**
 * A small, real use of A2A `input-required`: a text containing this marker is not run at once; the
 * agent asks for a confirmation and runs the skill on the task's first message when the next
 * message of the same task (the answer) arrives. The answer is echoed as `confirmation` in the data.
 */
export const CONFIRM_MARKER = '[confirm]'

/**
 * Runs an agent's skill on the user's message: the task is submitted, working, then completed with
 * one artifact holding a text part, a data part, and in its metadata the signed `svc_result`.
 * `delayMs` (AGENTS_DELAY_MS, a test knob, refused in production) makes every task wait that long
 * while working: a slowed agent, for the rental's SLA latency term. CancelTask of a working task
 * ends that wait and drops the skill's result: the task stays canceled (one waiting on its
 * `input-required` answer has no execution: the SDK's handler cancels it in its store).
 */
export function agentExecutor(
  agent: AgentDefinition,
  key: AgentKey,
  now: () => Date,
  fileRules: FileRules,
  env: AgentEnv = { didOf: () => undefined, toolWaitMs: 0, origins: fileRules.origins },
  delayMs = 0,
): AgentExecutor {
  const status = (state: TaskState, at: Date): TaskStatus => ({
    state,
    message: undefined,
    timestamp: at.toISOString(),
  })
  // the working tasks' executions, by task id: a CancelTask aborts its own
  const running = new Map<string, AbortController>()
  return {
    async execute(request: RequestContext, bus: ExecutionEventBus) {
      const controller = new AbortController()
      running.set(request.taskId, controller)
      try {
        await withSpan('agent work', { 'svc.agent.id': agent.id }, () => run(request, bus, controller.signal))
      } finally {
        running.delete(request.taskId)
      }
    },
    async cancelTask(taskId: string, bus: ExecutionEventBus) {
      running.get(taskId)?.abort()
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId: '',
          status: {
            state: TaskState.TASK_STATE_CANCELED,
            message: agentMessage(taskId, '', 'canceled'),
            timestamp: now().toISOString(),
          },
          metadata: undefined,
        }),
      )
      bus.finished()
    },
  }

  async function run(request: RequestContext, bus: ExecutionEventBus, canceled: AbortSignal) {
    const { taskId, contextId, userMessage, task: asked } = request
    // an answer to our question: the skill runs on the task's first message
    const first = asked?.history.find((m) => m.role === Role.ROLE_USER) ?? userMessage
    const texts = inputTexts(first.parts)
    if (!asked) {
      const task: Task = {
        id: taskId,
        contextId,
        status: status(TaskState.TASK_STATE_SUBMITTED, now()),
        artifacts: [],
        history: [userMessage],
        metadata: { agent: agent.id },
      }
      bus.publish(AgentEvent.task(task))
      if (texts.join('\n').includes(CONFIRM_MARKER)) {
        const question = `Confirm: should ${agent.name} run on this text? Answer on this task to go on.`
        bus.publish(
          AgentEvent.statusUpdate({
            taskId,
            contextId,
            status: {
              ...status(TaskState.TASK_STATE_INPUT_REQUIRED, now()),
              message: agentMessage(taskId, contextId, question),
            },
            metadata: undefined,
          }),
        )
        bus.finished()
        return
      }
    }
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: status(TaskState.TASK_STATE_WORKING, now()),
        metadata: undefined,
      }),
    )
    let files: ReadFile[] = []
    if (agent.readsFiles)
      try {
        files = await readFiles(first.parts, fileRules)
      } catch (err) {
        // a file it was given and cannot read: the task fails, saying which and why
        bus.publish(
          AgentEvent.statusUpdate({
            taskId,
            contextId,
            status: {
              ...status(TaskState.TASK_STATE_FAILED, now()),
              message: agentMessage(taskId, contextId, (err as Error).message),
            },
            metadata: undefined,
          }),
        )
        bus.finished()
        return
      }
    if (delayMs > 0) await pause(delayMs, canceled)
    if (canceled.aborted) return
    const ran = await agent.run(texts.join('\n'), first.metadata ?? {}, files, env)
    if (canceled.aborted) return
    const output = asked
      ? { ...ran, data: { ...ran.data, confirmation: inputTexts(userMessage.parts).join('\n') } }
      : ran
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
  }
}

/** Waits `ms`, or less when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
    function done() {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
  })
}

const agentMessage = (taskId: string, contextId: string, text: string) => ({
  messageId: randomUUID(),
  contextId,
  taskId,
  role: Role.ROLE_AGENT,
  parts: [textPart(text)],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
})
