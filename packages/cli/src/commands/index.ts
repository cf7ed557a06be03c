/**
 * The commands, one module each: a module adds its commands to the program. A new command is one
 * more line here (`svc mcp` is added this way).
 */
import type { Command } from 'commander'
import type { Cli } from '../cli.ts'
import { accountCommands } from './account.ts'
import { hireCommand } from './hire.ts'
import { keyCommands } from './key.ts'
import { marketCommand } from './market.ts'
import { mcpCommand } from '../mcp/command.ts'
import { moneyCommands } from './money.ts'
import { receiptCommands } from './receipt.ts'
import { taskCommands } from './task.ts'

export type Register = (program: Command, cli: Cli) => void

export const COMMANDS: Register[] = [
  accountCommands,
  keyCommands,
  marketCommand,
  hireCommand,
  taskCommands,
  receiptCommands,
  moneyCommands,
  mcpCommand,
]
