/**
 * Loaded into every test process (scripts/test.ts passes `--import`). Node 20's test harness
 * enables an async hook that maps every async resource to its test, promises included, and
 * forgets each at its `destroy`. A destroy hook makes V8 track the end of every promise, which
 * cost a sixth of the CPU of a test file running the services in process (PGlite's queries are
 * promises). Here the harness's hook maps tests and the resources other than promises (timers,
 * sockets), with no destroy: tests still nest and run as before; an uncaught error raised from a
 * promise chain still fails its file (the harness reports it at the top level and sets the exit
 * code), it is only not pinned to one test. Node 22's harness no longer has this hook.
 */
import asyncHooks from 'node:async_hooks'

const createHook = asyncHooks.createHook

asyncHooks.createHook = (callbacks) => {
  if (!new Error().stack?.includes('internal/test_runner/harness') || !callbacks.init)
    return createHook(callbacks)
  const init = callbacks.init
  return createHook({
    init(asyncId, type, triggerAsyncId, resource) {
      if (type !== 'PROMISE') init(asyncId, type, triggerAsyncId, resource)
    },
  })
}
