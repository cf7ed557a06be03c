/** `svc login`, `svc logout`, `svc whoami`: the sign-in kept in SVC_HOME. */
import { spawn } from 'node:child_process'
import type { DeviceCode } from '@svc/client'
import type { Command } from 'commander'
import QRCode from 'qrcode'
import type { Cli } from '../cli.ts'
import { short } from '../format.ts'
import { note, startSpinner } from '../ui.ts'

/** Opens `url` in the person's browser; nothing happens when there is none. */
function openBrowser(url: string) {
  const [command, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '', url]]
        : ['xdg-open', [url]]
  try {
    const child = spawn(command, args as string[], { stdio: 'ignore', detached: true })
    child.on('error', () => {})
    child.unref()
  } catch {
    // no browser here: the URL and the code are on the screen
  }
}

async function showCode(code: DeviceCode, browser: boolean) {
  const url = code.verification_uri_complete ?? code.verification_uri
  const qr = await QRCode.toString(url, { type: 'terminal', small: true })
  note('')
  note(`Open ${code.verification_uri} and enter the code ${code.user_code}`)
  note(`(or go straight to ${url}, or scan:)`)
  note(qr)
  note(`The code works for ${Math.round(code.expires_in / 60)} minutes.`)
  if (browser) openBrowser(url)
}

export function accountCommands(program: Command, cli: Cli) {
  program
    .command('login')
    .description('sign in through the identity provider (device code; opens your browser)')
    .option('--no-browser', 'only show the address and the code, do not open a browser')
    .action(async (options: { browser: boolean }) => {
      const profile = await cli.profile()
      let spin: ReturnType<typeof startSpinner> | undefined
      let person
      try {
        person = await profile.signIn(async (code) => {
          await showCode(code, options.browser)
          spin = startSpinner('Waiting for you to allow this device in your browser…')
        })
      } catch (err) {
        spin?.error((err as Error).message)
        throw err
      }
      spin?.stop('Allowed.')
      const did = await profile.keyDid()
      cli.out({ signed_in: true, person, urls: profile.urls, key_did: did ?? null }, () => [
        `Signed in as ${person.email ?? person.subject} at ${profile.urls.rental}.`,
        did
          ? `Your signing key: ${short(did)}`
          : 'A signing key is made the first time you hire (`svc key show`).',
      ])
    })

  program
    .command('logout')
    .description('sign out: the tokens are revoked at the identity provider and forgotten here')
    .action(async () => {
      const profile = await cli.profile()
      const was = profile.signedIn
      const { revoked } = await profile.signOut()
      cli.out({ signed_out: was, revoked }, () =>
        was
          ? `Signed out${revoked ? '' : ' here (the identity provider could not be reached to revoke the tokens)'}.`
          : 'You were not signed in.',
      )
    })

  program
    .command('whoami')
    .description('who is signed in, for which organization, and with which key')
    .action(async () => {
      const profile = await cli.profile()
      const me = await profile.client.me()
      const did = await profile.keyDid()
      const email = me.client.email ?? profile.person?.email ?? null
      cli.out(
        {
          subject: me.client.subject,
          email,
          name: me.client.name ?? profile.person?.name ?? null,
          organization: { id: me.organization.id, role: me.organization.role },
          key_did: did ?? null,
          urls: profile.urls,
        },
        () => [
          `${me.client.name ?? email ?? 'Signed in'}, ${me.organization.role} of your organization (${me.organization.id})`,
          `Rental: ${profile.urls.rental}  Identity provider: ${profile.urls.idp}`,
          did ? `Signing key: ${did}` : 'No signing key yet (made the first time you hire).',
        ],
      )
    })
}
