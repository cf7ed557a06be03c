import assert from 'node:assert/strict'
import { test } from 'node:test'
import { areaKit, orderAreas } from './area.ts'
import { createHttpServer } from './http/server.ts'
import pino from 'pino'

test('areas are ordered after the areas they need, whatever the order listed', () => {
  const order = orderAreas([
    { name: 'tasks', needs: ['engagements', 'sessions'] },
    { name: 'engagements', needs: ['sessions'] },
    { name: 'sessions' },
  ]).map((a) => a.name)
  assert.deepEqual(order, ['sessions', 'engagements', 'tasks'])
})

test('a missing, duplicated or circular need is refused with the areas named', () => {
  assert.throws(() => orderAreas([{ name: 'tasks', needs: ['engagements'] }]), /tasks needs engagements/)
  assert.throws(() => orderAreas([{ name: 'a' }, { name: 'a' }]), /area a is listed twice/)
  assert.throws(
    () =>
      orderAreas([
        { name: 'a', needs: ['b'] },
        { name: 'b', needs: ['a'] },
      ]),
    /cycle: a → b → a/,
  )
})

test('each area is mounted with the services it declared and nothing else', async () => {
  interface Services {
    counter: { next(): number }
    report: undefined
  }
  const { defineArea, mountAreas } = areaKit<{ start: number }, Services>()
  let seen: unknown
  const report = defineArea({
    name: 'report',
    needs: ['counter'],
    mount(app, _ctx, use) {
      seen = Object.keys(use)
      app.get('/count', async () => ({ n: use.counter.next() }))
      return undefined
    },
  })
  const counter = defineArea({
    name: 'counter',
    mount(_app, ctx) {
      let n = ctx.start
      return { next: () => ++n }
    },
  })
  const app = await createHttpServer({
    name: 'test',
    version: '0',
    description: 'areas',
    logger: pino({ level: 'silent' }),
    errorShape: 'api',
    checks: [],
  })
  await mountAreas(app, { start: 41 }, [report, counter])
  assert.deepEqual(seen, ['counter'])
  const res = await app.inject({ method: 'GET', url: '/count' })
  assert.deepEqual(res.json(), { n: 42 })
  await app.close()
})

test('routes are registered in the order the areas are listed, after every service is made', async () => {
  interface Services {
    releases: undefined
    tasks: { state(): string }
  }
  const { defineArea, mountAreas } = areaKit<object, Services>()
  const registered: string[] = []
  const releases = defineArea({
    name: 'releases',
    needs: ['tasks'],
    mount: () => undefined,
    routes(app, _ctx, use) {
      registered.push('/releases')
      app.get('/releases', async () => ({ task: use.tasks.state() }))
    },
  })
  const tasks = defineArea({
    name: 'tasks',
    mount: () => ({ state: () => 'completed' }),
    routes(app, _ctx, _use, own) {
      registered.push('/tasks')
      app.get('/tasks', async () => ({ state: own.state() }))
    },
  })
  const app = await createHttpServer({
    name: 'test',
    version: '0',
    description: 'areas',
    logger: pino({ level: 'silent' }),
    errorShape: 'api',
    checks: [],
  })
  await mountAreas(app, {}, [releases, tasks])
  assert.deepEqual(registered, ['/releases', '/tasks'])
  assert.deepEqual((await app.inject({ method: 'GET', url: '/releases' })).json(), { task: 'completed' })
  await app.close()
})
