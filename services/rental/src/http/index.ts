/**
 * The rental's route plumbing, below the areas (it imports none): route guards (`route.session`,
 * `route.csrf`, `route.stepUp`), the permission vocabulary and the request's membership, the
 * console session as routes read it, and the schema atoms the areas' routes share.
 */
export * from './if-match.ts'
export * from './locale.ts'
export * from './permissions.ts'
export * from './route.ts'
export * from './schemas.ts'
export * from './session.ts'
