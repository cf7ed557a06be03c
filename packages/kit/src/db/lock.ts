import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs'
import { ConfigError } from '../errors.ts'
import { alive } from '../process.ts'

/**
 * Claims a data directory for this process with a lock file beside it. A second process gets a
 * clear error naming the holder; a lock left by a process that died is taken over.
 */
export function lockDataDir(dataDir: string): () => void {
  const path = `${dataDir}.lock`
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx')
      writeSync(fd, String(process.pid))
      closeSync(fd)
      const release = () => {
        try {
          if (readFileSync(path, 'utf8') === String(process.pid)) unlinkSync(path)
        } catch {}
        process.off('exit', release)
      }
      process.on('exit', release)
      return release
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      const holder = Number(readFileSync(path, 'utf8'))
      if (Number.isInteger(holder) && holder > 0 && alive(holder))
        throw new ConfigError(
          `the embedded database in ${dataDir} is in use by process ${holder}: stop that process, or give this one another DATA_DIR`,
        )
      unlinkSync(path)
    }
  }
  throw new ConfigError(`could not lock ${dataDir}`)
}
