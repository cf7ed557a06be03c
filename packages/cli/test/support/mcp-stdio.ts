/**
 * `svc mcp` as the tests start it until the command registry has it: the profile of SVC_HOME,
 * `--allow-spend` from SVC_TEST_ALLOW_SPEND.
 */
import { runMcp } from '../../src/mcp/command.ts'

const allowSpend = process.env.SVC_TEST_ALLOW_SPEND
await runMcp({}, allowSpend ? { allowSpend } : {})
process.exit(0)
