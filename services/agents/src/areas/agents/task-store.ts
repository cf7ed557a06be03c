import { RequestMalformedError } from '@a2a-js/sdk/errors'
import type { ListTasksRequest, ListTasksResponse, Task } from '@a2a-js/sdk'
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server'

/** The caller a task belongs to: the authenticated client (the routes refuse anyone else). */
const ownerOf = (context: ServerCallContext | undefined) => context?.user?.userName ?? ''
const keyOf = (owner: string, taskId: string) => `${owner}\u0000${taskId}`

/**
 * The agents' tasks, in memory and bounded: past `max` tasks, the least recently saved is
 * forgotten (a later GetTask of it answers TaskNotFound, as the spec allows for purged tasks).
 * Each task belongs to the caller that created it: another caller neither lists nor loads it
 * (A2A 1.0 §3.1.4, §13.1), and finds it not found rather than forbidden.
 */
export class BoundedTaskStore implements TaskStore {
  readonly #tasks = new Map<string, Task>()
  constructor(readonly max: number) {}

  get size(): number {
    return this.#tasks.size
  }

  async load(taskId: string, context?: ServerCallContext): Promise<Task | undefined> {
    const task = this.#tasks.get(keyOf(ownerOf(context), taskId))
    return task ? structuredClone(task) : undefined
  }

  async save(task: Task, context?: ServerCallContext): Promise<void> {
    const key = keyOf(ownerOf(context), task.id)
    this.#tasks.delete(key)
    this.#tasks.set(key, structuredClone(task))
    while (this.#tasks.size > this.max) this.#tasks.delete(this.#tasks.keys().next().value as string)
  }

  /** The caller's tasks, newest status first (ties by id), filtered, a page at a time; the cursor is the last task's id. */
  async list(params: ListTasksRequest, context?: ServerCallContext): Promise<ListTasksResponse> {
    const owner = ownerOf(context)
    const prefix = keyOf(owner, '')
    const pageSize = params.pageSize ?? 50
    let tasks = [...this.#tasks].filter(([key]) => key.startsWith(prefix)).map(([, task]) => task)
    if (params.contextId) tasks = tasks.filter((t) => t.contextId === params.contextId)
    if (params.status) tasks = tasks.filter((t) => t.status?.state === params.status)
    if (params.statusTimestampAfter) {
      const after = Date.parse(params.statusTimestampAfter)
      tasks = tasks.filter((t) => t.status?.timestamp && Date.parse(t.status.timestamp) > after)
    }
    const sortKey = (t: Task) => `${t.status?.timestamp ?? ''}\u0000${t.id}`
    tasks.sort((a, b) => (sortKey(a) < sortKey(b) ? 1 : sortKey(a) > sortKey(b) ? -1 : 0))
    const totalSize = tasks.length
    if (params.pageToken) {
      const after = decodeCursor(params.pageToken)
      const at = tasks.findIndex((t) => t.id === after)
      if (at < 0) throw new RequestMalformedError('pageToken does not name a task of this list')
      tasks = tasks.slice(at + 1)
    }
    const page = tasks.slice(0, pageSize).map((t) => {
      const copy = structuredClone(t)
      if (!params.includeArtifacts) copy.artifacts = []
      return copy
    })
    const nextPageToken = tasks.length > page.length ? encodeCursor(page.at(-1)!.id) : ''
    return { tasks: page, nextPageToken, pageSize, totalSize }
  }
}

const encodeCursor = (id: string) => Buffer.from(id, 'utf8').toString('base64url')
function decodeCursor(token: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(token)) throw new RequestMalformedError('pageToken is not a cursor')
  return Buffer.from(token, 'base64url').toString('utf8')
}
