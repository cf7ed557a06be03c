export { type Backend, type Database, type DatabaseOptions, jobsSchema, openDatabase } from './database.ts'
export { migrate, readMigrations } from './migrator.ts'
export { afterCommit, inTransaction } from './transaction.ts'
export { type QueryPart, readParts } from './query-part.ts'
