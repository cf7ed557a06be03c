// oidc-provider ships no types: the little of it that oidc-provider-server.ts uses.
declare module 'oidc-provider' {
  import type { Server } from 'node:http'

  export interface OidcClient {
    clientId: string
  }
  export interface OidcGrant {
    addOIDCScope(scope: string): void
    addResourceScope(resource: string, scope: string): void
    save(): Promise<string>
  }
  export interface OidcToken {
    save(): Promise<string>
  }

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>)
    listen(port: number, host: string, listening?: () => void): Server
    Client: { find(clientId: string): Promise<OidcClient | undefined> }
    Grant: new (init: { accountId: string; clientId: string }) => OidcGrant
    AuthorizationCode: new (init: Record<string, unknown>) => OidcToken
  }
}

// The package has no "exports" map, so its own in-memory adapter and LRU store can be imported.
declare module 'oidc-provider/lib/adapters/memory_adapter.js' {
  export default class MemoryAdapter {
    constructor(model: string, store: unknown)
  }
}
declare module 'oidc-provider/lib/helpers/lru.js' {
  export default class LRU {
    constructor(options: { maxSize: number })
  }
}
