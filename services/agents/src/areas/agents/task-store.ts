import { RequestMalformedError } from '@a2a-js/sdk/errors'
import type { ListTasksRequest, ListTasksResponse, Task } from '@a2a-js/sdk'
import type { TaskStore } from '@a2a-js/sdk/server'

/**
 * The agents' tasks, in memory and bounded: past `max` tasks, the least recently saved is
 * forgotten (a later GetTask of it answers TaskNotFound, as the spec allows for purged tasks).
 * The built-in agents take no authentication, so every caller sees every task of an agent.
 */
export class BoundedTaskStore implements TaskStore {
  readonly #tasks = new Map<string, Task>()
  constructor(readonly max: number) {}

  get size(): number {
    return this.#tasks.size
  }

  async load(taskId: string): Promise<Task | undefined> {
    const task = this.#tasks.get(taskId)
    return task ? structuredClone(task) : undefined
  }

  async save(task: Task): Promise<void> {
    this.#tasks.delete(task.id)
    this.#tasks.set(task.id, structuredClone(task))
    while (this.#tasks.size > this.max) this.#tasks.delete(this.#tasks.keys().next().value as string)
  }

  /** Newest status first (ties by id), filtered, a page at a time; the cursor is the last task's id. */
  async list(params: ListTasksRequest): Promise<ListTasksResponse> {
    const pageSize = params.pageSize ?? 50
    let tasks = [...this.#tasks.values()]
    if (params.contextId) tasks = tasks.filter((t) => t.contextId === params.contextId)
    if (params.status) tasks = tasks.filter((t) => t.status?.state === params.status)
    if (params.statusTimestampAfter) {
      const after = Date.parse(params.statusTimestampAfter)
      tasks = tasks.filter((t) => t.status?.timestamp && Date.parse(t.status.timestamp) > after)
    }
    const key = (t: Task) => `${t.status?.timestamp ?? ''}\u0000${t.id}`
    tasks.sort((a, b) => (key(a) < key(b) ? 1 : key(a) > key(b) ? -1 : 0))
    const totalSize = tasks.length
    if (params.pageToken) {
      const after = this.#tasks.get(decodeCursor(params.pageToken))
      const at = after ? tasks.findIndex((t) => t.id === after.id) : -1
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
