import type { ServiceName } from '@svc/kit'

export interface DependencyStatus {
  url: string
  reachable: boolean
  /** The HTTP status of its /readyz, when it answered. */
  status?: number
}

const CACHE_MS = 5_000

/**
 * The dependencies' reachability: each one's `/readyz`, two seconds at most, the answer kept five
 * seconds so that the public status page cannot be used to flood them.
 */
export function dependencyProbe(urls: Record<Exclude<ServiceName, 'rental'>, string>) {
  let cached: { at: number; value: Promise<Record<string, DependencyStatus>> } | undefined
  const probe = async (url: string): Promise<DependencyStatus> => {
    try {
      const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2_000) })
      await res.body?.cancel()
      return { url, reachable: true, status: res.status }
    } catch {
      return { url, reachable: false }
    }
  }
  return (): Promise<Record<string, DependencyStatus>> => {
    if (!cached || Date.now() - cached.at > CACHE_MS) {
      const value = Promise.all(
        Object.entries(urls).map(async ([name, url]) => [name, await probe(url)] as const),
      ).then(Object.fromEntries)
      cached = { at: Date.now(), value }
    }
    return cached.value
  }
}
