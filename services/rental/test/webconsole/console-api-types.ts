// Checked by `npm run typecheck` (never run): the console's API types follow the OpenAPI document,
// so a field the console reads that the API no longer answers fails the build.
import type { Answer, RouteOf } from '../../console/api-types.d.ts'

declare const me: Answer<'GET', '/api/me'>
declare const task: Answer<'GET', `/api/tasks/${string}`>
declare const tasks: Answer<'GET', `/api/tasks?state=${string}`>
declare const escrow: Answer<'POST', `/api/engagements/${string}/end`>

export const read = [me.csrf_token, task.agent_name, tasks.tasks[0]?.job_title, escrow.statement]
// @ts-expect-error: a field the API does not answer
export const misspelt = me.csrf_tokn
// @ts-expect-error: the events route is a stream, not JSON
export const streamed = ({} as Answer<'GET', `/api/tasks/${string}/events`>).length
// a built path maps back to its route by segments, its query left out
export const route: RouteOf<`/api/engagements/${string}/releases?lang=en`> = '/api/engagements/{id}/releases'
// a path the types cannot follow is `any`, as before
export const unknown: Answer<'GET', string> = 1
