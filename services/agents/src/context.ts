import { areaKit } from '@svc/kit'
import type { RunningAgent } from './areas/agents/service.ts'
import type { AgentsConfig } from './config.ts'
import type { NoteStore } from './areas/tools/notes.ts'

/** What every area of the agents service is given, made once in app.ts. */
export interface AgentsContext {
  baseUrl: string
  /** The idp whose access tokens callers present. */
  issuer: string
  config: AgentsConfig
  version: string
}

/** What each area offers the others (and app.ts's banner). */
export interface AgentsServices {
  agents: Map<string, RunningAgent>
  tools: NoteStore
}

export const { defineArea, mountAreas } = areaKit<AgentsContext, AgentsServices>()
