import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { eventually, type Stack, signIn, startStack } from '../support/stack.ts'

interface Jobs {
  jobs: Array<{
    id: string
    title: string
    outcome: string
    description: string
    agents: Array<{ id: string; did: string; name: string; description: string }>
  }>
}

const ARABIC = /[\u0600-\u06FF]/

describe('the catalogue in English and Arabic', () => {
  let stack: Stack
  let alice: Awaited<ReturnType<typeof signIn>>
  const jobs = async (query = '', headers: Record<string, string> = {}) => {
    const res = await alice.jar.fetch(`${stack.rental.url}/api/jobs${query}`, { headers })
    return { status: res.status, body: (await res.json()) as Jobs }
  }
  const summary = (body: Jobs) => body.jobs.find((j) => j.id === 'job_summary')!

  before(async () => {
    stack = await startStack()
    alice = await signIn(stack)
    await eventually('the agents are imported', async () =>
      (await jobs()).body.jobs.every((j) => j.agents.length > 0),
    )
  })
  after(async () => stack.close())

  it('answers English by default, Arabic for lang=ar and for Accept-Language: ar', async () => {
    const english = await jobs()
    assert.equal(english.status, 200)
    assert.equal(summary(english.body).title, 'Document summary')
    assert.equal(summary(english.body).agents[0]!.name, 'Summariser')

    for (const arabic of [await jobs('?lang=ar'), await jobs('', { 'accept-language': 'ar-AE,en;q=0.5' })]) {
      assert.equal(arabic.status, 200)
      const job = summary(arabic.body)
      assert.equal(job.title, 'ملخص مستند')
      assert.equal(job.agents[0]!.name, 'الملخِّص')
      for (const each of arabic.body.jobs) {
        assert.match(each.title, ARABIC, `${each.id} has an Arabic title`)
        assert.match(each.outcome, ARABIC, `${each.id} has an Arabic outcome`)
        assert.match(each.description, ARABIC, `${each.id} has an Arabic description`)
        for (const agent of each.agents) assert.match(agent.name, ARABIC, `${agent.id} has an Arabic name`)
      }
      // the same jobs and agents, only the words differ
      assert.deepEqual(
        arabic.body.jobs.map((j) => [j.id, j.agents.map((a) => a.did)]),
        english.body.jobs.map((j) => [j.id, j.agents.map((a) => a.did)]),
      )
    }
  })

  it('lang wins over Accept-Language: a client asks for the other language', async () => {
    const english = await jobs('?lang=en', { 'accept-language': 'ar' })
    assert.equal(summary(english.body).title, 'Document summary')
  })

  it('falls back to English for a language it does not speak, and refuses a bad lang with 400', async () => {
    const french = await jobs('', { 'accept-language': 'fr-FR, de;q=0.8' })
    assert.equal(french.status, 200)
    assert.equal(summary(french.body).title, 'Document summary')
    const bad = await alice.jar.fetch(`${stack.rental.url}/api/jobs?lang=fr`)
    assert.equal(bad.status, 400)
    assert.equal(((await bad.json()) as { error: { code: string } }).error.code, 'invalid_request')
  })

  it('GET /api/agents/{did}/cv names the agent and its jobs in the person’s language (lang, Accept-Language)', async () => {
    const did = summary((await jobs()).body).agents[0]!.did
    const cv = async (query: string, headers: Record<string, string> = {}) => {
      const res = await alice.jar.fetch(`${stack.rental.url}/api/agents/${did}/cv${query}`, { headers })
      assert.equal(res.status, 200)
      return (
        (await res.json()) as {
          cv: {
            name: string
            description: string
            jobs: Array<{ id: string; title: string; outcome: string }>
          }
        }
      ).cv
    }
    const english = await cv('')
    assert.equal(english.name, 'Summariser')
    assert.equal(english.jobs.find((j) => j.id === 'job_summary')!.title, 'Document summary')
    for (const arabic of [await cv('?lang=ar'), await cv('', { 'accept-language': 'ar-AE,en;q=0.5' })]) {
      assert.equal(arabic.name, 'الملخِّص')
      assert.match(arabic.description, ARABIC)
      const job = arabic.jobs.find((j) => j.id === 'job_summary')!
      assert.equal(job.title, 'ملخص مستند')
      assert.match(job.outcome, ARABIC)
    }
    assert.equal((await cv('?lang=en', { 'accept-language': 'ar' })).name, 'Summariser')
  })

  it('built-in roles are described in Arabic; a custom role keeps the words its maker typed', async () => {
    const made = await alice.jar.fetch(`${stack.rental.url}/v1/roles`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', 'x-csrf-token': alice.csrf },
      body: JSON.stringify({ name: 'readers', permissions: ['org:read'], description: 'reads the org' }),
    })
    assert.equal(made.status, 200, await made.text())
    const roles = async (query: string) =>
      (
        (await (await alice.jar.fetch(`${stack.rental.url}/v1/roles${query}`)).json()) as {
          roles: Array<{ name: string; description: string }>
        }
      ).roles
    const arabic = await roles('?lang=ar')
    for (const builtin of ['owner', 'admin', 'member', 'billing', 'viewer'])
      assert.match(arabic.find((r) => r.name === builtin)!.description, ARABIC, builtin)
    assert.equal(arabic.find((r) => r.name === 'readers')!.description, 'reads the org')
    assert.equal((await roles('')).find((r) => r.name === 'viewer')!.description, 'reads only')
  })

  it('the default organization name and the plan in Arabic', async () => {
    const org = async (query: string) =>
      (await (await alice.jar.fetch(`${stack.rental.url}/v1/org${query}`)).json()) as {
        name: string
        plan: { name: string; description: string }
      }
    const [english, arabic] = [await org(''), await org('?lang=ar')]
    assert.match(english.name, /organization$/)
    assert.match(arabic.name, /^مؤسسة /)
    assert.equal(english.plan.name, 'Pay as you go')
    assert.match(arabic.plan.name, ARABIC)
  })

  it('signing out asks the idp for its signed-out page in the console’s language; the landing page follows', async () => {
    const leaving = await signIn(stack, undefined, { freshIdpSession: true })
    const res = await leaving.jar.fetch(`${stack.rental.url}/auth/logout?lang=ar`, { method: 'POST' })
    assert.equal(res.status, 200)
    const { idp_logout_url } = (await res.json()) as { idp_logout_url: string }
    assert.equal(new URL(idp_logout_url).searchParams.get('ui_locales'), 'ar')
    const signedOut = await (await leaving.jar.fetch(idp_logout_url)).text()
    assert.match(signedOut, /<html[^>]*lang="ar"/)
    const landing = await (
      await fetch(`${stack.rental.url}/`, { headers: { cookie: 'console_lang=ar' } })
    ).text()
    assert.match(landing, /<html[^>]*lang="ar"/)
    const english = await (await fetch(`${stack.rental.url}/`)).text()
    assert.match(english, /<html[^>]*lang="en"/)
  })

  it('the public market page shows the Arabic titles and names', async () => {
    const page = await (await fetch(`${stack.rental.url}/market?lang=ar`)).text()
    assert.ok(page.includes('ملخص مستند'), 'the Arabic job title')
    assert.ok(!page.includes('Document summary'), 'no English job title')
  })
})
