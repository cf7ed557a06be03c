import { runMain } from '@svc/kit'
import { agents } from './app.ts'

await runMain(agents)
