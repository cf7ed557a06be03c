/**
 * `svc key show | backup FILE | restore FILE`: the client's signing key (key.json, encrypted under its
 * passphrase). A backup is the web console's file (`svc-rental-client-key/v1`): it restores in the
 * console's key panel too, and the console's backups restore here.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { ClientKey, SvcError } from '@svc/client'
import type { Command } from 'commander'
import { type Cli, usage } from '../cli.ts'
import { askPassphrase } from '../ui.ts'

/** The backup file's passphrase: SVC_BACKUP_PASSPHRASE, else the key's own (SVC_KEY_PASSPHRASE or asked). */
async function backupPassphrase(cli: Cli, purpose: 'open' | 'new'): Promise<string> {
  if (process.env.SVC_BACKUP_PASSPHRASE) return process.env.SVC_BACKUP_PASSPHRASE
  const profile = await cli.profile()
  if (process.env.SVC_KEY_PASSPHRASE || !profile.interactive) return profile.keyPassphrase(purpose)
  return askPassphrase(purpose === 'open' ? 'Passphrase of the backup' : 'Passphrase of your signing key')
}

export function keyCommands(program: Command, cli: Cli) {
  const key = program.command('key').description('your signing key: the did:key engagements are bound to')

  key
    .command('show')
    .description('the signing key’s did:key (no passphrase needed)')
    .action(async () => {
      const profile = await cli.profile()
      const did = await profile.keyDid()
      cli.out({ did: did ?? null, file: `${profile.home}/key.json` }, () =>
        did
          ? [`Your signing key: ${did}`, `kept encrypted in ${profile.home}/key.json`]
          : 'No signing key yet: one is made the first time you hire (or restore one: `svc key restore FILE`).',
      )
    })

  key
    .command('backup')
    .description('write the key to FILE, encrypted (the console’s backup format)')
    .argument('<file>', 'where to write the backup')
    .option('--force', 'replace FILE if it exists')
    .action(async (file: string, options: { force?: boolean }) => {
      const profile = await cli.profile()
      if (!(await profile.keyDid())) throw usage('There is no signing key to back up yet.')
      const clientKey = await profile.key()
      const text = await clientKey.backup(await backupPassphrase(cli, 'open'))
      try {
        await writeFile(file, `${text}\n`, { mode: 0o600, flag: options.force ? 'w' : 'wx' })
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST')
          throw usage(`${file} exists already (--force replaces it).`)
        throw err
      }
      cli.out({ did: clientKey.did, file }, () => [
        `Backed up ${clientKey.did} to ${file}.`,
        'It restores with `svc key restore` or in the web console’s key panel, with its passphrase.',
      ])
    })

  key
    .command('restore')
    .description('take the key of a backup FILE (made here or in the web console)')
    .argument('<file>', 'the backup file')
    .option('--force', 'replace a different key kept here')
    .action(async (file: string, options: { force?: boolean }) => {
      const profile = await cli.profile()
      const text = await readFile(file, 'utf8')
      let restored: ClientKey
      try {
        restored = await ClientKey.restore(text, await backupPassphrase(cli, 'open'))
      } catch (err) {
        if (err instanceof SvcError && err.is('backup_passphrase'))
          throw new SvcError('backup_passphrase', 0, `the passphrase does not open ${file}`)
        throw err
      }
      const kept = await profile.keyDid()
      if (kept && kept !== restored.did && !options.force)
        throw usage(
          `This would replace your signing key ${kept}; the engagements signed with it need it (--force replaces it, back it up first).`,
        )
      await profile.saveKey(restored, await profile.keyPassphrase('new'))
      cli.out({ did: restored.did, file: `${profile.home}/key.json` }, () => `Restored ${restored.did}.`)
    })
}
