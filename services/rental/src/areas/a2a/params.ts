/**
 * A2A requests read as the tasks area's inputs: a message as a new task of an engagement, a
 * ListTasks request as a page of the caller's tasks.
 */
import type { ListTasksRequest, Message, SendMessageRequest } from '@a2a-js/sdk'
import { MAX_TASK_FILES } from '../tasks/index.ts'
import type { taskIdPage } from '../tasks/service.ts'
import { rentalStateOf } from './tasks.ts'
import { ID_PATTERN, InvalidParams } from './caller.ts'

const textsOf = (message: Message) =>
  message.parts.flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : []))

/**
 * The engagement's files the message hands the agent (`metadata.file_ids`: a list of file ids, as
 * POST /api/tasks's `file_ids`); anything else there is InvalidParams.
 */
function fileIdsOf(value: unknown): string[] | undefined {
  if (value === undefined) return undefined
  if (
    !Array.isArray(value) ||
    value.length > MAX_TASK_FILES ||
    !value.every((id) => typeof id === 'string' && ID_PATTERN.test(id))
  )
    throw new InvalidParams(
      `message.metadata.file_ids must be a list of at most ${MAX_TASK_FILES} file ids`,
      'message.metadata.file_ids',
      'INVALID_FILE_IDS',
    )
  return value as string[]
}

/** The engagement a new message names (metadata.engagement_id, or its contextId), checked. */
export function engagementIdOf(params: SendMessageRequest, message: Message): string {
  const named = message.metadata?.engagement_id ?? params.metadata?.engagement_id
  const engagementId = typeof named === 'string' && named ? named : message.contextId
  if (!engagementId)
    throw new InvalidParams(
      'name the engagement in message.metadata.engagement_id (or as message.contextId)',
      'message.metadata.engagement_id',
      'ENGAGEMENT_REQUIRED',
    )
  if (!ID_PATTERN.test(engagementId) || (message.contextId && message.contextId !== engagementId))
    throw new InvalidParams(
      'the engagement id is malformed or differs from message.contextId',
      'message.metadata.engagement_id',
      'INVALID_ENGAGEMENT',
    )
  return engagementId
}

/** The task a message asks for (POST /api/tasks's body): its text, its files, sync or async. */
export const taskInputOf = (
  params: SendMessageRequest,
  message: Message,
  engagementId: string,
  forceAsync: boolean,
) => ({
  engagement_id: engagementId,
  text: textsOf(message).join('\n'),
  file_ids: fileIdsOf(message.metadata?.file_ids ?? params.metadata?.file_ids),
  async: forceAsync || params.configuration?.returnImmediately === true,
})

type TaskFilter = Parameters<typeof taskIdPage>[2]

/** A ListTasks request's page (size, offset from its page token) and filter, checked. */
export function listQueryOf(params: ListTasksRequest, engagementIds: string[] | null) {
  const pageSize = params.pageSize ?? 50
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 100)
    throw new InvalidParams('pageSize must be between 1 and 100', 'pageSize', 'INVALID_PAGE_SIZE')
  let after: Date | undefined
  if (params.statusTimestampAfter) {
    after = new Date(params.statusTimestampAfter)
    if (Number.isNaN(after.getTime()))
      throw new InvalidParams(
        'statusTimestampAfter must be a date-time',
        'statusTimestampAfter',
        'INVALID_TIMESTAMP',
      )
  }
  let offset = 0
  if (params.pageToken) {
    const decoded = Buffer.from(params.pageToken, 'base64url').toString('utf8')
    if (!/^o:\d{1,7}$/.test(decoded))
      throw new InvalidParams('the page token is not one this server gave', 'pageToken', 'INVALID_PAGE_TOKEN')
    offset = Number(decoded.slice(2))
  }
  if (params.contextId && !ID_PATTERN.test(params.contextId))
    throw new InvalidParams('contextId is malformed', 'contextId', 'INVALID_CONTEXT_ID')
  const filter: TaskFilter = {
    engagementIds,
    contextId: params.contextId || undefined,
    state: params.status ? (rentalStateOf(params.status) ?? null) : undefined,
    statusAfter: after,
  }
  return { pageSize, offset, filter }
}

/** The page token of the page after `next` tasks, or '' for the last page. */
export const nextPageToken = (next: number, total: number) =>
  next < total ? Buffer.from(`o:${next}`).toString('base64url') : ''
