export { type Backend, type Database, type DatabaseOptions, jobsSchema, openDatabase } from './database.ts'
export { migrate, readMigrations } from './migrator.ts'
export { afterCommit, transactionWithHooks } from './after-commit.ts'
