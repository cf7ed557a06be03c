import { Type } from 'typebox'

/** A 204 answer, so the OpenAPI document names the status the route really gives. */
export const NoContent = { 204: Type.Null({ description: 'done; no body' }) }
