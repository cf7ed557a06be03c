// @ts-check
// The permissions in groups a person recognises (hire and run agents, pay, manage members…), each
// described in a sentence of the catalogue (`perm.<group>` and `perm.<group>.about`). A role is
// shown by the groups it holds; a custom role is built by ticking groups, single scopes behind an
// "advanced" disclosure. A scope no group names (a newer one) is shown in "Other".
/** @type {Array<[string, string[]]>} */
export const PERMISSION_GROUPS = [
  [
    'hire',
    [
      'market:read',
      'market:write',
      'engagements:read',
      'engagements:write',
      'tasks:read',
      'tasks:write',
      'files:read',
      'files:write',
      'ratings:write',
      'versions:write',
      'teams:write',
    ],
  ],
  [
    'pay',
    [
      'money:read',
      'releases:write',
      'budgets:write',
      'invoices:write',
      'refunds:write',
      'disputes:write',
      'insurance:write',
    ],
  ],
  [
    'automate',
    [
      'schedules:read',
      'schedules:write',
      'webhooks:read',
      'webhooks:write',
      'approvals:read',
      'approvals:write',
      'connect:read',
      'connect:write',
      'connections:read',
      'secrets:read',
      'secrets:write',
    ],
  ],
  ['trust', ['record:read', 'audit:read', 'incidents:read', 'incidents:write', 'agents:revoke']],
  ['members', ['members:write', 'members:owners', 'roles:write']],
  ['keys', ['tokens:read', 'tokens:write', 'keys:write']],
  [
    'org',
    [
      'org:read',
      'profile:write',
      'onboarding:read',
      'onboarding:write',
      'exports:write',
      'retention:read',
      'retention:write',
      'retention:hold',
      'clients:erase',
    ],
  ],
]

const GROUPED = new Set(PERMISSION_GROUPS.flatMap(([, scopes]) => scopes))

/**
 * The groups over `scopes` (the ones a person may grant), with "other" for scopes no group names.
 * @param {string[]} scopes
 * @returns {Array<[string, string[]]>}
 */
export function groupsOf(scopes) {
  /** @type {Array<[string, string[]]>} */
  const groups = PERMISSION_GROUPS.map(([key, all]) => [key, all.filter((s) => scopes.includes(s))])
  const other = scopes.filter((s) => !GROUPED.has(s))
  if (other.length) groups.push(['other', other])
  return groups.filter(([, held]) => held.length > 0)
}

/** How much of each group `permissions` holds: 'all', 'some' or none (left out). */
export function heldGroups(permissions) {
  const out = []
  for (const [key, all] of PERMISSION_GROUPS) {
    const n = all.filter((s) => permissions.includes(s)).length
    if (n > 0) out.push({ key, held: n === all.length ? 'all' : 'some', n, of: all.length })
  }
  const other = permissions.filter((s) => !GROUPED.has(s))
  if (other.length) out.push({ key: 'other', held: 'all', n: other.length, of: other.length })
  return out
}
