import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { embeddedV4, isMetadataAddress, isPrivateAddress } from './addresses.ts'
import { checkPublicUrl, PublicUrlError } from './public-fetch.ts'

/** [address, private (never reached unless allowed), metadata (never reached at all)] */
const TABLE: Array<[string, boolean, boolean]> = [
  // IPv4
  ['127.0.0.1', true, false],
  ['127.1', true, false],
  ['0177.0.0.1', true, false],
  ['0x7f.0.0.1', true, false],
  ['2130706433', true, false],
  ['10.0.0.1', true, false],
  ['172.31.255.255', true, false],
  ['192.168.0.1', true, false],
  ['100.64.0.1', true, false],
  ['0.0.0.0', true, false],
  ['224.0.0.1', true, false],
  ['255.255.255.255', true, false],
  ['169.254.169.254', true, true],
  ['169.254.0.1', true, true],
  ['100.100.100.200', true, true],
  ['192.0.0.192', true, true],
  // IPv6
  ['::1', true, false],
  ['[::1]', true, false],
  ['0:0:0:0:0:0:0:1', true, false],
  ['::', true, false],
  ['fd00::1', true, false],
  ['[fd00::1]', true, false],
  ['FC00::1', true, false],
  ['fe80::1', true, true],
  ['fe80::1%eth0', true, true],
  ['fd00:ec2::254', true, true],
  ['FD00:EC2:0::254', true, true],
  ['2001:db8::1', true, false],
  ['ff02::1', true, false],
  // IPv4-mapped, dotted and hex, uppercase, leading zeros
  ['::ffff:127.0.0.1', true, false],
  ['[::ffff:7f00:1]', true, false],
  ['::FFFF:7F00:0001', true, false],
  ['0:0:0:0:0:ffff:10.0.0.1', true, false],
  ['::ffff:169.254.169.254', true, true],
  // IPv4-translated and IPv4-compatible
  ['::ffff:0:127.0.0.1', true, false],
  ['[::127.0.0.1]', true, false],
  ['::7f00:1', true, false],
  ['::a9fe:a9fe', true, true],
  // NAT64 (RFC 6052 well-known, and RFC 8215 local use, all of it)
  ['64:ff9b::10.0.0.1', true, false],
  ['64:ff9b::a00:1', true, false],
  ['64:ff9b::169.254.169.254', true, true],
  ['64:ff9b:1::8.8.8.8', true, false],
  // 6to4: the IPv4 address is bits 16-47
  ['2002:7f00:1::', true, false],
  ['2002:a9fe:a9fe::1', true, true],
  ['2002:c0a8:101::1', true, false],
  // Teredo: the client is the inverted low 32 bits (and the server is bits 32-63)
  ['2001:0:4136:e378:8000:63bf:80ff:fffe', true, false],
  ['2001:0:0808:0808::f5ff:fffe', true, false],
  // public ones that must pass
  ['8.8.8.8', false, false],
  ['93.184.215.14', false, false],
  ['1.1.1.1', false, false],
  ['2606:4700:4700::1111', false, false],
  ['2a00:1450:4001:81b::200e', false, false],
  ['::ffff:8.8.8.8', false, false],
  ['64:ff9b::8.8.8.8', false, false],
  ['2002:808:808::1', false, false],
  ['2001:0:808:808::f7f7:f7f7', false, false],
  // names are not addresses
  ['localhost', false, false],
  ['example.com', false, false],
]

describe('kit: which addresses a caller-given URL may reach', () => {
  for (const [address, isPrivate, isMetadata] of TABLE)
    it(`${address}: ${isMetadata ? 'metadata' : isPrivate ? 'private' : 'public'}`, () => {
      assert.equal(isPrivateAddress(address), isPrivate, `isPrivateAddress(${address})`)
      assert.equal(isMetadataAddress(address), isMetadata, `isMetadataAddress(${address})`)
    })

  it('reads the IPv4 address an IPv6 one carries, in every form', () => {
    assert.deepEqual(embeddedV4('[::127.0.0.1]'), ['127.0.0.1'])
    assert.deepEqual(embeddedV4('::FFFF:7F00:1'), ['127.0.0.1'])
    assert.deepEqual(embeddedV4('64:ff9b::a9fe:a9fe'), ['169.254.169.254'])
    assert.deepEqual(embeddedV4('2002:0a00:0001::'), ['10.0.0.1'])
    assert.deepEqual(embeddedV4('2001:0:4136:e378:8000:63bf:80ff:fffe'), ['65.54.227.120', '127.0.0.1'])
    assert.deepEqual(embeddedV4('2606:4700:4700::1111'), [])
    assert.deepEqual(embeddedV4('8.8.8.8'), [])
  })

  it('refuses a metadata address even where private addresses are allowed, at the check', async () => {
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'https://[fd00:ec2::254]/latest',
      'http://100.100.100.200/latest',
      'https://[::ffff:169.254.169.254]/',
      'https://[64:ff9b::a9fe:a9fe]/',
      'https://[2002:a9fe:a9fe::]/',
    ])
      await assert.rejects(
        checkPublicUrl(url, { allowPrivate: true }),
        (err: Error) => err instanceof PublicUrlError && /cloud metadata/.test(err.message),
        url,
      )
    // private ones pass then, but plain http only to a private address
    assert.ok(await checkPublicUrl('http://127.0.0.1:8080/x', { allowPrivate: true }))
    assert.ok(await checkPublicUrl('https://10.0.0.1/x', { allowPrivate: true }))
    await assert.rejects(checkPublicUrl('http://8.8.8.8/x', { allowPrivate: true }), /must be https/)
  })

  it('refuses every embedded private form in a URL when private addresses are not allowed', async () => {
    for (const host of [
      '[::127.0.0.1]',
      '[::ffff:7f00:1]',
      '[64:ff9b::10.0.0.1]',
      '[64:ff9b:1::a00:1]',
      '[2002:7f00:1::1]',
      '[2001:0:4136:e378:8000:63bf:80ff:fffe]',
      '[fd00::1]',
      '10.0.0.1',
      '0x7f.1',
    ])
      await assert.rejects(
        checkPublicUrl(`https://${host}/x`, { allowPrivate: false }),
        /not a public address/,
        host,
      )
    assert.ok(await checkPublicUrl('https://[2002:808:808::1]/x', { allowPrivate: false }))
  })
})
