import type { App } from '@svc/kit'
import { Type } from 'typebox'
import type { RentalContext } from '../../context.ts'
import type { CatalogueService } from '../catalogue/index.ts'
import { actorOfRequest, type EventService, operatorActor } from '../events/index.ts'
import type { OrgService } from '../orgs/index.ts'
import { acceptVersion, engagementVersion, releaseVersion } from './versions.ts'
import {
  AgentParams,
  Body,
  Hash,
  Nullable,
  orgOf,
  Params,
  route,
  sessionOf,
  Signature,
} from '../../http/index.ts'

const Version = Type.Object({
  agent_did: Type.String(),
  version: Type.String(),
  changelog: Type.String(),
  card_hash: Type.String(),
  provider_org_id: Type.String(),
  released_at: Type.String(),
  receipt_id: Type.String(),
})
const EngagementVersion = Type.Object({
  engagement_id: Type.String(),
  agent_did: Type.String(),
  version: Nullable(Type.String({ description: 'null: the initial version (none released at hire)' })),
  card_hash: Nullable(Type.String()),
  pending: Nullable(
    Type.Object({
      ...Version.properties,
      addendum: Type.Object({
        body: Body,
        hash: Type.String({ description: 'sha256:<hex> of the JCS form of the body: what to accept' }),
      }),
    }),
  ),
  addenda: Type.Array(
    Type.Object({
      from_version: Nullable(Type.String()),
      to_version: Type.String(),
      card_hash: Type.String(),
      hash: Type.String(),
      receipt_id: Type.String(),
      accepted_at: Type.String(),
    }),
  ),
})

export function engagementVersionRoutes(
  app: App,
  ctx: RentalContext,
  events: EventService,
  catalogue: Pick<CatalogueService, 'isProviderOf'>,
  orgs: Pick<OrgService, 'isOperator'>,
) {
  app.post(
    '/api/agents/:did/versions',
    {
      ...route.csrf('versions:write'),
      schema: {
        summary: 'Releases a version of one of the organization’s agents (operators: the platform’s)',
        description:
          'SemVer 2.0.0, above the agent’s latest; `card_hash` is sha256:<hex> of the JCS form of the agent card at that version. Engagements stay on their version until the client accepts the new one.',
        tags: ['engagements'],
        params: AgentParams,
        body: Type.Object(
          {
            version: Type.String({ minLength: 5, maxLength: 100 }),
            changelog: Type.String({ minLength: 1, maxLength: 5000 }),
            card_hash: Hash,
          },
          { additionalProperties: false },
        ),
        response: { 200: Version },
      },
    },
    async (request) => {
      const operator = orgs.isOperator(sessionOf(request))
      return releaseVersion(
        ctx,
        {
          orgId: orgOf(request),
          operator,
          subject: sessionOf(request).subject,
          actor: operator ? operatorActor(request) : actorOfRequest(request),
          events,
        },
        catalogue,
        request.params.did,
        request.body,
      )
    },
  )
  app.get(
    '/api/engagements/:id/version',
    {
      ...route.session('engagements:read'),
      schema: {
        summary:
          'The agent version the engagement is on, the newer one pending (with its addendum to sign), the addenda signed',
        tags: ['engagements'],
        params: Params,
        response: { 200: EngagementVersion },
      },
    },
    async (request) => engagementVersion(ctx, orgOf(request), request.params.id),
  )
  app.post(
    '/api/engagements/:id/version/accept',
    {
      ...route.csrf('engagements:write'),
      schema: {
        summary: 'Accepts the pending version: the client’s signature of its addendum (as the SLA’s)',
        tags: ['engagements'],
        params: Params,
        body: Type.Object({ addendum_hash: Hash, signature: Signature }, { additionalProperties: false }),
        response: { 200: EngagementVersion },
      },
    },
    async (request) =>
      acceptVersion(
        ctx,
        {
          orgId: orgOf(request),
          subject: sessionOf(request).subject,
          actor: actorOfRequest(request),
          events,
        },
        request.params.id,
        request.body,
      ),
  )
}
