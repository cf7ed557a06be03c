import { Type } from 'typebox'

export const Resource = Type.Object({
  id: Type.String(),
  identifier: Type.String(),
  name: Type.String(),
  scopes: Type.Array(Type.String()),
  mcp: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
})
export const NewResource = Type.Object(
  {
    identifier: Type.String({
      minLength: 1,
      maxLength: 2000,
      description: 'absolute URI, no query or fragment',
    }),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    scopes: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50 })),
    mcp: Type.Optional(Type.Boolean({ description: 'a Model Context Protocol server' })),
  },
  { additionalProperties: false },
)
export const ResourceId = Type.Object({ id: Type.String({ maxLength: 100 }) })
