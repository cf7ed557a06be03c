/** What other areas use of mail: link tokens and the development outbox. */
export { consumeEmailToken, issueEmailToken, outbox } from './store.ts'
