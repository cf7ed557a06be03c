#!/usr/bin/env node
// `svc`: the command line is TypeScript, run through tsx's loader on Node 20 (no build step).
import { register } from 'tsx/esm/api'

register()
await import('../src/main.ts')
