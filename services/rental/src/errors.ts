import { errorCatalogue } from '@svc/kit'

/**
 * Every `error.code` the rental answers, with its status: routes raise them by name
 * (`rentalErrors.error('engagement_not_found', …)`), and the OpenAPI document lists them.
 */
export const rentalErrors = errorCatalogue({
  // what any route may answer (the kit's HTTP layer)
  invalid_request: { status: 400, description: 'a parameter or body field is malformed or out of range' },
  invalid_json: { status: 400, description: 'the body is not JSON' },
  not_found: { status: 404, description: 'no such route' },
  method_not_allowed: { status: 405, description: 'the route does not take this method' },
  payload_too_large: { status: 413, description: 'the body is larger than the service takes' },
  unsupported_media_type: { status: 415, description: 'the body has a content type the route does not take' },
  shutting_down: { status: 503, description: 'the instance is shutting down: try again' },
  unavailable: { status: 503, description: 'the database did not answer in time: try again (Retry-After)' },
  // sign-in and sessions
  unauthenticated: { status: 401, description: 'no live console session: sign in first' },
  csrf_failed: { status: 403, description: 'the CSRF header is missing or not the session’s token' },
  login_expired: { status: 400, description: 'no sign-in in progress in this browser, or it expired' },
  login_failed: { status: 400, description: 'the identity provider refused the sign-in' },
  invalid_issuer: {
    status: 400,
    description: 'the authorization response is not from our identity provider',
  },
  invalid_state: { status: 400, description: 'the authorization response is not for this sign-in' },
  invalid_logout_token: { status: 400, description: 'the back-channel logout token is not valid' },
  invalid_event_signature: {
    status: 403,
    description: 'X-Svc-Signature is missing or not the HMAC-SHA256 of the body under the idp webhook secret',
  },
  invalid_identity_event: {
    status: 400,
    description: 'the identity event body is not valid JSON of its shape',
  },
  idp_unavailable: {
    status: 503,
    also: [502],
    description:
      'the identity provider has not been reached yet (503) or did not answer the sign-in or an onboarding check (502)',
  },
  // step-up (a recent second factor for sensitive routes)
  step_up_required: {
    status: 401,
    description:
      'the route needs a second factor (acr urn:svc:mfa) proven recently: follow the step-up URL in the message (also in WWW-Authenticate and Link)',
  },
  second_factor_missing: {
    status: 403,
    description:
      'the identity provider answered unmet_authentication_requirements: the account has no second factor; set one up at the idp account page named in the message',
  },
  step_up_failed: {
    status: 400,
    description: 'the step-up sign-in was not the same person, not a second factor, or not recent',
  },
  invalid_return_to: { status: 400, description: 'return_to is not a same-origin relative path' },
  // organizations and roles
  forbidden: {
    status: 403,
    description: 'the member’s role lacks the permission the route needs (named in the message)',
  },
  member_not_found: { status: 404, description: 'no such member or invitation in the organization' },
  already_member: { status: 409, description: 'that email is already invited or a member' },
  last_owner: { status: 409, description: 'the organization’s last owner cannot be removed or demoted' },
  role_builtin: { status: 409, description: 'a built-in role (owner, admin, …) does not change nor go' },
  role_in_use: { status: 409, description: 'members or invitations hold the role (how many is named)' },
  export_not_found: { status: 404, description: 'no such export in the organization' },
  export_in_progress: { status: 409, description: 'an export is already queued or running (named)' },
  export_not_ready: { status: 409, description: 'the export is not ready yet (its state is named)' },
  export_expired: { status: 410, description: 'the export’s archive is past its seven days and gone' },
  role_not_found: { status: 404, description: 'no built-in or organization’s custom role of that name' },
  secret_not_found: { status: 404, description: 'no secret of that name in the organization’s vault' },
  // API tokens
  quota_exceeded: { status: 409, description: 'the client holds the most API tokens allowed' },
  // catalogue and engagements
  job_not_found: { status: 404, description: 'no such job in the catalogue' },
  agent_not_serving: { status: 400, description: 'the agent does not serve that job' },
  client_did_required: { status: 400, description: 'the session has no client DID: give client_did' },
  invalid_client_did: { status: 400, description: 'client_did is not a did:key of an Ed25519 key' },
  engagement_not_found: { status: 404, description: 'no such engagement of the signed-in client' },
  engagement_not_active: { status: 409, description: 'the engagement’s SLA is not signed yet' },
  engagement_ended: {
    status: 409,
    description: 'the engagement has ended: it takes no new task, its config no longer changes, it ends once',
  },
  nothing_to_change: { status: 400, description: 'the config change names no field' },
  invalid_config: {
    status: 400,
    description: 'the config fields do not fit together (named in the message)',
  },
  precondition_failed: { status: 412, description: 'If-Match names another version than the current one' },
  nothing_to_sign: { status: 400, description: 'neither an SLA nor an escrow signature was given' },
  unknown_escrow: { status: 400, description: 'a signature names an escrow the engagement does not have' },
  bad_signature: { status: 400, description: 'a signature is not the client’s over the body it names' },
  // money
  insufficient_funds: { status: 409, description: 'the wallet holds less than the escrow' },
  escrow_not_found: { status: 404, description: 'no escrow with that hash in the engagement' },
  escrow_not_open: { status: 409, description: 'the escrow is not open: sign it first' },
  task_not_completed: { status: 409, description: 'the escrow’s task has not completed' },
  instruction_mismatch: {
    status: 400,
    description: 'the release instruction is not the release of this escrow',
  },
  idempotency_key_reused: { status: 409, description: 'the Idempotency-Key was used for another request' },
  invalid_account: { status: 400, description: 'not a rail account' },
  invalid_transfer: { status: 400, description: 'the postings of a transfer do not balance' },
  // tasks
  task_not_found: { status: 404, description: 'no such task of the signed-in client' },
  invalid_text: { status: 400, description: 'the task text is empty' },
  task_price_over_limit: {
    status: 409,
    description: 'the task’s price exceeds the engagement’s max_task_price_fils',
  },
  task_not_cancelable: {
    status: 409,
    description: 'the task has ended (its state named): it cannot be canceled',
  },
  task_not_retryable: {
    status: 409,
    description: 'only a failed task whose input is still kept is retried (its state named)',
  },
  // batches
  batch_not_found: { status: 404, description: 'no such batch of the signed-in client' },
  // approvals
  approval_not_found: { status: 404, description: 'no such approval of the organization' },
  approval_not_pending: {
    status: 409,
    description: 'the approval is no longer pending (its state named: approved, rejected, expired, canceled)',
  },
  approval_self_decision: {
    status: 403,
    description:
      'the engagement’s approval policy asks for a separate approver (separate_approver): the member who made the task cannot approve it',
  },
  agent_revoked: { status: 409, description: 'the client revoked the agent: it takes no new task' },
  // outbound webhooks
  webhook_not_found: { status: 404, description: 'no such webhook in the organization' },
  webhook_limit: {
    status: 409,
    description: 'the organization has the most webhooks allowed: delete one first',
  },
  invalid_webhook_url: {
    status: 400,
    description:
      'the webhook URL is not https, or reaches an address that is not public (named in the message)',
  },
  unknown_event_type: { status: 400, description: 'an event type that the rental does not record (named)' },
  // schedules
  invalid_cron: {
    status: 400,
    description:
      'the cron expression is not 5 fields croner parses, or it never ticks (named in the message)',
  },
  invalid_timezone: { status: 400, description: 'the timezone is not an IANA time zone name' },
  invalid_period: {
    status: 400,
    description: 'a statement period (from, to) that is malformed, reversed or too long',
  },
  invoice_not_found: { status: 404, description: 'no such invoice of the organization' },
  credit_note_not_found: { status: 404, description: 'no such credit note of the organization' },
  nothing_to_invoice: {
    status: 409,
    description: 'no released escrow in the period or engagement that is not on an invoice already',
  },
  invoice_paid: {
    status: 409,
    description: 'the invoice is paid already with another reference (its state named)',
  },
  schedule_not_found: {
    status: 404,
    description: 'no such schedule of the organization (or it was deleted)',
  },
  schedule_not_active: {
    status: 409,
    description: 'the schedule is not active (its state named): it is not paused',
  },
  schedule_not_paused: {
    status: 409,
    description: 'the schedule is not paused (its state named): it is not resumed',
  },
  schedule_limit: { status: 409, description: 'the organization has the most schedules allowed' },
  // budgets
  budget_not_found: { status: 404, description: 'no such budget of the organization (or it was deleted)' },
  budget_exceeded: {
    status: 402,
    description:
      'the escrow would take a budget past its limit in the period (the budget and what is left named)',
  },
  // the market
  listing_not_found: {
    status: 404,
    description: 'no such listing (or another organization’s, for a change)',
  },
  listing_unavailable: {
    status: 409,
    description: 'the agent’s listing is unavailable (until the time named)',
  },
  listing_at_capacity: {
    status: 429,
    description:
      'the listing is limited and as many of its agent’s tasks as its cap are running (cap and count named): try again later',
  },
  listing_card_changed: {
    status: 409,
    description:
      'the external agent’s card changed since it was listed (both hashes named): the provider publishes it again',
  },
  agent_card_unreachable: {
    status: 422,
    description: 'the external agent’s card URL is refused (not https, not public) or did not answer a card',
  },
  agent_card_invalid: {
    status: 422,
    description: 'the fetched agent card is not a valid A2A 1.0 AgentCard (the field named)',
  },
  agent_card_signature_invalid: {
    status: 422,
    description: 'the agent card’s JWS signature does not verify (or its key cannot be found by jku and kid)',
  },
  agent_card_unsupported: {
    status: 422,
    description:
      'the card is valid but the rental cannot run the agent (no JSON-RPC 1.0 interface, no did:key for its results, a security scheme it cannot meet)',
  },
  agent_did_taken: {
    status: 409,
    description: 'the card names an agent DID another provider already publishes',
  },
  budget_limit: { status: 409, description: 'the organization has the most budgets allowed' },
  // trials
  trial_not_found: { status: 404, description: 'no such trial of the organization' },
  trial_exists: {
    status: 409,
    description: 'the organization has a live trial of that listing already (named, with its state)',
  },
  trial_exhausted: { status: 409, description: 'the trial’s free tasks are all used' },
  trial_expired: { status: 409, description: 'the trial’s window is over (its end named)' },
  trial_converted: {
    status: 409,
    description: 'the trial was converted into an engagement (named): it takes no more tasks',
  },
  trial_changed: {
    status: 409,
    description: 'a trial task started while the trial was converting: convert again',
  },
  // refunds
  refund_not_found: {
    status: 404,
    description: 'no such refund the caller may see (its client, its provider or an operator)',
  },
  refund_state: { status: 409, description: 'the refund’s state (named) does not allow the move' },
  not_refundable: {
    status: 400,
    description: 'the escrow is not released, or the amount is above what is left to refund (named)',
  },
  // retention and legal holds
  invalid_retention: {
    status: 400,
    description:
      'a retention period is not an ISO 8601 duration (days, hours, minutes, seconds) or seconds, or is out of bounds (named)',
  },
  org_not_found: { status: 404, description: 'no such organization (operators name another organization)' },
  hold_not_found: { status: 404, description: 'no such legal hold of the organization' },
  hold_released: { status: 409, description: 'the legal hold was released already (when, named)' },
  legal_hold: {
    status: 409,
    description: 'a legal hold (named) stands over the data: nothing of it is deleted until it is released',
  },
  // the data room
  file_not_found: { status: 404, description: 'no such file of the organization (or it was deleted)' },
  invalid_file_name: {
    status: 400,
    description: 'the file name is missing, blank, too long, or holds path separators or control characters',
  },
  invalid_content_type: { status: 400, description: 'the file’s media type is missing or malformed' },
  upload_incomplete: { status: 400, description: 'the upload broke off or its multipart body is malformed' },
  file_corrupted: {
    status: 500,
    description: 'the stored file failed its integrity check (a GCM tag): it is not sent',
  },
  file_url_invalid: {
    status: 403,
    description: 'the file URL’s token is malformed or its signature is not ours (a task’s file hand-off)',
  },
  file_url_expired: { status: 403, description: 'the file URL has expired, or its task has ended' },
  // onboarding
  kyb_not_found: { status: 404, description: 'no such business check the caller may see' },
  kyb_state: {
    status: 409,
    description: 'the business check’s state (named) does not allow the move',
  },
  kyb_required: {
    status: 403,
    description:
      'the organization needs an approved business check (POST /api/onboarding/kyb) for this: a listing, or a hire above RENTAL_KYB_HIRE_LIMIT_FILS',
  },
  onboarding_not_configured: {
    status: 503,
    description:
      'the rental has no organization key at the identity provider (RENTAL_IDP_ORG_KEY): checks cannot run',
  },
  reason_required: { status: 400, description: 'a rejection needs a reason' },
  // ratings and references
  task_not_rateable: {
    status: 409,
    description: 'the task has not completed with a receipt (its state named): nothing to rate yet',
  },
  already_rated: {
    status: 409,
    description: 'the task is rated already: edit it (edit: true) within the window',
  },
  not_rated: { status: 409, description: 'an edit of a task that has no rating yet' },
  rating_edit_closed: { status: 409, description: 'the rating’s edit window closed (at the time named)' },
  reference_not_allowed: {
    status: 409,
    description: 'the engagement has no completed task yet: a reference needs at least one',
  },
  // incidents
  incident_not_found: {
    status: 404,
    description: 'no such incident the caller may see (its reporter, the agent’s provider or an operator)',
  },
  incident_state: { status: 409, description: 'the incident’s state (named) does not allow the move' },
  // disputes
  dispute_not_found: {
    status: 404,
    description: 'no such dispute the caller may see (its client, its provider or an operator)',
  },
  dispute_state: { status: 409, description: 'the dispute’s state (named) does not allow the move' },
  dispute_open: { status: 409, description: 'an escrow in question is in another open dispute (named)' },
  not_disputable: {
    status: 409,
    description: 'nothing is held or paid for it, or the amount is above what is (named)',
  },
  escrow_frozen: {
    status: 409,
    description:
      'the escrow is frozen by an open dispute (named): it is not released, refunded or returned while the dispute is open',
  },
  // insurance
  policy_not_found: { status: 404, description: 'the engagement has no insurance policy' },
  policy_active: { status: 409, description: 'the engagement has an active policy already (named)' },
  policy_not_active: { status: 409, description: 'the policy is not active now (its period named)' },
  premium_unpaid: { status: 402, description: 'the wallet holds less than the policy’s premium' },
  // the agents' record
  invalid_agent_did: { status: 400, description: 'the agent DID is not an Ed25519 did:key' },
  agent_not_found: {
    status: 404,
    description: 'the agent is neither in the catalogue nor known to the client',
  },
  unknown_framework: {
    status: 400,
    description: 'the evidence pack names a framework the rental does not map',
  },
  // capacity and agent versions
  capacity_exceeded: {
    status: 429,
    description:
      'the engagement is at its max_concurrent_tasks or tasks_per_minute (named): try again after Retry-After',
  },
  capacity_over_listing: {
    status: 409,
    description: 'max_concurrent_tasks is above the cap of the agent’s limited market listing (named)',
  },
  invalid_version: { status: 400, description: 'the version is not a SemVer 2.0.0 version' },
  version_conflict: {
    status: 409,
    description: 'the version is released already, or not above the agent’s latest (named)',
  },
  version_not_pending: {
    status: 409,
    description:
      'no newer version waits for the engagement (its version named), or the addendum is not the pending one’s',
  },
  // erasure
  erasure_refused: {
    status: 409,
    description:
      'the organization cannot be erased now: open disputes (named) or a legal hold (named) must end first',
  },
  // connect: tool servers and tool calls
  tool_server_refused: {
    status: 400,
    description:
      'the tool server URL is refused, or the server refused the key, failed or did not answer in time (its own error named)',
  },
  tool_not_available: { status: 400, description: 'a tool named is not among those the key reaches' },
  already_connected: { status: 409, description: 'the engagement has a connection already: revoke it first' },
  egress_refused: { status: 403, description: 'the egress policy does not reach that host and port' },
  web_refused: {
    status: 403,
    description:
      'the engagement’s web or egress policy refuses the page (domain, fetches per task, no policy set; recorded)',
  },
  invalid_policy: { status: 400, description: 'a domain both allowed and denied' },
  tool_refused: {
    status: 403,
    description:
      'the binding does not allow the tool, or the server offers none of that name (recorded as a refused action)',
  },
  not_connected: { status: 409, description: 'the engagement has no connection (never bound, or revoked)' },
  action_not_found: { status: 404, description: 'no such tool-call action of the organization' },
  action_not_refreshable: {
    status: 409,
    description: 'the action’s state (named) or its tool (not idempotent) does not allow a refresh',
  },
  invalid_tool_credential: {
    status: 401,
    description: 'the task’s tool-call credential is missing, unknown or expired',
  },
  tool_arguments_too_large: {
    status: 413,
    description: 'the tool call’s arguments exceed RENTAL_CONNECT_MAX_ARGUMENT_BYTES',
  },
  // teams
  team_not_found: { status: 404, description: 'no team with that id in the organization' },
  team_task_not_found: { status: 404, description: 'no task of that team with that id' },
  invalid_team: {
    status: 400,
    description:
      'the team terms do not hold: a duplicate member, the lead among its members, shares over 100 %, a delegation naming an agent outside the team (named)',
  },
  unknown_team_agent: { status: 404, description: 'a member (named) is not an agent in the catalogue' },
  team_not_hired: { status: 409, description: 'the team is not hired (its state named): hire it first' },
  team_already_hired: { status: 409, description: 'the team is hired or ended already (its state named)' },
  team_ended: { status: 409, description: 'the team is ended (since when named)' },
  // public pages
  unknown_language: { status: 404, description: 'no message catalogue for that language' },
})

export type RentalErrorCode = keyof typeof rentalErrors.codes
export const rentalError = rentalErrors.error
