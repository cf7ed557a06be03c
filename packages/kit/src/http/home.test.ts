import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { homeJson, homePage, prefersJson } from './home.ts'

describe('service roots', () => {
  it('answers JSON only when Accept ranks it above HTML', () => {
    assert.equal(prefersJson('application/json'), true)
    assert.equal(prefersJson('application/problem+json'), true)
    assert.equal(prefersJson('text/html;q=0.5, application/json'), true)
    assert.equal(prefersJson('text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'), false)
    assert.equal(prefersJson('application/json;q=0.5, text/html'), false)
    assert.equal(prefersJson('*/*'), false)
    assert.equal(prefersJson(undefined), false)
    assert.equal(prefersJson('application/json;q=0'), false)
  })

  it('makes links absolute in JSON and escapes the page', () => {
    const home = {
      service: 'ledger',
      version: '1',
      description: 'a <log>',
      links: [{ rel: 'docs', title: 'API reference', href: '/docs' }],
    }
    assert.deepEqual(homeJson(home, 'https://ledger.example').links, { docs: 'https://ledger.example/docs' })
    assert.match(homePage(home), /<p>a &lt;log&gt;<\/p>/)
  })
})
