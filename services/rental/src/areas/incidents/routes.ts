import { type App, pageOf, pageQuery } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { actorOfRequest, operatorActor } from '../events/index.ts'
import type { OrgService } from '../orgs/index.ts'
import {
  type Caller,
  incidentDetail,
  type IncidentDeps,
  incidentList,
  noteIncident,
  reportIncident,
  resolveIncident,
} from './service.ts'
import { Id, Nullable, orgOf, Params, route, sessionOf } from '../../http/index.ts'

const Severity = Type.Union([
  Type.Literal('sev1'),
  Type.Literal('sev2'),
  Type.Literal('sev3'),
  Type.Literal('sev4'),
])
const State = Type.Union([Type.Literal('open'), Type.Literal('resolved')])
const Role = Type.Union([Type.Literal('reporter'), Type.Literal('provider'), Type.Literal('operator')])
const Text = (max: number) => Type.String({ minLength: 1, maxLength: max })

const Incident = Type.Object({
  id: Type.String(),
  kind: Type.Union([Type.Literal('client'), Type.Literal('platform')]),
  state: State,
  severity: Severity,
  summary: Type.String(),
  impact: Type.String(),
  org_id: Nullable(Type.String({ description: 'the reporting organization (null: the platform’s)' })),
  engagement_id: Nullable(Type.String()),
  agent_did: Nullable(Type.String()),
  provider_org_id: Nullable(Type.String()),
  your_roles: Type.Array(Role),
  resolution: Nullable(Type.String()),
  resolved_at: Nullable(Type.String()),
  time_to_resolve_s: Nullable(Type.Integer()),
  created_at: Type.String(),
  updated_at: Type.String(),
  notes: Type.Optional(
    Type.Array(
      Type.Object({ id: Type.String(), author: Role, text: Type.String(), created_at: Type.String() }),
    ),
  ),
})

/** Incidents: reported by clients (an engagement or agent) or operators (the platform), noted, resolved once. */
export function incidentRoutes(app: App, deps: IncidentDeps, orgs: Pick<OrgService, 'isOperator'>) {
  const tags = ['incidents']
  const callerOf = (request: FastifyRequest): Caller => {
    const operator = orgs.isOperator(sessionOf(request))
    return {
      orgId: orgOf(request),
      operator,
      actor: operator ? operatorActor(request) : actorOfRequest(request),
    }
  }
  app.post(
    '/api/incidents',
    {
      ...route.csrf('incidents:write'),
      schema: {
        summary:
          'Reports an incident: about an engagement or an agent the organization hired, or (operators) the platform',
        description:
          'Give `engagement_id` or `agent_did` (the agent’s provider organization then sees and notes it); neither: a platform incident, operators only. Open incidents show on `/status`.',
        tags,
        body: Type.Object(
          {
            severity: Severity,
            summary: Text(200),
            impact: Text(2000),
            engagement_id: Type.Optional(Id),
            agent_did: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
          },
          { additionalProperties: false },
        ),
        response: { 201: Incident },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await reportIncident(deps, callerOf(request), request.body)),
  )
  app.get(
    '/api/incidents',
    {
      ...route.session('incidents:read'),
      schema: {
        summary:
          'The incidents the organization reported, those about agents it provides and the platform’s (operators: all), newest first',
        tags,
        querystring: Type.Object(
          { ...pageQuery().properties, state: Type.Optional(State) },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            incidents: Type.Array(Incident),
            total: Type.Integer(),
            limit: Type.Integer(),
            offset: Type.Integer(),
          }),
        },
      },
    },
    async (request) =>
      incidentList(deps, callerOf(request), { state: request.query.state, ...pageOf(request.query) }),
  )
  app.get(
    '/api/incidents/:id',
    {
      ...route.session('incidents:read'),
      schema: {
        summary: 'An incident with its timeline of notes',
        tags,
        params: Params,
        response: { 200: Incident },
      },
    },
    async (request) => incidentDetail(deps, callerOf(request), request.params.id),
  )
  app.post(
    '/api/incidents/:id/note',
    {
      ...route.csrf('incidents:write'),
      schema: {
        summary:
          'Adds a note to an open incident (its reporter’s organization, the agent’s provider or an operator)',
        tags,
        params: Params,
        body: Type.Object({ text: Text(2000) }, { additionalProperties: false }),
        response: { 200: Incident },
      },
    },
    async (request) => noteIncident(deps, callerOf(request), request.params.id, request.body.text),
  )
  app.post(
    '/api/incidents/:id/resolve',
    {
      ...route.csrf('incidents:write'),
      schema: {
        summary: 'Resolves an open incident once, with its resolution (the time to resolve is recorded)',
        description:
          'A resolved incident is 409 `incident_state`, naming the state. Platform incidents: operators only.',
        tags,
        params: Params,
        body: Type.Object({ resolution: Text(2000) }, { additionalProperties: false }),
        response: { 200: Incident },
      },
    },
    async (request) => resolveIncident(deps, callerOf(request), request.params.id, request.body.resolution),
  )
}
