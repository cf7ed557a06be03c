import type { RunningService } from '@svc/kit'
import { request } from '@svc/kit/testing'
import type { IdpConfig } from '../../../services/idp/src/config.ts'

/** Calls the idp as an organization (`Authorization: Bearer svc_org_…`), with a JSON body when given. */
export const asOrg =
  (service: RunningService<IdpConfig>, apiKey: string | undefined) =>
  (method: string, path: string, body?: unknown) =>
    request(`${service.url}${path}`, {
      method,
      headers: {
        ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    })

/** Signs an organization up (terms accepted); its API key is in the answer. */
export async function signUpOrg(service: RunningService<IdpConfig>, name: string) {
  const res = await asOrg(service, undefined)('POST', '/orgs/signup', {
    name,
    contact_email: `ops@${name.toLowerCase()}.example.com`,
    accept_terms: true,
  })
  if (res.status !== 201) throw new Error(`sign-up answered ${res.status}: ${JSON.stringify(res.body)}`)
  return res.body as { organization_id: string; name: string; api_key: string }
}
