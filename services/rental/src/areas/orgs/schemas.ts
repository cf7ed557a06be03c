import { type TSchema, Type } from 'typebox'

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()])

/** A role's name: a built-in one (owner, admin, member, billing, viewer) or the organization's own. */
export const RoleNameSchema = Type.String({
  pattern: '^[a-z][a-z0-9_-]{0,39}$',
  description: 'owner, admin, member, billing, viewer, or a custom role of the organization',
})

/** A member or an invitation, as `/api/orgs/members` and `/v1/users` answer it. */
export const MemberSchema = Type.Object({
  id: Type.String(),
  subject: Nullable(Type.String()),
  email: Nullable(Type.String()),
  role: Type.String(),
  state: Type.Union([Type.Literal('invited'), Type.Literal('joined')]),
  invited_by: Nullable(Type.String()),
  created_at: Type.String(),
  joined_at: Nullable(Type.String()),
})

/** An invitation by email with a role (taken at the invitee's next sign-in with that email). */
export const InvitationSchema = Type.Object(
  { email: Type.String({ format: 'email', minLength: 3, maxLength: 320 }), role: RoleNameSchema },
  { additionalProperties: false },
)
