import { runMain } from '@svc/kit'
import { ledger } from './app.ts'

await runMain(ledger)
