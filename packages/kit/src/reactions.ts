/**
 * What one area does for another that cannot need it (needing it would be a cycle): each reaction
 * is named once with its type (`Types`, one map per service); the reacting area registers at its
 * mount (`on`); the asking area reads the registrations when it runs, after every area is mounted
 * (`all`, `one`), or tells them (`tell`). Reactions run in the order they were registered.
 */
export class Reactions<Types> {
  readonly #registered = new Map<keyof Types, unknown[]>()

  /** Registers the area's reaction (at its mount). */
  on<K extends keyof Types>(name: K, reaction: Types[K]): void {
    this.all(name).push(reaction)
  }

  /** Every reaction to `name`, a list that later registrations join. */
  all<K extends keyof Types>(name: K): Array<Types[K]> {
    let found = this.#registered.get(name)
    if (!found) this.#registered.set(name, (found = []))
    return found as Array<Types[K]>
  }

  /** The one reaction to `name` (the last registered), or `fallback` when no area reacts. */
  one<K extends keyof Types>(name: K, fallback: Types[K]): Types[K]
  one<K extends keyof Types>(name: K): Types[K] | undefined
  one<K extends keyof Types>(name: K, fallback?: Types[K]): Types[K] | undefined {
    return this.all(name).at(-1) ?? fallback
  }

  /**
   * Runs every reaction to `name` with `args`, one after the other; given the teller's transaction,
   * they change what it changes, and a failing one rolls the whole change back.
   */
  async tell<K extends keyof Types>(
    name: K,
    ...args: Parameters<Extract<Types[K], (...a: never[]) => unknown>>
  ) {
    for (const reaction of this.all(name)) await (reaction as (...a: typeof args) => unknown)(...args)
  }
}
