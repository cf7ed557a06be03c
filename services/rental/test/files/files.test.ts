import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { execFile } from 'node:child_process'
import { request as httpRequest } from 'node:http'
import { after, before, describe, it } from 'node:test'
import { setFlagsFromString } from 'node:v8'
import { promisify } from 'node:util'
import { runInNewContext } from 'node:vm'
import { KeyRing, keyIdOf, openChunk } from '../../src/areas/files/crypt.ts'
import { rewrapDataKeys } from '../../src/areas/files/service.ts'
import { type Client, type FullStack, startFullStack } from '../support/full-stack.ts'

const run = promisify(execFile)
const CLIENT = new URL('./files-client.ts', import.meta.url).pathname
const MiB = 1024 * 1024
/**
 * The big file's size: 50 MiB on PostgreSQL, where the rental's memory is measured up and down;
 * 8 MiB on PGlite, whose database lives in this process and holds the bytes stored (the suite's
 * time: the same streaming path, without the measurement). RENTAL_TEST_BIG_FILE_MIB overrides.
 */
const BIG = Number(process.env.RENTAL_TEST_BIG_FILE_MIB ?? (process.env.DATABASE_URL ? 50 : 8)) * MiB
/** Below this a memory figure is the services' own churn, not the file's: it is printed, not checked. */
const MEASURABLE = 32 * MiB
const FILE_MAX = BIG + 2 * MiB
const ORG_MAX = BIG + 3 * MiB

interface FileView {
  id: string
  engagement_id: string
  name: string
  content_type: string
  size_bytes: number
  sha256: string
  url: string
}

const codeOf = (a: { body: Record<string, unknown> }) => (a.body.error as { code?: string } | undefined)?.code
const sha = (b: Uint8Array) => `sha256:${createHash('sha256').update(b).digest('hex')}`

/** `total` bytes in 64 KiB pieces of random data, made as they are read (never held whole). */
function bytesStream(total: number, hash: ReturnType<typeof createHash>) {
  let sent = 0
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= total) return controller.close()
      const piece = randomBytes(Math.min(64 * 1024, total - sent))
      hash.update(piece)
      sent += piece.length
      controller.enqueue(piece)
    },
  })
}

/** A multipart/form-data body of one file part around a stream of its bytes. */
function multipartStream(name: string, type: string, body: ReadableStream<Uint8Array>) {
  const boundary = `----svc${randomBytes(8).toString('hex')}`
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: ${type}\r\n\r\n`,
  )
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`)
  const reader = body.getReader()
  let started = false
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started) {
        started = true
        return controller.enqueue(head)
      }
      const { done, value } = await reader.read()
      if (done) {
        controller.enqueue(tail)
        return controller.close()
      }
      controller.enqueue(value)
    },
  })
  return { stream, type: `multipart/form-data; boundary=${boundary}` }
}

/** Runs a full garbage collection (the flag set at run time, as `node --expose-gc` would). */
setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/**
 * Samples the process's memory while a transfer runs (the rental runs in this process), after a
 * full collection every 100 ms, so what is measured is what stays held, not garbage not yet
 * collected: the resident set (RSS) and the JavaScript heap with the buffers outside it.
 */
function memorySampler() {
  gc()
  const held = () => {
    const m = process.memoryUsage()
    return { rss: m.rss, js: m.heapUsed + m.external }
  }
  const start = held()
  const peak = { ...start }
  const sample = () => {
    gc()
    const now = held()
    peak.rss = Math.max(peak.rss, now.rss)
    peak.js = Math.max(peak.js, now.js)
  }
  const timer = setInterval(sample, 1000)
  return {
    stop() {
      clearInterval(timer)
      sample()
      return { rss: peak.rss - start.rss, js: peak.js - start.js }
    },
  }
}

describe('rental files: the data room, encrypted at rest and streamed both ways', () => {
  let s: FullStack
  let engagementId = ''
  let viewer: Client

  const upload = (
    who: Client,
    body: RequestInit['body'],
    type: string | undefined,
    query = '',
    engagement = engagementId,
  ) =>
    who.jar.fetch(`${s.rental.url}/api/engagements/${engagement}/files${query}`, {
      method: 'POST',
      headers: { 'x-csrf-token': who.csrf, ...(type ? { 'content-type': type } : {}) },
      body,
      ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
    } as RequestInit)
  const answer = async (res: Response) => {
    const text = await res.text()
    return { status: res.status, text, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> }
  }
  const chunkRows = (fileId: string) =>
    s.db.selectFrom('rental_file_chunks').selectAll().where('file_id', '=', fileId).orderBy('idx').execute()
  const fileRow = (fileId: string) =>
    s.db.selectFrom('rental_files').selectAll().where('id', '=', fileId).executeTakeFirst()
  const orgFiles = async (orgId: string) =>
    (await s.db.selectFrom('rental_files').select('id').where('org_id', '=', orgId).execute()).length

  before(async () => {
    s = await startFullStack({
      RENTAL_FILE_MAX_BYTES: String(FILE_MAX),
      RENTAL_ORG_FILES_MAX_BYTES: String(ORG_MAX),
    })
    engagementId = await s.hireAndSign(
      s.alice,
      'job_summary',
      await s.agentOf('job_summary'),
      s.newClientKey(),
    )
    const invited = await s.call(s.alice, 'POST', '/api/org/members', {
      email: 'viewer@files.example',
      role: 'viewer',
    })
    assert.equal(invited.status, 201, invited.text)
    viewer = await s.signInWith('viewer@files.example')
    assert.equal(viewer.me.organization.role, 'viewer')
  })
  after(async () => s.close())

  it('stores a multipart upload and a raw one, lists them and gives each back byte for byte, with its name and type', async () => {
    const text = Buffer.from(
      'Quarterly figures: revenue 1,200,000 AED. Confidential marker ZQX-7781.\n'.repeat(3000),
    )
    const form = new FormData()
    form.append('file', new Blob([text], { type: 'text/plain; charset=utf-8' }), 'figures.txt')
    const sent = await answer(await upload(s.alice, form, undefined))
    assert.equal(sent.status, 201, sent.text)
    const file = sent.body as unknown as FileView
    assert.equal(file.name, 'figures.txt')
    // busboy gives a part's media type without its parameters
    assert.equal(file.content_type, 'text/plain')
    assert.equal(file.size_bytes, text.length)
    assert.equal(file.sha256, sha(text))

    const raw = randomBytes(200_000)
    const arabic = 'تقرير الربع الأول.pdf'
    const rawSent = await answer(
      await upload(s.alice, raw, 'application/pdf', `?name=${encodeURIComponent(arabic)}`),
    )
    assert.equal(rawSent.status, 201, rawSent.text)
    const rawFile = rawSent.body as unknown as FileView
    assert.equal(rawFile.name, arabic)

    const listed = await s.call(s.alice, 'GET', `/api/engagements/${engagementId}/files`)
    assert.equal(listed.status, 200, listed.text)
    const ids = (listed.body.files as FileView[]).map((f) => f.id)
    assert.ok(ids.includes(file.id) && ids.includes(rawFile.id))

    const got = await s.alice.jar.fetch(`${s.rental.url}${file.url}`)
    assert.equal(got.status, 200)
    assert.equal(got.headers.get('content-type'), 'text/plain')
    assert.equal(got.headers.get('content-disposition'), 'attachment; filename="figures.txt"')
    assert.ok(Buffer.from(await got.arrayBuffer()).equals(text))

    const gotRaw = await viewer.jar.fetch(`${s.rental.url}${rawFile.url}`)
    assert.equal(gotRaw.status, 200, 'a viewer reads files')
    assert.equal(gotRaw.headers.get('content-type'), 'application/pdf')
    assert.equal(
      gotRaw.headers.get('content-disposition'),
      `attachment; filename="${'_'.repeat(5)} ${'_'.repeat(5)} ${'_'.repeat(5)}.pdf"; filename*=UTF-8''${encodeURIComponent(arabic)}`,
    )
    assert.ok(Buffer.from(await gotRaw.arrayBuffer()).equals(raw))

    // at rest: chunks of at most 64 KiB (and a tag), none holding the plaintext
    const rows = await chunkRows(file.id)
    assert.equal(rows.length, Math.ceil(text.length / 65536))
    assert.deepEqual(
      rows.map((r) => r.final),
      rows.map((_, i) => i === rows.length - 1),
    )
    for (const row of rows) {
      assert.ok(row.data.length <= 65536 + 16)
      assert.equal(row.data.indexOf('ZQX-7781'), -1, 'the plaintext is not at rest')
      assert.equal(row.data.indexOf('Quarterly'), -1)
    }
    const meta = await fileRow(file.id)
    assert.equal(meta!.sealed_key!.indexOf(Buffer.alloc(0)), 0)
    assert.match(meta!.key_id!, /^k_[0-9a-f]{16}$/)

    // a viewer may not upload; the events and receipts carry the hash and size, never the name
    const refused = await answer(await upload(viewer, Buffer.from('x'), 'text/plain', '?name=x.txt'))
    assert.equal(refused.status, 403, refused.text)
    const receipts = await s.db
      .selectFrom('receipt_outbox')
      .select(['receipt_type', 'envelope'])
      .where('subject', '=', file.id)
      .execute()
    assert.deepEqual(
      receipts.map((r) => r.receipt_type),
      ['file.stored'],
    )
    const data = JSON.stringify(receipts[0]!.envelope)
    assert.ok(data.includes(file.sha256.slice(7)) && !data.includes('figures'))
    const events = await s.db
      .selectFrom('rental_events')
      .select(['type', 'data'])
      .where('type', '=', 'file.stored')
      .execute()
    assert.ok(events.length >= 2 && events.every((e) => !JSON.stringify(e.data).includes('figures')))
  })

  it(`streams a ${BIG / MiB} MiB file up (multipart) and down with the rental’s memory bounded`, async () => {
    // the client runs in a process of its own: this process's memory is the services' (the rental's work)
    const client = async (...args: string[]) =>
      JSON.parse(
        (await run(process.execPath, ['--import', 'tsx', CLIENT, ...args], { maxBuffer: 1 << 20 })).stdout,
      ) as Record<string, unknown>
    const started = Date.now()
    // PGlite keeps the database in this process, so the bytes stored grow it: there the upload's
    // growth is the database's, and only the download is measured
    const onPostgres = Boolean(process.env.DATABASE_URL)
    const up = onPostgres ? memorySampler() : undefined
    const sent = await client(
      'up',
      `${s.rental.url}/api/engagements/${engagementId}/files`,
      s.alice.jar.header(),
      s.alice.csrf,
      String(BIG),
    )
    const upHeld = up?.stop()
    assert.equal(sent.status, 201, String(sent.body))
    const file = JSON.parse(sent.body as string) as FileView
    assert.equal(file.size_bytes, BIG)
    assert.equal(file.sha256, `sha256:${sent.sha256}`)

    const down = memorySampler()
    const got = await client('down', `${s.rental.url}${file.url}`, s.alice.jar.header())
    const downHeld = down.stop()
    assert.equal(got.status, 200)
    assert.equal(got.length, String(BIG))
    assert.equal(got.size, BIG)
    assert.equal(`sha256:${got.sha256}`, file.sha256)
    const mib = (n: number) => (n / MiB).toFixed(1)
    console.log(
      `# ${BIG / MiB} MiB up and down in ${Date.now() - started} ms; most held above the start (after full GCs): up ${upHeld ? `JS ${mib(upHeld.js)} MiB, RSS ${mib(upHeld.rss)} MiB` : 'not measured (PGlite)'}; down JS ${mib(downHeld.js)} MiB, RSS ${mib(downHeld.rss)} MiB`,
    )
    // a buffered file would hold at least its own size (the plaintext), and again its ciphertext
    const measured =
      BIG < MEASURABLE ? {} : upHeld ? { upload: upHeld, download: downHeld } : { download: downHeld }
    // (measured on PostgreSQL: 20 to 32 MiB for either, once 45.9 and once 52.2 MiB on an upload:
    // this process runs every service, and their own churn and buffers not yet swept count too). A
    // buffered file holds at least twice its size (plaintext and ciphertext), so the bound is 1.5 times it
    for (const [what, held] of Object.entries(measured)) {
      assert.ok(held.js < BIG * 1.5, `the ${what} held ${mib(held.js)} MiB of JS heap and buffers`)
      // the resident set also keeps what the allocator has not given back (52.8 MiB seen once on an
      // upload whose JS heap and buffers stayed small): a buffered file would hold the plaintext and
      // its ciphertext, twice its size, so the bound is 1.5 times it
      assert.ok(held.rss < BIG * 1.5, `the ${what} grew the resident set by ${mib(held.rss)} MiB`)
    }
    assert.equal((await chunkRows(file.id)).length, Math.ceil(BIG / 65536))
  })

  it('refuses a tampered chunk: at once when it is the first, by cutting the stream when it is a later one', async () => {
    const plain = randomBytes(5 * 65536 + 100)
    const made = (await answer(await upload(s.alice, plain, 'application/octet-stream', '?name=t.bin')))
      .body as unknown as FileView
    const rows = await chunkRows(made.id)
    const flip = async (idx: number) => {
      const data = Buffer.from(rows[idx]!.data)
      data[10] = data[10]! ^ 1
      await s.db
        .updateTable('rental_file_chunks')
        .set({ data })
        .where('file_id', '=', made.id)
        .where('idx', '=', idx)
        .execute()
    }
    await flip(0)
    const first = await answer(await s.alice.jar.fetch(`${s.rental.url}${made.url}`))
    assert.equal(first.status, 500)
    assert.equal(codeOf(first), 'file_corrupted')
    assert.ok(!first.text.includes(plain.subarray(0, 16).toString('latin1')))

    await s.db
      .updateTable('rental_file_chunks')
      .set({ data: rows[0]!.data })
      .where('file_id', '=', made.id)
      .where('idx', '=', 0)
      .execute()
    await flip(3)
    const later = await s.alice.jar.fetch(`${s.rental.url}${made.url}`)
    assert.equal(later.status, 200)
    let received = 0
    await assert.rejects(async () => {
      for await (const piece of later.body as unknown as AsyncIterable<Uint8Array>) received += piece.length
    })
    assert.ok(received <= 3 * 65536, `only verified chunks were sent (${received} bytes)`)

    // dropping the last chunk (truncation) or marking an earlier one final is caught too
    await s.db
      .updateTable('rental_file_chunks')
      .set({ data: rows[3]!.data })
      .where('file_id', '=', made.id)
      .where('idx', '=', 3)
      .execute()
    await s.db.deleteFrom('rental_file_chunks').where('file_id', '=', made.id).where('idx', '=', 5).execute()
    await s.db
      .updateTable('rental_file_chunks')
      .set({ final: true })
      .where('file_id', '=', made.id)
      .where('idx', '=', 4)
      .execute()
    const cut = await s.alice.jar.fetch(`${s.rental.url}${made.url}`)
    await assert.rejects(async () => {
      for await (const _ of cut.body as unknown as AsyncIterable<Uint8Array>);
    })
  })

  it('answers 413 past the organization’s room or one file’s limit, and leaves nothing behind', async () => {
    const orgId = s.alice.me.organization.id
    const countOf = async (table: 'rental_files' | 'rental_file_chunks') =>
      Number(
        (
          await s.db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      )
    const files = await countOf('rental_files')
    const chunks = await countOf('rental_file_chunks')
    // the organization has less than 3 MiB left after the big file: refused on its declared length
    const declared = await answer(
      await upload(s.alice, Buffer.alloc(3 * MiB + 1, 1), 'application/octet-stream', '?name=more.bin'),
    )
    assert.equal(declared.status, 413, declared.text)
    assert.equal(codeOf(declared), 'payload_too_large')
    // a multipart part has no length of its own: refused once the bytes pass the room left
    const body = multipartStream('more.bin', 'text/plain', bytesStream(3 * MiB + 1, createHash('sha256')))
    const streamed = await answer(await upload(s.alice, body.stream, body.type))
    assert.equal(streamed.status, 413, streamed.text)
    assert.match(String((streamed.body.error as { message: string }).message), /left/)
    // bob's organization is empty: one file's limit, refused at the headers (the body never sent)
    const bobEngagement = await s.hireAndSign(
      s.bob,
      'job_summary',
      await s.agentOf('job_summary'),
      s.newClientKey(),
    )
    const early = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest(`${s.rental.url}/api/engagements/${bobEngagement}/files?name=huge.bin`, {
        method: 'POST',
        headers: {
          cookie: s.bob.jar.header(),
          'x-csrf-token': s.bob.csrf,
          'content-type': 'application/octet-stream',
          'content-length': String(FILE_MAX + 1),
        },
      })
      req.on('response', (res) => {
        let text = ''
        res.on('data', (d: Buffer) => (text += d.toString()))
        res.on('end', () => {
          req.destroy()
          resolve({ status: res.statusCode!, text })
        })
      })
      req.on('error', reject)
      req.write(Buffer.alloc(1024))
    })
    assert.equal(early.status, 413, early.text)
    assert.match(early.text, /payload_too_large/)
    assert.equal(await countOf('rental_files'), files)
    assert.equal(await countOf('rental_file_chunks'), chunks)
    assert.equal(await orgFiles(s.bob.me.organization.id), 0)
    assert.ok(orgId)
  })

  it('refuses names with path separators or control characters, a missing name or type, and a broken multipart body', async () => {
    for (const name of [
      '../etc/passwd',
      'a\\b.txt',
      'bell\u0007.txt',
      'evil\u202etxt.exe',
      '..',
      ' ',
      'x'.repeat(256),
    ]) {
      const res = await answer(
        await upload(s.alice, Buffer.from('x'), 'text/plain', `?name=${encodeURIComponent(name)}`),
      )
      assert.equal(res.status, 400, `${JSON.stringify(name)}: ${res.text}`)
      assert.ok(['invalid_file_name', 'invalid_request'].includes(codeOf(res)!), res.text)
    }
    const form = new FormData()
    form.append('file', new Blob(['x'], { type: 'text/plain' }), 'dir/inner.txt')
    assert.equal(codeOf(await answer(await upload(s.alice, form, undefined))), 'invalid_file_name')
    assert.equal(
      codeOf(await answer(await upload(s.alice, Buffer.from('x'), 'text/plain'))),
      'invalid_file_name',
    )
    assert.equal(
      codeOf(await answer(await upload(s.alice, Buffer.from('x'), 'not a type', '?name=x.txt'))),
      'unsupported_media_type',
    )
    const broken = await answer(
      await upload(
        s.alice,
        '--b\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nabc',
        'multipart/form-data; boundary=b',
      ),
    )
    assert.equal(broken.status, 400, broken.text)
    const noFile = await answer(
      await upload(
        s.alice,
        '--b\r\nContent-Disposition: form-data; name="x"\r\n\r\n1\r\n--b--\r\n',
        'multipart/form-data; boundary=b',
      ),
    )
    assert.equal(noFile.status, 400, noFile.text)
    assert.equal(
      await s.db
        .selectFrom('rental_files')
        .select('id')
        .where('state', '=', 'uploading')
        .execute()
        .then((r) => r.length),
      0,
    )
  })

  it('keeps another organization out (404) and deletes by destroying the sealed key and the bytes', async () => {
    const made = (
      await answer(await upload(s.alice, Buffer.from('to be shredded'), 'text/plain', '?name=s.txt'))
    ).body as unknown as FileView
    assert.equal((await s.call(s.bob, 'GET', made.url)).status, 404)
    assert.equal(codeOf(await s.call(s.bob, 'DELETE', made.url)), 'file_not_found')
    assert.equal(
      codeOf(await s.call(s.bob, 'GET', `/api/engagements/${engagementId}/files`)),
      'engagement_not_found',
    )
    assert.equal(
      (await answer(await upload(s.bob, Buffer.from('x'), 'text/plain', '?name=x.txt'))).status,
      404,
    )
    assert.equal((await s.call(viewer, 'DELETE', made.url)).status, 403)

    const deleted = await s.call(s.alice, 'DELETE', made.url)
    assert.equal(deleted.status, 204, deleted.text)
    assert.equal(codeOf(await s.call(s.alice, 'GET', made.url)), 'file_not_found')
    assert.equal(codeOf(await s.call(s.alice, 'DELETE', made.url)), 'file_not_found')
    const row = await fileRow(made.id)
    assert.equal(row!.state, 'deleted')
    assert.equal(row!.sealed_key, null, 'the data key is gone')
    assert.equal(row!.name, null)
    assert.equal((await chunkRows(made.id)).length, 0)
    const receipts = await s.db
      .selectFrom('receipt_outbox')
      .select('receipt_type')
      .where('subject', '=', made.id)
      .orderBy('receipt_type')
      .execute()
    assert.deepEqual(
      receipts.map((r) => r.receipt_type),
      ['file.deleted', 'file.stored'],
    )
  })

  it('rotates the service key: data keys sealed again under the new key open the same chunks, which are not rewritten', async () => {
    const plain = Buffer.from('rotation keeps this readable')
    const made = (await answer(await upload(s.alice, plain, 'text/plain', '?name=r.txt')))
      .body as unknown as FileView
    const chunkBefore = (await chunkRows(made.id))[0]!
    const oldKey = s.rental.ctx.config.encryptionKey
    const newKey = randomBytes(32)
    const rotated = new KeyRing(newKey, [oldKey])
    assert.ok((await rewrapDataKeys(s.db, rotated)).moved >= 1)
    const row = (await fileRow(made.id))!
    assert.equal(row.key_id, rotated.currentId)
    assert.notEqual(rotated.currentId, keyIdOf(oldKey))
    const dataKey = rotated.open(row.key_id!, row.sealed_key!, made.id)
    const chunk = (await chunkRows(made.id))[0]!
    assert.ok(chunk.data.equals(chunkBefore.data), 'the chunks are not re-encrypted')
    assert.ok(openChunk(dataKey, made.id, 0, true, chunk.data).equals(plain))
    assert.throws(() => new KeyRing(oldKey).open(row.key_id!, row.sealed_key!, made.id), /not configured/)
    // and back, so the running rental (on the old key) reads its files again
    await rewrapDataKeys(s.db, new KeyRing(oldKey, [newKey]))
    const back = await s.alice.jar.fetch(`${s.rental.url}${made.url}`)
    assert.ok(Buffer.from(await back.arrayBuffer()).equals(plain))
  })
})
