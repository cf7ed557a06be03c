import type { App } from '@svc/kit'
import { Type } from 'typebox'
import { type CallDeps, type Credential, taskOfCredential } from './calls.ts'
import { WEB_PATH, webFetch } from './web.ts'
import { Nullable } from '../../http/index.ts'

const Fetched = Type.Object({
  id: Type.String(),
  state: Type.Union([Type.Literal('fetched'), Type.Literal('failed')]),
  url: Type.String(),
  final_url: Type.String({ description: 'the URL answered, after the redirects followed' }),
  status: Nullable(Type.Integer()),
  content_type: Nullable(Type.String()),
  bytes: Nullable(Type.Integer()),
  content_sha256: Nullable(Type.String({ description: 'SHA-256 (hex) of the text answered' })),
  error: Nullable(Type.String({ description: 'failed: why (unreachable, too large, timed out…)' })),
  text: Nullable(Type.String({ description: 'the body as text, at most the policy’s max_bytes' })),
  receipt: Nullable(Type.Object({ id: Type.String(), leaf_hash: Nullable(Type.String()) })),
})

/** The agents' web tool: a page fetched by the rental under the engagement's web and egress policies. */
export function webRoutes(app: App, deps: CallDeps) {
  const credentials = new WeakMap<object, Credential>()
  app.post(
    WEB_PATH,
    {
      onRequest: async (request, reply) => {
        try {
          credentials.set(request, await taskOfCredential(deps, request.headers.authorization))
        } catch (err) {
          reply.header('www-authenticate', 'Bearer realm="rental-tool-calls", error="invalid_token"')
          throw err
        }
      },
      schema: {
        summary:
          'An agent’s web fetch during its task (Authorization: Bearer <the task’s tool-call credential>)',
        description:
          'The URL (`svc_web_url`) and credential (`svc_connect_token`) are in the metadata of the message the agent gets once the engagement has a web policy. The engagement’s web policy (allowed and denied domains with wildcards, fetches per task, bytes) and egress policy are checked before any connection and again for each redirect (at most 3); outside development and tests only https and public addresses are fetched, the connection pinned to the addresses checked. 200: `fetched` (a `web.fetched` event and receipt with the URL and content hashes) or `failed` (unreachable, over max_bytes, timed out: a `web.failed` event); 403 `web_refused` (a `web.refused` event).',
        tags: ['connect'],
        security: [{ taskToolToken: [] }],
        body: Type.Object(
          { url: Type.String({ minLength: 8, maxLength: 2000 }) },
          { additionalProperties: false },
        ),
        response: { 200: Fetched },
      },
    },
    async (request) => webFetch(deps, credentials.get(request)!, request.body),
  )
}
