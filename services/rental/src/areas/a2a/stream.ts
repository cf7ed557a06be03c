/** A2A streaming: a task followed from its first view until it ends (SendStreamingMessage, SubscribeToTask). */
import type { StreamResponse, Task } from '@a2a-js/sdk'
import type { TaskDeps } from '../tasks/service.ts'
import { taskDetail, type TaskView } from '../tasks/index.ts'
import { a2aTask, contextOf, escrowOfTask, isTerminal, outputArtifact, statusOf } from './tasks.ts'

const POLL_MS = 250
const STREAM_LIMIT_MS = 10 * 60_000

/** The task, then its status changes (and the output before completion) until it ends. */
export async function* followTask(
  deps: TaskDeps,
  owner: string,
  first: TaskView,
  taskOf: (view: TaskView) => Promise<Task>,
): AsyncGenerator<StreamResponse, void, undefined> {
  yield { payload: { $case: 'task', value: await taskOf(first) } }
  let last = first.state
  const deadline = Date.now() + STREAM_LIMIT_MS
  while (!isTerminal(last) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
    const view = await taskDetail(deps, owner, first.id)
    if (view.state === last) continue
    last = view.state
    const artifact = view.state === 'completed' ? outputArtifact(view) : undefined
    if (artifact)
      yield {
        payload: {
          $case: 'artifactUpdate',
          value: {
            taskId: view.id,
            contextId: contextOf(view),
            artifact,
            append: false,
            lastChunk: true,
            metadata: undefined,
          },
        },
      }
    const escrow = isTerminal(view.state) ? await escrowOfTask(deps.engagements, view.id) : null
    yield {
      payload: {
        $case: 'statusUpdate',
        value: {
          taskId: view.id,
          contextId: contextOf(view),
          status: statusOf(view),
          metadata: isTerminal(view.state) ? a2aTask(view, escrow, false).metadata : undefined,
        },
      },
    }
  }
}
