import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { closeWorld, moneyWorld, runMoneyProperty, type World } from './money-model.ts'

/**
 * Money is conserved (docs/money.md), as a property over random sequences of client, provider and
 * operator actions through the running services: bounded, with a fixed seed. `npm run bench --
 * money` runs longer sequences with a new seed each time.
 */
describe('rental money: conserved whatever the clients, providers and operators do (fast-check)', () => {
  let world: World
  before(async () => {
    world = await moneyWorld()
  })
  after(async () => world && closeWorld(world))

  it('every transfer balances, no wallet holds more than was funded or paid to it, no fund goes negative, statements reconcile', async (t) => {
    const log = await runMoneyProperty(world, { seed: 301, runs: 3, steps: 14 })
    t.diagnostic([...world.warmUp, ...log].join('\n'))
    // the warm start bought cover and was paid a claim for a task its agent failed
    assert.match(world.warmUp.join('\n'), /insure: .*buy 201[\s\S]*claim: .* paid [1-9]/)
    // the sequences reached the money paths, not only their refusals
    for (const reached of [/^hire: hire /, /^task: task \S+ completed/, /^release: released [1-9]/])
      assert.ok(
        log.some((line) => reached.test(line)),
        `never reached ${reached}:\n${log.join('\n')}`,
      )
  })
})
