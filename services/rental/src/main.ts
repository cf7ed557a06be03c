import { runMain } from '@svc/kit'
import { rental } from './app.ts'

await runMain(rental)
