import type { App } from './http/server.ts'

/**
 * An area is one folder of a service: routes (schemas), service (rules) and store (SQL), owning
 * its tables. It is mounted with the service's context and the services of the areas it needs;
 * it registers its routes, hooks and jobs on the app, and returns its own service: the only thing
 * other areas may call (never its store).
 *
 * An area whose routes come before the routes of an area it needs (so that the API document lists
 * them in the order of the service's list) registers them in `routes` rather than in `mount`:
 * `mountAreas` makes every service in dependency order first, then registers routes in the
 * order the areas are listed.
 *
 * `Services` maps each area's name to what it provides (`undefined` for an area that offers
 * nothing to others, such as public pages). A service declares that map once and takes its
 * `defineArea` and `mountAreas` from `areaKit<Context, Services>()`.
 */
export interface Area<Ctx, Services, Name extends keyof Services, Needs extends keyof Services> {
  name: Name
  /** The areas whose services this one calls; they are mounted first. */
  needs?: readonly Needs[]
  mount(app: App, ctx: Ctx, use: Pick<Services, Needs>): Promise<Services[Name]> | Services[Name]
  /** Its HTTP routes, given its own service too; registered after every area is mounted, in list order. */
  routes?(app: App, ctx: Ctx, use: Pick<Services, Needs>, own: Services[Name]): void
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a list of areas of one service, each with its own needs
type AnyArea<Ctx, Services> = Area<Ctx, Services, keyof Services, any>

export class AreaError extends Error {}

/** Orders areas so that each comes after the areas it needs; refuses gaps, duplicates and cycles. */
export function orderAreas<A extends { name: PropertyKey; needs?: readonly PropertyKey[] }>(areas: A[]): A[] {
  const byName = new Map<PropertyKey, A>()
  for (const area of areas) {
    if (byName.has(area.name)) throw new AreaError(`area ${String(area.name)} is listed twice`)
    byName.set(area.name, area)
  }
  const ordered: A[] = []
  const state = new Map<PropertyKey, 'visiting' | 'done'>()
  const visit = (area: A, path: PropertyKey[]) => {
    if (state.get(area.name) === 'done') return
    if (state.get(area.name) === 'visiting')
      throw new AreaError(`areas need each other in a cycle: ${[...path, area.name].map(String).join(' → ')}`)
    state.set(area.name, 'visiting')
    for (const need of area.needs ?? []) {
      const dependency = byName.get(need)
      if (!dependency)
        throw new AreaError(`area ${String(area.name)} needs ${String(need)}, which is not listed`)
      visit(dependency, [...path, area.name])
    }
    state.set(area.name, 'done')
    ordered.push(area)
  }
  for (const area of areas) visit(area, [])
  return ordered
}

/**
 * The typed `defineArea` and `mountAreas` of one service. `mountAreas` mounts every area after the
 * ones it needs and gives each only the services it declared.
 */
export function areaKit<Ctx, Services>() {
  return {
    defineArea<Name extends keyof Services, Needs extends keyof Services = never>(
      area: Area<Ctx, Services, Name, Needs>,
    ): Area<Ctx, Services, Name, Needs> {
      return area
    },
    async mountAreas(app: App, ctx: Ctx, areas: AnyArea<Ctx, Services>[]): Promise<Partial<Services>> {
      const mounted: Partial<Services> = {}
      const useOf = (area: AnyArea<Ctx, Services>) =>
        Object.fromEntries((area.needs ?? []).map((need) => [need, mounted[need as keyof Services]])) as Pick<
          Services,
          keyof Services
        >
      for (const area of orderAreas(areas)) mounted[area.name] = await area.mount(app, ctx, useOf(area))
      for (const area of areas)
        area.routes?.(app, ctx, useOf(area), mounted[area.name] as Services[keyof Services])
      return mounted
    },
  }
}
