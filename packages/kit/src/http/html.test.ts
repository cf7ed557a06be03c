import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { html } from './html.ts'

describe('html templates', () => {
  it('escapes every interpolated value, in text and in attributes', () => {
    const name = '<script>alert("x")</script>'
    const attr = `" onmouseover="steal()`
    const out = html`<p title="${attr}">${name}</p>`.value
    assert.equal(
      out,
      '<p title="&quot; onmouseover=&quot;steal()">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</p>',
    )
  })

  it('nests templates and lists without escaping them twice, and drops empty values', () => {
    const items = ['a&b', '<c>'].map((i) => html`<li>${i}</li>`)
    const list = html`<ul>${items}</ul>${null}${undefined}${false}`.value
    assert.equal(list, '<ul><li>a&amp;b</li><li>&lt;c&gt;</li></ul>')
    assert.equal(html`${0}`.value, '0')
  })
})
