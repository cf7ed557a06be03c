/**
 * Events an area tells in the transaction that made them, and the reactions other areas
 * registered when they mounted: the area that tells never imports the ones that react, so the
 * dependency runs from the reacting area to the telling one. Reactions run in the order they were
 * registered, in the same transaction (a failing reaction rolls the whole change back).
 */
export class Reactions<Events extends object, Executor> {
  private readonly reactions = new Map<
    keyof Events,
    Array<(trx: Executor, event: never) => Promise<unknown>>
  >()

  /** Registers what to do, in the teller's transaction, each time `name` is told. */
  on<Name extends keyof Events>(
    name: Name,
    reaction: (trx: Executor, event: Events[Name]) => Promise<unknown>,
  ) {
    this.reactions.set(name, [
      ...(this.reactions.get(name) ?? []),
      reaction as (trx: Executor, event: never) => Promise<unknown>,
    ])
  }

  /** Runs every reaction to `name`, one after the other, in `trx`. */
  async tell<Name extends keyof Events>(trx: Executor, name: Name, event: Events[Name]): Promise<void> {
    for (const reaction of this.reactions.get(name) ?? [])
      await (reaction as (trx: Executor, event: Events[Name]) => Promise<unknown>)(trx, event)
  }
}
