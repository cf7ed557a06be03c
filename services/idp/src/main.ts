import { runMain } from '@svc/kit'
import { idp } from './app.ts'

await runMain(idp)
