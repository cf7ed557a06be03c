import { defineArea } from '../../context.ts'
import { type CallDeps, decided, startCalls, taskCredential } from './calls.ts'
import { ToolServers } from './mcp-client.ts'
import { ResourceTokens } from './resource-tokens.ts'
import { connectRoutes } from './routes.ts'
import { webRoutes } from './web-routes.ts'
import { health } from './service.ts'
import type { ExecutionSource } from '../tasks/index.ts'
import { actionExecutions } from './store.ts'

export type { ConnectTables } from './store.ts'

export interface ConnectService {
  /** Every connection of the organization with its health (the tenant console's /v1 helper). */
  health(orgId: string): ReturnType<typeof health>
  /** The organization's tool actions as a source of GET /v1/executions (with the tasks). */
  executions: ExecutionSource
}

/**
 * Connect: an engagement bound to a client's MCP tool server (Streamable HTTP, the official SDK
 * client) with an API key kept sealed; the engagement's agents ask for tool calls through the
 * rental with their task's credential, checked against the binding and the approval policy (held
 * calls are approvals of kind tool_call), made with a timeout, each an event and a `tool.called`
 * receipt. Tables: connections, connect_actions, connect_task_tokens.
 */
export const connectArea = defineArea({
  name: 'connect',
  needs: ['engagements', 'events', 'approvals', 'tasks', 'egress', 'auth'],
  async mount(_app, ctx, use): Promise<ConnectService> {
    const deps: CallDeps = {
      ...ctx,
      engagements: use.engagements,
      events: use.events,
      approvals: use.approvals,
      tasks: use.tasks,
      egress: use.egress,
      servers: new ToolServers({
        allowPrivate: ctx.config.connect.allowPrivate,
        timeoutMs: ctx.config.connect.timeoutMs,
      }),
      tokens: new ResourceTokens(use.auth.link),
    }
    ctx.reactions.on('approvals.toolCall', {
      decided: (trx, id, outcome, by, actor) => decided(deps, trx, id, outcome, by, actor),
    })
    ctx.reactions.on('tasks.message', (task, engagement) => taskCredential(deps, task, engagement))
    await startCalls(deps)
    connectDeps.set(ctx, deps)
    return {
      health: (orgId) => health(deps, orgId),
      executions: (db, orgId, filter, after, limit) =>
        actionExecutions(db, orgId, filter, after, limit) as unknown as ReturnType<ExecutionSource>,
    }
  },
  routes(app, ctx) {
    connectRoutes(app, connectDeps.get(ctx)!)
    webRoutes(app, connectDeps.get(ctx)!)
  },
})

const connectDeps = new WeakMap<object, CallDeps>()
